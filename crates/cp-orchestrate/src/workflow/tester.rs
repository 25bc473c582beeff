//! How the merge queue tests a tree. The front-end gives the run a [`TreeTester`]: the stop
//! gate's own planning and runners (configured command, else detection, one run per project
//! of a monorepo, its timeouts), asked for a directory instead of an agent's turn. This crate
//! cannot call the stop gate itself (the checkpoint crate stands on this one), so the run
//! only sees this trait and what it reports: each command, its exit, its counts, its time.

use std::fmt::{self, Write as _};
use std::path::Path;

use cp_base::CancelToken;
use serde::{Deserialize, Serialize};

/// Tests a tree as the stop gate would. Called on a thread of its own; several may run at
/// once (the queue tests candidates ahead of their turn).
pub trait TreeTester: Send + Sync {
    /// Plans and runs the tests of `tree` and reports them; a test that cannot start is a
    /// failed run in the report, not an error.
    fn test_tree(&self, tree: &TreeUnderTest<'_>) -> TreeTest;
}

impl fmt::Debug for dyn TreeTester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TreeTester")
    }
}

/// The tree to test.
#[derive(Debug, Clone, Copy)]
pub struct TreeUnderTest<'a> {
    /// The project's root in that tree: in a phase's worktree, or the project's own root.
    pub root: &'a Path,
    /// The commit checked out there (what a tester elsewhere is sent).
    pub commit: &'a str,
    /// The files (repository-relative) in which the tree differs from the last tree known to
    /// pass: both sides of a merge since they parted. In a repository whose root is no
    /// project, they pick the projects whose tests run, as the changed files of a turn do
    /// for the stop gate.
    pub changed: &'a [String],
    /// Set when the test is no longer wanted (the run stops, or a candidate under it failed):
    /// a test in progress is killed.
    pub cancel: &'a CancelToken,
}

/// What testing a tree found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeTest {
    /// Each command run, in order.
    #[serde(default)]
    pub runs: Vec<CommandRun>,
    /// Why no command ran, when none did (no test command configured or detected, the
    /// project not trusted for its configured command, no change that triggers tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where it was tested, when not on the run's machine: the host and the tree it says it
    /// checked out ([`TreeTest::believed`] compares it with the candidate's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRun>,
}

/// A test that ran on another host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRun {
    /// The host's name in the `hosts` configuration.
    pub host: String,
    /// The tree the host checked out and tested, as it reported it.
    pub tree: String,
    /// Milliseconds spent sending the commit there (apart from the test's own time).
    pub transfer_ms: u64,
}

impl TreeTest {
    /// This test, when it says it tested `tree` (or ran on the run's machine); else a failed
    /// test saying why it is not believed: a host that checked out another tree says nothing
    /// about this one.
    #[must_use]
    pub fn believed(self, tree: &str) -> Self {
        let Some(host) = &self.host else {
            return self;
        };
        if host.tree == tree {
            return self;
        }
        Self {
            runs: vec![CommandRun {
                command: format!("(the test on host {})", host.host),
                exit: format!(
                    "not believed: it tested tree {}, not the candidate's tree {tree}",
                    host.tree
                ),
                ..CommandRun::default()
            }],
            note: None,
            host: self.host,
        }
    }

    /// Whether it says anything about the tree: at least one command ran.
    pub fn tested(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Whether every command passed (true when none ran: nothing failed).
    pub fn passed(&self) -> bool {
        self.runs.iter().all(|run| run.passed)
    }

    /// The names of the failing tests, else the failing commands, for a one-line message.
    pub fn failing(&self) -> Vec<String> {
        let mut names = Vec::new();
        for run in self.runs.iter().filter(|r| !r.passed) {
            if run.failing.is_empty() {
                names.push(format!("`{}` ({})", run.command, run.exit));
            } else {
                names.extend(run.failing.iter().cloned());
            }
        }
        names
    }

    /// One line: each command with its exit and counts, or why none ran.
    pub fn summary(&self) -> String {
        if self.runs.is_empty() {
            return format!(
                "not tested ({})",
                self.note.as_deref().unwrap_or("no test command")
            );
        }
        self.runs
            .iter()
            .map(CommandRun::summary)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// One test command run on a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The project of a monorepo it tested (its directory, repository-relative); `None` for
    /// the project's own tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The command.
    pub command: String,
    /// How it ended, in words: `exit 0`, `exit 1`, `killed by signal 9`, `timed out after
    /// 30 s`, `could not start: …`.
    pub exit: String,
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// True only for exit code 0.
    pub passed: bool,
    /// Tests passed, as its output says (when recognised).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_passed: Option<u64>,
    /// Tests failed, as its output says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_failed: Option<u64>,
    /// Errors outside any test (collection, import, build), as its output says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// The failing tests' names, as the tool printed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// The last lines of its output when it failed (for the phase it goes back to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tail: Vec<String>,
}

impl CommandRun {
    /// `python3 -m unittest: exit 0, 3 passed, 0 failed, 0.4 s` (the project first, in a
    /// monorepo).
    pub fn summary(&self) -> String {
        let mut line = match &self.project {
            Some(project) => format!("{project}: {}: {}", self.command, self.exit),
            None => format!("{}: {}", self.command, self.exit),
        };
        if let Some(passed) = self.tests_passed {
            let _ = write!(line, ", {passed} passed");
        }
        if let Some(failed) = self.tests_failed {
            let _ = write!(line, ", {failed} failed");
        }
        if let Some(errors) = self.errors.filter(|e| *e > 0) {
            let _ = write!(line, ", {errors} errors");
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "milliseconds shown as seconds with one decimal"
        )]
        let seconds = self.elapsed_ms as f64 / 1000.0;
        let _ = write!(line, ", {seconds:.1} s");
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_each_command_its_exit_and_counts() {
        let test = TreeTest {
            runs: vec![
                CommandRun {
                    command: "python3 -m unittest".into(),
                    exit: "exit 1".into(),
                    exit_code: Some(1),
                    tests_passed: Some(2),
                    tests_failed: Some(1),
                    elapsed_ms: 420,
                    failing: vec!["test_feature (test_feature.FeatureTest)".into()],
                    ..CommandRun::default()
                },
                CommandRun {
                    project: Some("web".into()),
                    command: "npm test".into(),
                    exit: "exit 0".into(),
                    passed: true,
                    elapsed_ms: 1000,
                    ..CommandRun::default()
                },
            ],
            note: None,
            host: None,
        };
        assert!(test.tested() && !test.passed());
        assert_eq!(
            test.summary(),
            "python3 -m unittest: exit 1, 2 passed, 1 failed, 0.4 s; web: npm test: exit 0, 1.0 s"
        );
        assert_eq!(test.failing(), ["test_feature (test_feature.FeatureTest)"]);
        let none = TreeTest {
            runs: Vec::new(),
            note: Some("no test command configured and none detected".into()),
            host: None,
        };
        assert!(!none.tested() && none.passed());
        assert_eq!(
            none.summary(),
            "not tested (no test command configured and none detected)"
        );
    }

    #[test]
    fn a_host_that_tested_another_tree_is_not_believed() {
        let green = TreeTest {
            runs: vec![CommandRun {
                command: "make test".into(),
                exit: "exit 0".into(),
                exit_code: Some(0),
                passed: true,
                ..CommandRun::default()
            }],
            note: None,
            host: Some(HostRun {
                host: "build-1".into(),
                tree: "aaa".into(),
                transfer_ms: 5,
            }),
        };
        assert_eq!(green.clone().believed("aaa"), green);
        let doubted = green.believed("bbb");
        assert!(!doubted.passed(), "{doubted:?}");
        assert!(
            doubted
                .summary()
                .contains("tested tree aaa, not the candidate's tree bbb"),
            "{}",
            doubted.summary()
        );
    }
}
