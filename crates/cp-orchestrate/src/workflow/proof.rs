//! The proof a merge keeps: the tree tested, each command, how it ended, its counts and its
//! time. It is recorded in `context.json` (`phase_runs.<id>.proof`, the red tries under
//! `red_merges`) and, for the commit that landed, as a git note under
//! `refs/notes/context-pilot`, so `git log --notes=context-pilot` shows what each merge was
//! tested with. Also the run's last word ([`BranchVerdict`]) and what the queue cost
//! ([`QueueCost`]).

use std::fmt::{self, Write as _};
use std::ops::Not;

use serde::{Deserialize, Serialize};

use super::tester::TreeTest;

/// What a test says of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeVerdict {
    /// Every command passed.
    Passed,
    /// A command failed (or could not start, or timed out).
    Failed,
    /// No command ran: none configured or detected, or nothing that triggers tests changed.
    NotTested,
}

impl TreeVerdict {
    /// The outcome of `test`.
    pub fn of(test: &TreeTest) -> Self {
        if !test.tested() {
            Self::NotTested
        } else if test.passed() {
            Self::Passed
        } else {
            Self::Failed
        }
    }

    /// `green`, `RED`, `not tested`: the word the run's end uses.
    pub fn word(self) -> &'static str {
        match self {
            Self::Passed => "green",
            Self::Failed => "RED",
            Self::NotTested => "not tested",
        }
    }
}

/// One test of a tree the run's branch would hold (a candidate merge), or holds (the project's
/// tree after a phase that worked in it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeProof {
    /// The commit tested: the merge commit that lands as it is, or the last commit of a phase
    /// that worked in the project's tree.
    pub commit: String,
    /// Its tree: what was tested (any commit with this tree has these files).
    pub tree: String,
    /// The commit of the run's branch (or of the candidate under it) it was built on.
    pub base: String,
    /// Which try of its phase this was: 1 for the first.
    pub attempt: u32,
    /// Built on a candidate that had not landed yet: tested ahead of its turn.
    #[serde(default, skip_serializing_if = "Not::not")]
    pub ahead: bool,
    /// [`TreeVerdict::of`] the test.
    pub outcome: TreeVerdict,
    /// The commands and what they reported.
    #[serde(flatten)]
    pub test: TreeTest,
    /// When the test ended (RFC 3339, UTC).
    pub tested_at: String,
    /// How long the test took, in milliseconds.
    pub elapsed_ms: u64,
}

impl MergeProof {
    /// The text of the git note: what was tested, where, with which commands and results.
    /// `what` says what the commit is, e.g. `merge of phase feature of workflow run r, tested
    /// before it landed on main`.
    pub fn note_text(&self, what: &str) -> String {
        let mut text = format!("Context Pilot: {what}\n");
        let _ = writeln!(text, "tree {}", self.tree);
        if let Some(host) = &self.test.host {
            let _ = writeln!(
                text,
                "tested on host {} (it checked out tree {}; sending took {} ms)",
                host.host, host.tree, host.transfer_ms
            );
        } else {
            let _ = writeln!(text, "tested on the run's machine, {}", machine_name());
        }
        let _ = writeln!(text, "attempt {}", self.attempt);
        let _ = writeln!(text, "result: {}", self.outcome.word());
        if self.test.runs.is_empty() {
            let _ = writeln!(
                text,
                "no test ran: {}",
                self.test.note.as_deref().unwrap_or("no test command")
            );
        }
        for run in &self.test.runs {
            let _ = writeln!(text, "{}", run.summary());
        }
        let _ = write!(text, "tested at {}", self.tested_at);
        text
    }
}

/// This machine's name: the kernel's host name, else `/etc/hostname`, else `localhost`.
pub fn machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|n| n.trim().to_owned())
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Whether the run's branch is green as the run leaves it, and how that was established.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchVerdict {
    /// The run's branch (`HEAD` when detached).
    pub branch: String,
    /// Its commit.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// What the test of that tree said.
    pub outcome: TreeVerdict,
    /// How it was established, for the person: which test of which tree, and what it found.
    pub how: String,
}

impl fmt::Display for BranchVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "branch {} is {} at {}: {}",
            self.branch,
            self.outcome.word(),
            self.commit.get(..12).unwrap_or(&self.commit),
            self.how
        )
    }
}

/// What the merge queue's tests cost the run: the combined trees tested, how many of them
/// ahead of their turn (on a candidate not landed yet), how many of those were thrown away
/// because a candidate under them failed, and the time spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueCost {
    /// Combined trees whose test ran to its end.
    pub tested: u32,
    /// Of those, or started: built on a candidate that had not landed.
    pub ahead: u32,
    /// Tests ahead of their turn thrown away (stopped, or their result unused).
    pub discarded: u32,
    /// Milliseconds of tests, all of them.
    pub test_ms: u64,
    /// Milliseconds of the tests thrown away.
    pub discarded_ms: u64,
}

impl QueueCost {
    /// Whether the queue tested anything.
    pub fn is_empty(&self) -> bool {
        self.tested == 0 && self.discarded == 0
    }
}

impl fmt::Display for QueueCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        #[expect(
            clippy::cast_precision_loss,
            reason = "milliseconds shown as seconds with one decimal"
        )]
        let (all, lost) = (
            self.test_ms as f64 / 1000.0,
            self.discarded_ms as f64 / 1000.0,
        );
        write!(
            f,
            "merge queue: {} combined tree{} tested ({} ahead of {} turn, {} thrown away: \
             {lost:.1} s), {all:.1} s of tests",
            self.tested,
            if self.tested == 1 { "" } else { "s" },
            self.ahead,
            if self.ahead == 1 { "its" } else { "their" },
            self.discarded,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::tester::CommandRun;

    #[test]
    fn the_note_says_the_tree_the_commands_and_the_result() {
        let proof = MergeProof {
            commit: "c0ffee".into(),
            tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            base: "base".into(),
            attempt: 2,
            ahead: false,
            outcome: TreeVerdict::Passed,
            test: TreeTest {
                runs: vec![CommandRun {
                    command: "python3 -m unittest".into(),
                    exit: "exit 0".into(),
                    exit_code: Some(0),
                    passed: true,
                    tests_passed: Some(3),
                    tests_failed: Some(0),
                    elapsed_ms: 400,
                    ..CommandRun::default()
                }],
                note: None,
                host: None,
            },
            tested_at: "2026-11-27T10:00:00.000Z".into(),
            elapsed_ms: 450,
        };
        assert_eq!(
            proof.note_text("merge of phase feature, tested before it landed on main"),
            format!(
                "Context Pilot: merge of phase feature, tested before it landed on main\n\
             tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\
             tested on the run's machine, {}\nattempt 2\nresult: green\n\
             python3 -m unittest: exit 0, 3 passed, 0 failed, 0.4 s\n\
             tested at 2026-11-27T10:00:00.000Z",
                machine_name()
            )
        );
        let json = serde_json::to_value(&proof).unwrap();
        assert_eq!(json["runs"][0]["exit_code"], 0, "{json}");
        assert_eq!(json["outcome"], "passed", "{json}");
    }

    #[test]
    fn the_cost_line_counts_trees_and_time() {
        let cost = QueueCost {
            tested: 3,
            ahead: 1,
            discarded: 1,
            test_ms: 4200,
            discarded_ms: 900,
        };
        assert_eq!(
            cost.to_string(),
            "merge queue: 3 combined trees tested (1 ahead of its turn, 1 thrown away: 0.9 s), \
             4.2 s of tests"
        );
    }
}
