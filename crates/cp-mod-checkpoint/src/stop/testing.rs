//! Which test commands the stop gate runs, and running one: the configured command or what
//! the project declares or suggests (with why), in the project's own environment and the
//! way CI runs it (`CI=true`, so watch modes finish), with a missing tool or a timeout named
//! as what it is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cp_base::Project;
use cp_orchestrate::StopInput;

use super::detect::{
    detect_test_command, install_hint, missing_before_run, nearest_projects, venv_bin,
};
use super::durations::Durations;
use super::gate_files::GateFiles;
use super::report::{StopReport, TestOutcome, TestVerdict};
use super::runner::{TestExit, TestSpec};
use super::test_output::{self, MissingTool, missing_tool, parse_test_output};
use super::{
    DEFAULT_TEST_TIMEOUT_SECS, MAX_LEARNED_TIMEOUT_SECS, StopGate, TEST_TAIL_LINES, TestRunner,
};

/// Why no test ran when the configured command is empty.
const OFF_NOTE: &str = "tests are off: checkpoint.tests.command is empty";

/// Characters of one output line shown to the agent; the rest is counted.
const TAIL_LINE_CHARS: usize = 400;

/// Lines of output shown when a run timed out: its last progress, not 30 rows of dots.
const TIMEOUT_TAIL_LINES: usize = 8;

/// One test command to run: where, for how long, for which project, and why this one.
#[derive(Debug, Clone)]
pub(super) struct PlannedTestRun {
    /// The project's directory relative to the repository root, for a monorepo's projects.
    pub(super) project: Option<String>,
    pub(super) command: String,
    pub(super) cwd: PathBuf,
    pub(super) timeout_secs: u64,
    pub(super) why: String,
    /// The environment the project declares for the command (tox's `setenv`).
    pub(super) env: Vec<(String, String)>,
}

/// The tests the stop gate would run in a project now, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedTests {
    /// The shell command.
    pub command: String,
    /// Where it runs.
    pub dir: PathBuf,
    /// Why this command.
    pub why: String,
    /// The limit, in seconds.
    pub timeout_secs: u64,
}

/// Why a stop would run no one test command for the whole project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoPlannedTests {
    /// `checkpoint.tests.command` is empty.
    #[error("{OFF_NOTE}")]
    Off,
    /// A command is configured, and the project is not trusted to run it.
    #[error("{}", untrusted_note())]
    Untrusted,
    /// Nothing at the root: each changed file's nearest project is tested on its own.
    #[error(
        "no test command declared or detected at the project's root; each changed file's \
         nearest project is tested on its own"
    )]
    PerChangedFile,
}

impl StopGate {
    /// The tests a stop would run in `project` (its root's, else its repository's), with
    /// why; `Err` says why none would (disabled, untrusted, nothing found). A repository
    /// whose root is no project tests each changed file's nearest project instead, which
    /// depends on the changes: that is what the `Err` says then.
    pub fn planned_tests(
        &self,
        project: &Project,
        repo: &Path,
    ) -> Result<PlannedTests, NoPlannedTests> {
        let timeout_secs = self.timeout_secs();
        match self.configured_command() {
            Some(command) if command.trim().is_empty() => Err(NoPlannedTests::Off),
            Some(_) if !project.is_trusted() => Err(NoPlannedTests::Untrusted),
            Some(command) => Ok(PlannedTests {
                command: command.to_owned(),
                dir: project.root().to_path_buf(),
                why: "configured in .context-pilot/config.json (checkpoint.tests.command)".into(),
                timeout_secs,
            }),
            None => detect_test_command(&[project.root(), repo], self.git.path_env.as_deref())
                .map(|found| PlannedTests {
                    command: found.command,
                    dir: found.dir,
                    why: found.why,
                    timeout_secs,
                })
                .ok_or(NoPlannedTests::PerChangedFile),
        }
    }

    fn configured_command(&self) -> Option<&str> {
        self.config
            .tests
            .as_ref()
            .and_then(|t| t.command.as_deref())
    }

    /// The configured limit, else the default (`doctor`'s figure: a run's own limit may be
    /// longer, learned from the suite's usual time; see [`StopGate::limit_secs`]).
    fn timeout_secs(&self) -> u64 {
        self.config
            .tests
            .as_ref()
            .and_then(|t| t.timeout_secs)
            .unwrap_or(DEFAULT_TEST_TIMEOUT_SECS)
    }

    /// The limit of a run whose last complete run took `usual_ms`: the configured one, else
    /// the default or twice the usual time when that is longer, at most
    /// [`MAX_LEARNED_TIMEOUT_SECS`].
    pub(super) fn limit_secs(&self, usual_ms: Option<u64>) -> u64 {
        if let Some(configured) = self.config.tests.as_ref().and_then(|t| t.timeout_secs) {
            return configured;
        }
        let learned = usual_ms.map_or(0, |ms| ms.div_ceil(1000).saturating_mul(2));
        learned.clamp(DEFAULT_TEST_TIMEOUT_SECS, MAX_LEARNED_TIMEOUT_SECS)
    }

    /// Runs the configured or detected test commands; the caller decides whether they are
    /// due. `before` is the last run, whose red projects run again even when their files
    /// are no longer among the changes.
    pub(super) fn run_tests(
        &self,
        input: &StopInput,
        repo: &Path,
        before: &[TestOutcome],
        report: &mut StopReport,
    ) {
        let runs = match self.plan_runs(input, repo, before, report) {
            Ok(runs) => runs,
            Err(note) => {
                report.tests_note = note;
                return;
            }
        };
        report.tests = self.run_planned(runs, &Durations::new(&input.project));
    }

    /// The runs a stop would start now, in order; `Err` with what to say when there are
    /// none (nothing when the tests are turned off).
    pub(super) fn plan_runs(
        &self,
        input: &StopInput,
        repo: &Path,
        before: &[TestOutcome],
        report: &StopReport,
    ) -> Result<Vec<PlannedTestRun>, Option<String>> {
        let durations = Durations::new(&input.project);
        let runs = match self.configured_command() {
            // Due but off: said, so no earlier verdict is taken for this tree's (issue 41).
            Some(command) if command.trim().is_empty() => return Err(Some(OFF_NOTE.into())),
            // A configured command is the repository's code: it runs only in a trusted
            // project. Detected commands (`cargo test`, …) are the project's own build.
            Some(_) if !input.project.is_trusted() => return Err(Some(untrusted_note())),
            Some(command) => vec![PlannedTestRun {
                project: None,
                command: command.to_owned(),
                cwd: input.project.root().to_path_buf(),
                timeout_secs: 0,
                why: "configured in .context-pilot/config.json (checkpoint.tests.command)".into(),
                env: Vec::new(),
            }],
            None => self.detect_runs(input, repo, before, report),
        };
        if runs.is_empty() {
            return Err(Some(
                "no test command configured in .context-pilot/config.json \
                 (checkpoint.tests.command) and none declared or detected"
                    .into(),
            ));
        }
        Ok(runs
            .into_iter()
            .map(|mut run| {
                run.timeout_secs = self.limit_secs(durations.usual_ms(&run.command, &run.cwd));
                run
            })
            .collect())
    }

    /// Runs `runs` one after the other with this gate's runner.
    pub(super) fn run_planned(
        &self,
        runs: Vec<PlannedTestRun>,
        durations: &Durations,
    ) -> Vec<TestOutcome> {
        runs.into_iter()
            .map(|run| self.run_one(run, durations, self.runner.as_ref()))
            .collect()
    }

    /// The detected test commands: the project's own (its root's, else the repository
    /// root's), as one run; when neither root is a project, one run for each nearest
    /// project of a changed file that triggers tests, or of a project that was red.
    fn detect_runs(
        &self,
        input: &StopInput,
        repo: &Path,
        before: &[TestOutcome],
        report: &StopReport,
    ) -> Vec<PlannedTestRun> {
        let path_env = self.git.path_env.as_deref();
        // Each run's own limit is set once the runs are known (see `plan_runs`).
        let timeout_secs = 0;
        if let Some(found) = detect_test_command(&[input.project.root(), repo], path_env) {
            return vec![PlannedTestRun {
                project: None,
                command: found.command,
                cwd: found.dir,
                timeout_secs,
                why: found.why,
                env: found.env,
            }];
        }
        let changed = report
            .files
            .iter()
            .filter(|f| f.triggers_tests)
            .filter_map(|f| Path::new(&f.file.path).parent());
        let red = before
            .iter()
            .filter(|t| !t.passed)
            .filter_map(|t| t.project.as_deref().map(Path::new));
        nearest_projects(repo, changed.chain(red), path_env)
            .into_iter()
            .map(|found| PlannedTestRun {
                project: Some(
                    found
                        .dir
                        .strip_prefix(repo)
                        .unwrap_or(&found.dir)
                        .display()
                        .to_string(),
                ),
                command: found.command,
                cwd: found.dir,
                timeout_secs,
                why: found.why,
                env: found.env,
            })
            .collect()
    }

    /// The environment of a run: CI's (`CI=true`: watch modes off, no interactive
    /// reporters), and `PATH`: the gate's when one was given, else this process's, with the
    /// project's venv first as if activated. Always set, so a run started from a console
    /// server (whose own `PATH` may be another's) and a warm run see the same one.
    pub(super) fn run_env(&self, cwd: &Path) -> Vec<(OsString, OsString)> {
        let mut env = vec![(OsString::from("CI"), OsString::from("true"))];
        let path = self
            .git
            .path_env
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        match venv_bin(cwd) {
            Some(bin) => {
                let dirs = std::iter::once(bin.clone()).chain(std::env::split_paths(&path));
                let joined = std::env::join_paths(dirs).unwrap_or(path);
                env.push(("PATH".into(), joined));
                if let Some(venv) = bin.parent() {
                    env.push(("VIRTUAL_ENV".into(), venv.as_os_str().to_owned()));
                }
            }
            None => env.push(("PATH".into(), path)),
        }
        env
    }

    /// Runs one project's tests with `runner` and reads the result.
    pub(super) fn run_one(
        &self,
        run: PlannedTestRun,
        durations: &Durations,
        runner: &dyn TestRunner,
    ) -> TestOutcome {
        self.run_one_via(run, durations, |spec| runner.run(spec))
    }

    /// Gets one project's run from `run_spec` (which runs it, or takes over a run of it) and
    /// reads the result.
    pub(super) fn run_one_via(
        &self,
        run: PlannedTestRun,
        durations: &Durations,
        run_spec: impl FnOnce(&TestSpec) -> std::io::Result<super::TestRun>,
    ) -> TestOutcome {
        let PlannedTestRun {
            project,
            command,
            cwd,
            timeout_secs,
            why,
            env: declared,
        } = run;
        let mut outcome = TestOutcome {
            project,
            command: command.clone(),
            passed: false,
            exit: None,
            error: None,
            summary: None,
            elapsed_ms: 0,
            tail: Vec::new(),
            note: None,
            why: Some(why),
            missing: None,
            usual_ms: durations.usual_ms(&command, &cwd),
            warm: None,
            predating: None,
        };
        if let Some(evidence) = missing_before_run(&cwd) {
            outcome.missing = Some(MissingTool {
                tool: "node_modules".into(),
                evidence,
                install: install_hint(&cwd, "node_modules"),
            });
            return outcome;
        }
        let spec = TestSpec {
            command: command.clone(),
            cwd: cwd.clone(),
            timeout: Duration::from_secs(timeout_secs),
            env: self
                .run_env(&cwd)
                .into_iter()
                .chain(declared.into_iter().map(|(k, v)| (k.into(), v.into())))
                .collect(),
            cancel: self.cancel.clone(),
            console_file: None,
        };
        tracing::info!(command = %command, project = ?outcome.project, "stop gate: running tests");
        let before = GateFiles::before(&cwd);
        let ran = run_spec(&spec);
        if let Some(before) = &before {
            durations.gate_files.record_run(before);
        }
        let run = match ran {
            Ok(run) => run,
            Err(e) => {
                outcome.error = Some(e.to_string());
                return outcome;
            }
        };
        let code = match run.exit {
            TestExit::Code { code } => Some(code),
            _ => None,
        };
        outcome.exit = Some(run.exit);
        outcome.elapsed_ms = u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX);
        outcome.note = run.note;
        outcome.summary = parse_test_output(&run.output);
        if code.is_some_and(|c| c != 0) {
            outcome.missing = missing_tool(&run.output, code).map(|mut missing| {
                missing.install = install_hint(&cwd, &missing.tool);
                missing
            });
        }
        let verdict = outcome.verdict();
        outcome.passed = verdict == TestVerdict::Passed;
        if !matches!(verdict, TestVerdict::TimedOut | TestVerdict::Stopped) {
            durations.record(&command, &cwd, outcome.elapsed_ms);
        }
        if !outcome.passed {
            let lines = if verdict == TestVerdict::TimedOut {
                TIMEOUT_TAIL_LINES
            } else {
                TEST_TAIL_LINES
            };
            let clean = test_output::strip_ansi(&run.output);
            let all: Vec<&str> = clean.lines().collect();
            outcome.tail = all[all.len().saturating_sub(lines)..]
                .iter()
                .map(|l| bounded_line(l, TAIL_LINE_CHARS))
                .collect();
        }
        outcome
    }
}

/// At most `max` characters of `line`, the rest counted: a minified bundle or a row of
/// progress dots is not worth 100 KB of the agent's context.
fn bounded_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_owned(),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            format!("{} … ({rest} more characters)", &line[..cut])
        }
    }
}

fn untrusted_note() -> String {
    "configured test command not run: this project is not trusted \
     (run `context-pilot trust --show`, then `context-pilot trust`)"
        .into()
}

impl PlannedTests {
    /// What of the command's runner is not installed, checked without running the tests:
    /// each program it starts (on `path_env`, else `PATH`, with the project's venv first),
    /// a Python `-m` module (by importing it), and `node_modules` for a package with
    /// dependencies. `None` when everything is there.
    pub fn missing_runner(&self, path_env: Option<&std::ffi::OsStr>) -> Option<MissingTool> {
        if let Some(evidence) = missing_before_run(&self.dir) {
            return Some(MissingTool {
                tool: "node_modules".into(),
                evidence,
                install: install_hint(&self.dir, "node_modules"),
            });
        }
        let path = path_env
            .map(std::ffi::OsStr::to_owned)
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        let path = match venv_bin(&self.dir) {
            Some(bin) => {
                std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)))
                    .unwrap_or(path)
            }
            None => path,
        };
        let missing = |tool: &str, evidence: String| MissingTool {
            tool: tool.to_owned(),
            evidence,
            install: install_hint(&self.dir, tool),
        };
        for part in self.command.split(['&', ';', '|']) {
            let mut words = part
                .split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'));
            let Some(program) = words.next().filter(|p| !matches!(*p, "exit" | "cd")) else {
                continue;
            };
            let found = if program.contains('/') {
                Some(self.dir.join(program)).filter(|p| p.is_file())
            } else {
                cp_base::find_program(program, Some(&path))
            };
            let Some(found) = found else {
                return Some(missing(program, format!("`{program}` is not on PATH")));
            };
            let mut rest = words.skip_while(|w| *w != "-m");
            if program.starts_with("python")
                && rest.next().is_some()
                && let Some(module) = rest.next()
            {
                let imports = std::process::Command::new(&found)
                    .args(["-c", &format!("import {module}")])
                    .current_dir(&self.dir)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if !imports {
                    return Some(missing(
                        module,
                        format!("{}: No module named {module}", found.display()),
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_with_a_count() {
        assert_eq!(bounded_line("abcdef", 10), "abcdef");
        assert_eq!(bounded_line("abcdef", 4), "abcd … (2 more characters)");
        assert_eq!(bounded_line("ééééé", 2), "éé … (3 more characters)");
    }
}
