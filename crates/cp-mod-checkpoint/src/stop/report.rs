//! The structured outcome of a stop gate, for the Checkpoint panel and for logs.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::categorize::{CategorizedFile, Categorizer};
use super::runner::TestExit;
use super::test_output::{MissingTool, TestSummary};

/// Which stop this was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopPhase {
    /// The agent ended its turn: full stop gate.
    First,
    /// The agent stops again after a blocked stop of the same session: the commit gate, and
    /// the tests again if they failed or files changed.
    Second,
}

/// The files of one category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryFiles {
    /// Rule name; `other` for files no rule matched.
    pub name: String,
    /// The rule's instruction.
    pub instruction: Option<String>,
    /// Whether the rule is gated.
    pub gated: bool,
    /// Display paths (`old → new` for renames).
    pub files: Vec<String>,
}

/// What the test run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// The project whose tests these are, as a directory relative to the repository root,
    /// when the repository's root is no project and each changed file's nearest project is
    /// tested on its own (`backend`, `web`); `None` for the project's own tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The command that ran.
    pub command: String,
    /// True only for exit code 0.
    pub passed: bool,
    /// How it ended; `None` when it could not be started.
    pub exit: Option<TestExit>,
    /// Why it could not be started.
    pub error: Option<String>,
    /// Counts and time read from the output, when recognized.
    pub summary: Option<TestSummary>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// The last lines of output (up to 30) when the run did not pass.
    pub tail: Vec<String>,
    /// How the run went, when that needs saying (e.g. it ran outside the console server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why this command: configured, what the project declares (a Makefile's `test`
    /// target…), or the manifest it was guessed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Set when the tests never ran because a tool or the dependencies are not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<MissingTool>,
    /// How long the last complete run of the same command took, in milliseconds: the
    /// suite's usual duration, said when this run timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usual_ms: Option<u64>,
    /// Set when a warm run of this very tree gave the verdict (or is still giving it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm: Option<WarmUse>,
    /// Set when the verdict of the same command on the session's base tree is known: the
    /// tests failing now that already failed there, by name (empty when none did). `None`
    /// when the base's verdict is unknown: then nothing is said of what came before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predating: Option<Vec<String>>,
}

/// What a test run's result means, for the headline and what the agent is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestVerdict {
    /// Exit code 0 and at least one test ran (or no runner's summary was recognised).
    Passed,
    /// Tests failed.
    Failed,
    /// The tests could not run: a collection, import or build error, a crash before any
    /// test, or a command that could not start.
    Error,
    /// The run executed no test. Never a pass.
    NoTests,
    /// The time limit ran out; the whole process group was killed.
    TimedOut,
    /// A tool or the project's dependencies are not installed; nothing was tested.
    MissingTool,
    /// Every test that ran passed, but the command failed on something else (a coverage
    /// threshold, a type check, a step after the tests).
    OtherFailure,
    /// Stopped from outside: cancelled (Esc), killed from its console, its server gone.
    Stopped,
}

impl TestOutcome {
    /// A run of `command` that could not start, for `error`: never a pass.
    pub fn not_started(command: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            project: None,
            command: command.into(),
            passed: false,
            exit: None,
            error: Some(error.into()),
            summary: None,
            elapsed_ms: 0,
            tail: Vec::new(),
            note: None,
            why: None,
            missing: None,
            usual_ms: None,
            warm: None,
            predating: None,
        }
    }

    /// True when the run did not fail a test but could not run them: a collection or
    /// import error, no tests at all, a crash or build failure before any test result (as
    /// the runner's recognised output says), or a command that could not start. Such a run
    /// is reported as an error, never as `N failed, 0 passed`.
    ///
    /// Output with no summary line we know says nothing of the kind: a `make test` running a
    /// script that prints `boom` and exits 1 has failed, not crashed before its tests.
    pub fn is_error(&self) -> bool {
        matches!(self.verdict(), TestVerdict::Error | TestVerdict::NoTests)
    }

    /// Whether every failure of this run was already failing at the session's base, as both
    /// verdicts name it: the run failed tests only (no error, no other failure), every failing
    /// test is named (as many names as failures), and each name failed at the base too.
    pub fn only_predating(&self) -> bool {
        let (Some(predating), Some(summary)) = (&self.predating, &self.summary) else {
            return false;
        };
        self.verdict() == TestVerdict::Failed
            && summary.errors.unwrap_or(0) == 0
            && summary.other_failures.is_empty()
            && !summary.failing.is_empty()
            && summary.failed == u64::try_from(summary.failing.len()).ok()
            && summary.failing.iter().all(|name| predating.contains(name))
    }

    /// The failing tests that did not fail at the session's base, when its verdict is known.
    pub fn new_failures(&self) -> Vec<&str> {
        let (Some(predating), Some(summary)) = (&self.predating, &self.summary) else {
            return Vec::new();
        };
        summary
            .failing
            .iter()
            .filter(|name| !predating.contains(name))
            .map(String::as_str)
            .collect()
    }

    /// Whether this run holds the agent: it did not pass, and (unless `hold_existing`) not
    /// every failure is [`TestOutcome::only_predating`].
    pub fn holds(&self, hold_existing: bool) -> bool {
        !self.passed && (hold_existing || !self.only_predating())
    }

    /// What the result means. Only [`TestVerdict::Passed`] is a pass ([`TestOutcome::passed`]).
    pub fn verdict(&self) -> TestVerdict {
        if self.missing.is_some() {
            return TestVerdict::MissingTool;
        }
        let summary = self.summary.as_ref();
        match &self.exit {
            None => TestVerdict::Error,
            Some(TestExit::TimedOut { .. }) => TestVerdict::TimedOut,
            Some(TestExit::Stopped { .. }) => TestVerdict::Stopped,
            Some(exit) if exit.success() => {
                if summary.is_some_and(TestSummary::ran_nothing) {
                    TestVerdict::NoTests
                } else {
                    TestVerdict::Passed
                }
            }
            Some(_) => match summary {
                Some(s) if s.failed.unwrap_or(0) > 0 => TestVerdict::Failed,
                Some(s) if s.ran_nothing() => TestVerdict::NoTests,
                Some(s) if s.is_error() => TestVerdict::Error,
                // Every test passed, yet the command failed.
                Some(s) if s.tests_ran() > 0 => TestVerdict::OtherFailure,
                Some(s) if !s.other_failures.is_empty() => TestVerdict::OtherFailure,
                _ => TestVerdict::Failed,
            },
        }
    }
}

/// Reads the test runs of a report or state saved as one run (`{…}` or `null`, before
/// repositories with several projects) or as a list.
pub(crate) fn one_or_many<'de, D>(deserializer: D) -> Result<Vec<TestOutcome>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Saved {
        Many(Vec<TestOutcome>),
        One(Box<TestOutcome>),
    }
    Ok(match Option::<Saved>::deserialize(deserializer)? {
        Some(Saved::Many(runs)) => runs,
        Some(Saved::One(run)) => vec![*run],
        None => Vec::new(),
    })
}

/// Everything the stop gate found and decided, for the Checkpoint panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopReport {
    /// First or second stop.
    pub phase: StopPhase,
    /// When the stop gate ran (RFC 3339, UTC).
    pub created_at: String,
    /// The repository's top directory; `None` when git was unavailable.
    pub repo_root: Option<PathBuf>,
    /// Every uncommitted change of the repository's own with its categories.
    pub files: Vec<CategorizedFile>,
    /// What the session committed since it began (see [`cp_orchestrate::StopInput::base`]),
    /// with its categories: tested with `files`, never asked to be committed again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub committed: Vec<CategorizedFile>,
    /// The commit the session's commits were compared with (where it began, or where it
    /// switched branches); `None` when that is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// How HEAD moved when it did not simply move forward (a rebase, a branch switch, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_note: Option<String>,
    /// What `git status` lists that is not this repository's change: nested repositories,
    /// worktrees, submodules with only untracked files inside. Never gated, never tested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<cp_git::ChangedFile>,
    /// The same files grouped by category, in rule order (a file may be in several).
    pub categories: Vec<CategoryFiles>,
    /// Whether any change is code-related.
    pub code_changed: bool,
    /// The test runs: none, the project's own, or one for each project with changes when
    /// the repository's root is no project (see [`TestOutcome::project`]).
    #[serde(default, deserialize_with = "one_or_many")]
    pub tests: Vec<TestOutcome>,
    /// Why no tests ran although code changed, e.g. no command configured or detected.
    pub tests_note: Option<String>,
    /// Deduplicated follow-up instructions of the matched categories.
    pub instructions: Vec<String>,
    /// Gated files that are not committed.
    pub uncommitted_gated: Vec<String>,
    /// True when nothing changed since the stop gate last ran for this worker.
    pub unchanged: bool,
    /// Why the stop gate failed open (missing git, not a repository, …).
    pub skipped: Option<String>,
    /// The message given to the agent when the stop was blocked.
    pub message: Option<String>,
    /// True when `tests` are the earlier runs, still valid for this tree, not new ones.
    #[serde(default)]
    pub tests_reused: bool,
    /// Stops of this agent session blocked in a row, this one included.
    #[serde(default)]
    pub blocks: u32,
    /// The configured limit on `blocks` (`checkpoint.max_blocks`).
    #[serde(default)]
    pub max_blocks: u32,
    /// Set when the limit let the agent stop with work left: what the person is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gave_up: Option<String>,
    /// What failures already failing at the session's base do
    /// (`checkpoint.tests.hold_on_existing_failures`).
    #[serde(default)]
    pub existing_failures: ExistingFailures,
}

/// What failures already failing at the session's base do at a stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExistingFailures {
    /// They are named, and only new failures hold the agent.
    #[default]
    Named,
    /// They are named, and hold the agent as new ones do.
    Hold,
}

impl StopReport {
    pub(crate) fn new(phase: StopPhase) -> Self {
        Self {
            phase,
            created_at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            repo_root: None,
            files: Vec::new(),
            committed: Vec::new(),
            since: None,
            scope_note: None,
            outside: Vec::new(),
            categories: Vec::new(),
            code_changed: false,
            tests: Vec::new(),
            tests_note: None,
            instructions: Vec::new(),
            uncommitted_gated: Vec::new(),
            unchanged: false,
            skipped: None,
            message: None,
            tests_reused: false,
            blocks: 0,
            max_blocks: 0,
            gave_up: None,
            existing_failures: ExistingFailures::Named,
        }
    }

    /// Whether a test run holds the agent (see [`TestOutcome::holds`]).
    pub fn tests_hold(&self) -> bool {
        self.tests
            .iter()
            .any(|t| t.holds(self.existing_failures == ExistingFailures::Hold))
    }

    /// Fills the file-derived fields.
    pub(crate) fn set_files(&mut self, files: Vec<CategorizedFile>, categorizer: &Categorizer) {
        let mut categories: Vec<CategoryFiles> = categorizer
            .rules()
            .map(|rule| CategoryFiles {
                name: rule.name.clone(),
                instruction: rule.instruction.clone(),
                gated: rule.gated,
                files: files
                    .iter()
                    .filter(|f| f.categories.contains(&rule.name))
                    .map(|f| f.file.display_path())
                    .collect(),
            })
            .filter(|c| !c.files.is_empty())
            .collect();
        let other: Vec<String> = files
            .iter()
            .filter(|f| f.categories.is_empty())
            .map(|f| f.file.display_path())
            .collect();
        if !other.is_empty() {
            categories.push(CategoryFiles {
                name: "other".into(),
                instruction: None,
                gated: false,
                files: other,
            });
        }
        self.categories = categories;
        self.code_changed = files.iter().any(|f| f.code);
        self.uncommitted_gated = files
            .iter()
            .filter(|f| f.gated)
            .map(|f| f.file.display_path())
            .collect();
        self.instructions = categorizer.instructions(&[&files]);
        self.files = files;
    }

    /// Adds what the session committed: its code counts as changed code, and its
    /// categories' instructions are given too.
    pub(crate) fn set_committed(
        &mut self,
        committed: Vec<CategorizedFile>,
        categorizer: &Categorizer,
    ) {
        self.code_changed |= committed.iter().any(|f| f.code);
        self.instructions = categorizer.instructions(&[&committed, &self.files]);
        self.committed = committed;
    }

    /// Whether any file of the session's work, committed or not, triggers the tests.
    pub(crate) fn triggers_tests(&self) -> bool {
        self.files
            .iter()
            .chain(&self.committed)
            .any(|f| f.triggers_tests)
    }
}

/// How a stop used a warm run of its very tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WarmUse {
    /// Its verdict was ready: no wait.
    Reused {
        /// When the warm run finished, in milliseconds since the Unix epoch.
        finished_at_ms: u64,
    },
    /// It was testing this tree when the stop came; the stop waited for the rest.
    Waited {
        /// How long the stop waited.
        waited_ms: u64,
    },
    /// It was still testing this tree when the stop's limit ran out; it goes on at low
    /// priority and the next stop on the same tree takes its verdict.
    StillRunning {
        /// How long the stop waited.
        waited_secs: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::test_output::TestFramework;

    fn red(failing: &[&str], failed: u64) -> TestOutcome {
        let mut summary = TestSummary::new(TestFramework::Pytest);
        summary.failed = Some(failed);
        summary.passed = Some(3);
        summary.failing = failing.iter().map(|n| (*n).to_owned()).collect();
        TestOutcome {
            project: None,
            command: "pytest".into(),
            passed: false,
            exit: Some(TestExit::Code { code: 1 }),
            error: None,
            summary: Some(summary),
            elapsed_ms: 10,
            tail: Vec::new(),
            note: None,
            why: None,
            missing: None,
            usual_ms: None,
            warm: None,
            predating: None,
        }
    }

    #[test]
    fn only_failures_named_at_the_base_too_let_the_agent_go() {
        let mut old = red(&["t::old"], 1);
        assert!(old.holds(false), "an unknown base says nothing");
        old.predating = Some(vec!["t::old".into()]);
        assert!(old.only_predating());
        assert!(!old.holds(false));
        assert!(old.holds(true), "hold_on_existing_failures holds them too");

        let mut both = red(&["t::old", "t::new"], 2);
        both.predating = Some(vec!["t::old".into()]);
        assert!(both.holds(false));
        assert_eq!(both.new_failures(), ["t::new"]);

        // A failure the output does not name might be new.
        let mut unnamed = red(&["t::old"], 2);
        unnamed.predating = Some(vec!["t::old".into()]);
        assert!(unnamed.holds(false));

        // An error besides the old failure holds.
        let mut error = red(&["t::old"], 1);
        error.predating = Some(vec!["t::old".into()]);
        error.summary.as_mut().unwrap().errors = Some(1);
        assert!(error.holds(false));
    }
}
