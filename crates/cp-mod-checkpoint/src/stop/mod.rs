//! The stop gate: when the agent ends its turn, tell it exactly what to
//! verify, based on what changed; on the following stops, insist on a commit and green tests.
//!
//! [`StopGate::evaluate`] takes the session's work from git: what it committed since it began
//! ([`StopInput::base`], recorded per session by [`SessionStarts`] for agents behind hooks) and
//! what is uncommitted. It sorts both into the configured categories, runs the tests when a
//! triggering file is among them or the last run failed, and blocks the stop with a message
//! that lists what was committed and what was not. Only uncommitted files are asked to be
//! committed; work committed with green tests passes at once. A turn that changed nothing since
//! the last stop gate passes at once. Blocks are counted per agent session in the worker's
//! state file (never from the agent's `stop_hook_active`); after `max_blocks` in a row the
//! agent may stop and the person is told what is left. Without git, or outside a repository, it
//! passes and says why.

mod categorize;
mod commit_message;
mod config;
mod console_runner;
mod detect;
mod durations;
mod fingerprint;
mod gate;
mod gate_files;
mod listing;
mod message;
mod project_gate;
mod report;
mod runner;
mod session_start;
mod state;
mod stop_run;
mod test_output;
mod testing;
mod tree;
mod warm;

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use cp_base::{CancelToken, Project, WorkerId};
use cp_git::{ChangedFile, Git};
use cp_orchestrate::{Decision, StopInput};

pub use categorize::CategorizedFile;
pub use commit_message::suggest_commit_message;
pub use config::{
    CONFIG_KEY, DEFAULT_MAX_BLOCKS, DEFAULT_TEST_TIMEOUT_SECS, DEFAULT_WARM_QUIET_MS,
    MAX_LEARNED_TIMEOUT_SECS, StopGateConfig, StopRule, TestConfig, WarmConfig,
};
pub use console_runner::{ConsoleTestRunner, TEST_SESSION_LABEL};
pub use project_gate::ProjectStopGate;
pub use report::{
    CategoryFiles, ExistingFailures, StopPhase, StopReport, TestOutcome, TestVerdict,
};
pub use runner::{ProcessGroupRunner, TestExit, TestRun, TestRunner, TestSpec};
pub use session_start::{SESSIONS_FILE, SessionStarts};
pub use test_output::{MissingTool, RunnerCounts, TestFramework, TestSummary, parse_test_output};
pub use testing::{NoPlannedTests, PlannedTests};
pub use tree::TreeTests;
pub use warm::{
    WARM_LABEL, WARM_SUBCOMMAND, WarmLauncher, WarmNews, WarmPhase, WarmRun, WarmUse, base_run,
    cancel_warm_run, current_warm_run, warm_record_path, warm_run,
};

use crate::error::CheckpointError;
use categorize::Categorizer;
use fingerprint::{fingerprint_files, fingerprint_while};
use gate_files::GateFiles;
pub(crate) use message::failure_reason;
#[cfg(feature = "draw")]
pub(crate) use message::{headline, tests_label};
use state::{LastTests, StateFile};

/// Lines of test output shown when tests fail.
pub const TEST_TAIL_LINES: usize = 30;

/// Name of the per-worker state file under `.context-pilot/state/<worker>/`.
pub const STATE_FILE: &str = "checkpoint.json";

/// The decision and everything behind it.
#[derive(Debug, Clone)]
pub struct StopOutcome {
    /// Block or pass.
    pub decision: Decision,
    /// Structured data for the Checkpoint panel.
    pub report: StopReport,
    /// For the person, not the agent: set when the block limit let the agent stop with
    /// work left (uncommitted files, red tests; the same text as `report.gave_up`), or when
    /// git refuses the repository and the gate is off.
    pub notice: Option<String>,
}

/// The configured stop gate.
pub struct StopGate {
    config: StopGateConfig,
    categorizer: Categorizer,
    runner: Arc<dyn TestRunner>,
    git: Git,
    /// The turn's cancel flag (Esc in the TUI): a test run in progress is killed.
    cancel: CancelToken,
}

impl std::fmt::Debug for StopGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopGate")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl StopGate {
    /// Validates and compiles `config`. Tests run with [`ProcessGroupRunner`] until
    /// [`StopGate::with_runner`] gives another; [`StopGate::for_project`] uses
    /// the project's console server.
    pub fn new(config: StopGateConfig) -> Result<Self, CheckpointError> {
        config.validate()?;
        let categorizer = Categorizer::new(&config)?;
        Ok(Self {
            config,
            categorizer,
            runner: Arc::new(ProcessGroupRunner::default()),
            git: Git { path_env: None },
            cancel: CancelToken::new(),
        })
    }

    /// Loads the `"checkpoint"` section of the project's `config.json` (default if absent).
    /// Tests run as a console of the project's console server ([`ConsoleTestRunner`]).
    pub fn for_project(project: &Project) -> Result<Self, CheckpointError> {
        let checkpoint = Self::new(StopGateConfig::load(project)?)?;
        Ok(match ConsoleTestRunner::for_project(project.root()) {
            Ok(runner) => checkpoint.with_runner(Arc::new(runner)),
            Err(e) => {
                // Only a project root that cannot be opened gets here; git fails on it too,
                // and the stop gate fails open with that reason.
                tracing::warn!("stop gate: no console client ({e}); tests run directly");
                checkpoint
            }
        })
    }

    /// Runs tests with `runner` instead, e.g. one backed by a console.
    #[must_use]
    pub fn with_runner(mut self, runner: Arc<dyn TestRunner>) -> Self {
        self.runner = runner;
        self
    }

    /// Lets `cancel` (the turn's Esc) kill a test run in progress.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Uses `path` as `PATH` for git and the test command.
    #[must_use]
    pub fn with_path_env(mut self, path: impl Into<OsString>) -> Self {
        self.git.path_env = Some(path.into());
        self
    }

    /// The configuration in use.
    pub fn config(&self) -> &StopGateConfig {
        &self.config
    }

    /// The last report saved for `worker`, for a panel opened after the hook ran.
    pub fn last_report(project: &Project, worker: &WorkerId) -> Option<StopReport> {
        StateFile::new(project.state_dir(worker).join(STATE_FILE))
            .load()
            .and_then(|s| s.last_report)
    }

    /// A person committed every change (the TUI's Changes panel): the last report no longer
    /// lists uncommitted files, so the Checkpoint panel shows it at once. The next stop reads
    /// git again and passes the commit gate on its own.
    pub fn note_commit(project: &Project, worker: &WorkerId) {
        let file = StateFile::new(project.state_dir(worker).join(STATE_FILE));
        let Some(mut state) = file.load() else {
            return;
        };
        if let Some(report) = &mut state.last_report {
            report.uncommitted_gated.clear();
            report.files.clear();
            report.categories.clear();
            report.message = None;
            file.save(&state);
        }
    }

    /// Decides whether the agent may stop. Never fails: when git is missing or the project
    /// is not a repository, it passes and `report.skipped` says why.
    ///
    /// The policy, the same for every front-end:
    /// - the first stop of a session with new changes gets the full message (tests, files,
    ///   instructions); a turn that changed nothing passes at once;
    /// - the following stops of the session are held while gated files are uncommitted or
    ///   the tests are red; the tests run again when the last run failed or files changed;
    /// - after [`StopGateConfig::max_blocks`] blocks in a row the agent may stop, and
    ///   [`StopOutcome::notice`] tells the person what is left. A pass resets the count.
    pub fn evaluate(&self, input: &StopInput) -> StopOutcome {
        let state_file = StateFile::new(input.project.state_dir(&input.worker).join(STATE_FILE));
        let mut state = state_file.load().unwrap_or_default();
        let blocks = state.blocks(&input.session);
        let gate = blocks > 0;
        let mut report = StopReport::new(if gate {
            StopPhase::Second
        } else {
            StopPhase::First
        });
        report.max_blocks = self.config.max_blocks;
        if self.config.hold_on_existing_failures() {
            report.existing_failures = report::ExistingFailures::Hold;
        }
        let root = input.project.root();
        let listed = self
            .git
            .repo_status(root)
            .map(|(repo, status)| (status, repo));
        let (status, repo) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(project = %root.display(), "stop gate fails open: {e}");
                report.skipped = Some(format!("{e}; the stop gate was skipped"));
                // Off without a word only outside a repository; git refusing one is said.
                let notice = message::gate_off_notice(&e);
                return StopOutcome {
                    decision: Decision::Pass,
                    report,
                    notice,
                };
            }
        };
        report.repo_root = Some(repo.clone());
        let head = status.head.commit.clone();
        let (own, outside): (Vec<_>, Vec<_>) =
            status.files.into_iter().partition(ChangedFile::is_own);
        report.outside = outside;
        // What the gate's own test runs wrote is not the agent's change.
        let own = GateFiles::new(&input.project).without_gate_files(&repo, own);
        let committed = self.committed(input, &repo, &status.head, &mut report);
        // The rules sort the files while their `lstat`s are taken.
        let (mut current, classes) = fingerprint_while(&repo, head.as_deref(), &own, || {
            self.categorizer.classify(&own)
        });
        let files = categorize::with_classes(own, classes);
        report.set_files(files, &self.categorizer);
        report.set_committed(self.categorizer.categorize(committed), &self.categorizer);
        let changed_since_told = state.fingerprint != told(&current, input);

        self.tests_step(
            input,
            &repo,
            gate,
            changed_since_told,
            &mut state,
            &mut report,
            &mut current,
        );
        let red = !report.tests_reused && report.tests_hold();

        let reason = if red || (!gate && changed_since_told && !report.files.is_empty()) {
            Some(message::compose(&report, &self.config.capture_only_message))
        } else if gate && input.gate_commits && !report.uncommitted_gated.is_empty() {
            Some(gate::gate_message(&report))
        } else {
            report.unchanged = !gate && !report.files.is_empty();
            None
        };
        let decision = match reason {
            Some(_) if blocks >= self.config.max_blocks => {
                let notice = gate::limit_notice(&report, blocks);
                tracing::warn!("stop gate: limit reached, the agent may stop: {notice}");
                report.gave_up = Some(notice);
                Decision::Pass
            }
            Some(reason) => {
                report.blocks = blocks + 1;
                report.message = Some(reason.clone());
                Decision::Block { reason }
            }
            None => Decision::Pass,
        };
        state.set_blocks(&input.session, report.blocks, &report.created_at);
        state.fingerprint = told(&current, input);
        state_file.save_with_report(&state, &report);
        StopOutcome {
            decision,
            notice: report.gave_up.clone(),
            report,
        }
    }

    /// Runs the tests when they are due, or shows the last run again when it tested this very
    /// tree; `current` becomes the tree's fingerprint after a run (which may touch files).
    #[expect(
        clippy::too_many_arguments,
        reason = "one step of evaluate, on its locals; a struct would only rename them"
    )]
    fn tests_step(
        &self,
        input: &StopInput,
        repo: &Path,
        gate: bool,
        changed_since_told: bool,
        state: &mut state::CheckpointState,
        report: &mut StopReport,
        current: &mut String,
    ) {
        let hold_existing = self.config.hold_on_existing_failures();
        let last_failed = state
            .last_tests
            .as_ref()
            .is_some_and(|t| t.holds(hold_existing));
        let tested_this_tree = state
            .last_tests
            .as_ref()
            .is_some_and(|t| t.fingerprint == *current);
        // The session's work, committed or not: a commit does not take code past the tests.
        let triggers = report.triggers_tests();
        // A red run is never forgotten while there is work: it runs again until it passes (or
        // the limit ends the loop), whatever the agent says. A new session with no work of its
        // own is not held for what another left.
        let has_work = !report.files.is_empty() || !report.committed.is_empty();
        let red_again = last_failed && (gate || has_work);
        let quiet_turn = !gate && !changed_since_told && !last_failed;
        if !quiet_turn && (red_again || (triggers && !tested_this_tree)) {
            let failed_before = state.last_tests.as_ref().map(|t| t.outcomes.as_slice());
            let tree = current.clone();
            self.run_tests_warm(
                input,
                repo,
                failed_before.unwrap_or_default(),
                &tree,
                report,
            );
            if !report.tests.is_empty() {
                // Tests may touch tracked files (lock files, snapshots); those are not the
                // agent's changes, so remember the tree as it is after the run. A run that
                // started nothing (tests off, untrusted, a missing tool) touched nothing, and
                // listing the tree again would cost a second `git status`.
                let ran = report.tests.iter().any(|t| t.exit.is_some());
                if ran && let Ok(after) = self.git.status(repo) {
                    let own: Vec<ChangedFile> = after
                        .files
                        .into_iter()
                        .filter(ChangedFile::is_own)
                        .collect();
                    let own = GateFiles::new(&input.project).without_gate_files(repo, own);
                    *current = fingerprint_files(repo, after.head.commit.as_deref(), own.iter());
                }
                state.last_tests = Some(LastTests {
                    fingerprint: current.clone(),
                    outcomes: report.tests.clone(),
                });
            }
        } else if let Some(last) = state.last_tests.as_ref().filter(|_| tested_this_tree) {
            // A verdict belongs to the tree it tested: shown again for that tree only, never
            // for another, and never when the tests were due but could not run.
            report.tests.clone_from(&last.outcomes);
            report.tests_reused = true;
        }
    }

    /// What the session committed since it began ([`StopInput::base`]); nothing when that
    /// is not known. How HEAD moved, when that needs saying, goes into the report.
    fn committed(
        &self,
        input: &StopInput,
        repo: &Path,
        now: &cp_git::Head,
        report: &mut StopReport,
    ) -> Vec<ChangedFile> {
        let Some(base) = &input.base else {
            return Vec::new();
        };
        match self.git.committed_since(repo, base, now) {
            Ok(committed) => {
                report.since = committed.since;
                report.scope_note = committed.note;
                committed.files
            }
            Err(e) => {
                tracing::warn!("stop gate: what the session committed is unknown: {e}");
                report.scope_note = Some(format!(
                    "what this session committed is unknown ({e}); only uncommitted files are \
                     listed"
                ));
                Vec::new()
            }
        }
    }
}

/// What the worker was told about at a stop: the tree (`tree`, its fingerprint), and where
/// the session whose work it was began.
fn told(tree: &str, input: &StopInput) -> String {
    let base = input
        .base
        .as_ref()
        .map(cp_git::Head::short)
        .unwrap_or_default();
    format!("{tree}:{base}")
}
