//! The stop checkpoint (seed 000): when the agent ends its turn, tell it exactly what to
//! verify, based on what changed; on the second stop, insist on a commit.
//!
//! [`StopCheckpoint::evaluate`] lists the uncommitted changes with git, sorts them into the
//! configured categories, runs the tests when a triggering file changed, and blocks the stop
//! with a message. A turn that changed nothing since the last checkpoint passes at once. On
//! the second stop (`stop_hook_active`) only the commit gate applies. Without git, or outside
//! a repository, it passes and says why.

mod categorize;
mod changes;
mod config;
mod console_runner;
mod detect;
mod gate;
mod message;
mod report;
mod runner;
mod state;
mod test_output;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use cp_base::{Project, WorkerId};

pub use categorize::CategorizedFile;
pub use changes::{ChangedFile, FileStatus};
pub use config::{
    CONFIG_KEY, CheckpointConfig, CheckpointRule, DEFAULT_TEST_TIMEOUT_SECS, TestConfig,
};
pub use console_runner::{ConsoleTestRunner, TEST_SESSION_LABEL};
pub use report::{CategoryFiles, CheckpointReport, StopPhase, TestOutcome};
pub use runner::{ProcessGroupRunner, TestExit, TestRun, TestRunner, TestSpec};
pub use test_output::{TestFramework, TestSummary, parse_test_output};

use crate::error::CheckpointError;
use categorize::Categorizer;
pub(crate) use changes::Git;
pub(crate) use changes::GitError;
use detect::detect_test_command;
use state::{CheckpointState, StateFile, fingerprint, fingerprint_files};

/// Lines of test output shown when tests fail.
pub const TEST_TAIL_LINES: usize = 30;

/// Name of the per-worker state file under `.context-pilot/state/<worker>/`.
pub const STATE_FILE: &str = "checkpoint.json";

/// What the stop hook knows when the agent stops.
#[derive(Debug, Clone)]
pub struct StopInput {
    /// The project (its root may be a subdirectory of the git work tree).
    pub project: Project,
    /// The worker (agent session) stopping; state is kept per worker.
    pub worker: WorkerId,
    /// True when this stop follows a blocked stop (Claude's `stop_hook_active`).
    pub stop_hook_active: bool,
}

/// Whether the agent may stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Keep the agent going and give it `reason` (Claude: `{"decision":"block","reason":…}`;
    /// Gemini: the retry prompt).
    Block {
        /// The checkpoint message.
        reason: String,
    },
    /// Let the agent stop.
    Pass,
}

/// The decision and everything behind it.
#[derive(Debug, Clone)]
pub struct StopOutcome {
    /// Block or pass.
    pub decision: Decision,
    /// Structured data for the Checkpoint panel.
    pub report: CheckpointReport,
}

/// The configured stop checkpoint.
pub struct StopCheckpoint {
    config: CheckpointConfig,
    categorizer: Categorizer,
    runner: Arc<dyn TestRunner>,
    git: Git,
}

impl std::fmt::Debug for StopCheckpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopCheckpoint")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl StopCheckpoint {
    /// Validates and compiles `config`. Tests run with [`ProcessGroupRunner`] until
    /// [`StopCheckpoint::with_runner`] gives another; [`StopCheckpoint::for_project`] uses
    /// the project's console server.
    pub fn new(config: CheckpointConfig) -> Result<Self, CheckpointError> {
        if let Some(tests) = &config.tests
            && tests.timeout_secs == 0
        {
            return Err(CheckpointError::InvalidConfig(
                "tests.timeout_secs is 0; give the limit in seconds, e.g. 30".into(),
            ));
        }
        let categorizer = Categorizer::new(&config)?;
        Ok(Self {
            config,
            categorizer,
            runner: Arc::new(ProcessGroupRunner::default()),
            git: Git { path_env: None },
        })
    }

    /// Loads the `"checkpoint"` section of the project's `config.json` (default if absent).
    /// Tests run as a session of the project's console server ([`ConsoleTestRunner`]).
    pub fn for_project(project: &Project) -> Result<Self, CheckpointError> {
        let checkpoint = Self::new(CheckpointConfig::load(project)?)?;
        Ok(match ConsoleTestRunner::for_project(project.root()) {
            Ok(runner) => checkpoint.with_runner(Arc::new(runner)),
            Err(e) => {
                // Only a project root that cannot be opened gets here; git fails on it too,
                // and the checkpoint fails open with that reason.
                tracing::warn!("stop checkpoint: no console client ({e}); tests run directly");
                checkpoint
            }
        })
    }

    /// Runs tests with `runner` instead, e.g. one backed by a console session.
    #[must_use]
    pub fn with_runner(mut self, runner: Arc<dyn TestRunner>) -> Self {
        self.runner = runner;
        self
    }

    /// Uses `path` as `PATH` for git and the test command.
    #[must_use]
    pub fn with_path_env(mut self, path: impl Into<OsString>) -> Self {
        self.git.path_env = Some(path.into());
        self
    }

    /// The configuration in use.
    pub fn config(&self) -> &CheckpointConfig {
        &self.config
    }

    /// The last report saved for `worker`, for a panel opened after the hook ran.
    pub fn last_report(project: &Project, worker: &WorkerId) -> Option<CheckpointReport> {
        StateFile::new(project.state_dir(worker).join(STATE_FILE))
            .load()
            .and_then(|s| s.last_report)
    }

    /// Decides whether the agent may stop. Never fails: when git is missing or the project
    /// is not a repository, it passes and `report.skipped` says why.
    pub fn evaluate(&self, input: &StopInput) -> StopOutcome {
        let phase = if input.stop_hook_active {
            StopPhase::Second
        } else {
            StopPhase::First
        };
        let mut report = CheckpointReport::new(phase);
        let root = input.project.root();
        let listed = self
            .git
            .repo_root(root)
            .and_then(|repo| Ok((self.git.changed_files(&repo)?, repo)));
        let (files, repo) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(project = %root.display(), "stop checkpoint fails open: {e}");
                report.skipped = Some(e.to_string());
                return StopOutcome {
                    decision: Decision::Pass,
                    report,
                };
            }
        };
        report.repo_root = Some(repo.clone());
        let files = self.categorizer.categorize(files);
        let mut current = fingerprint(&repo, &files);
        report.set_files(files, &self.categorizer);

        let state = StateFile::new(input.project.state_dir(&input.worker).join(STATE_FILE));
        let previous = state.load().map(|s| s.fingerprint);

        let decision = if input.stop_hook_active {
            if report.uncommitted_gated.is_empty() {
                Decision::Pass
            } else {
                Decision::Block {
                    reason: gate::gate_message(&report.uncommitted_gated),
                }
            }
        } else if report.files.is_empty() {
            Decision::Pass
        } else if previous.as_deref() == Some(current.as_str()) {
            report.unchanged = true;
            Decision::Pass
        } else {
            if report.code_changed {
                self.run_tests(input, &repo, &mut report);
                if report.tests.is_some() {
                    // Tests may touch tracked files (lock files, snapshots); those are not
                    // the agent's changes, so remember the tree as it is after the run.
                    if let Ok(after) = self.git.changed_files(&repo) {
                        current = fingerprint_files(&repo, after.iter());
                    }
                }
            }
            Decision::Block {
                reason: message::compose(&report, &self.config.capture_only_message),
            }
        };
        if let Decision::Block { reason } = &decision {
            report.message = Some(reason.clone());
        }
        state.save(&CheckpointState {
            fingerprint: current,
            last_report: Some(report.clone()),
        });
        StopOutcome { decision, report }
    }

    fn run_tests(&self, input: &StopInput, repo: &std::path::Path, report: &mut CheckpointReport) {
        if !report.files.iter().any(|f| f.triggers_tests) {
            return;
        }
        let (command, cwd, timeout_secs) = match &self.config.tests {
            Some(tests) if tests.command.trim().is_empty() => return,
            // A configured command is the repository's code: it runs only in a trusted
            // project. Detected commands (`cargo test`, …) are the project's own build.
            Some(_) if !input.project.is_trusted() => {
                report.tests_note = Some(
                    "configured test command not run: this project is not trusted \
                     (run `context-pilot trust --show`, then `context-pilot trust`)"
                        .into(),
                );
                return;
            }
            Some(tests) => (
                tests.command.clone(),
                input.project.root().to_path_buf(),
                tests.timeout_secs,
            ),
            None => {
                let Some(found) = detect_test_command(&[input.project.root(), repo]) else {
                    report.tests_note = Some(
                        "no test command configured in .context-pilot/config.json \
                         (checkpoint.tests.command) and none detected"
                            .into(),
                    );
                    return;
                };
                (
                    found.command.to_owned(),
                    found.dir,
                    DEFAULT_TEST_TIMEOUT_SECS,
                )
            }
        };
        let spec = TestSpec {
            command: command.clone(),
            cwd,
            timeout: Duration::from_secs(timeout_secs),
            env: self
                .git
                .path_env
                .iter()
                .map(|p| (OsString::from("PATH"), p.clone()))
                .collect(),
        };
        tracing::info!(command = %command, "stop checkpoint: running tests");
        let outcome = match self.runner.run(&spec) {
            Ok(run) => {
                let passed = run.exit.success();
                let tail = if passed {
                    Vec::new()
                } else {
                    let clean = test_output::strip_ansi(&run.output);
                    let lines: Vec<&str> = clean.lines().collect();
                    lines[lines.len().saturating_sub(TEST_TAIL_LINES)..]
                        .iter()
                        .map(|l| (*l).to_owned())
                        .collect()
                };
                TestOutcome {
                    command,
                    passed,
                    summary: parse_test_output(&run.output),
                    exit: Some(run.exit),
                    error: None,
                    elapsed_ms: u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX),
                    tail,
                    note: run.note,
                }
            }
            Err(e) => TestOutcome {
                command,
                passed: false,
                exit: None,
                error: Some(e.to_string()),
                summary: None,
                elapsed_ms: 0,
                tail: Vec::new(),
                note: None,
            },
        };
        report.tests = Some(outcome);
    }
}
