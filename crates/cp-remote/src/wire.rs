//! What crosses the connection of `context-pilot test-tree --json`: one request line in, one
//! event per line out, the last a `result` (or a `refused` or an `error`).

use cp_orchestrate::{CommandRun, TreeTest};
use serde::{Deserialize, Serialize};

/// What the run asks: test `commit` (already sent into the clone of `project`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRequest {
    /// The project's key (see [`project_key`](crate::project_key)).
    pub project: String,
    /// The candidate commit.
    pub commit: String,
    /// The files in which it differs from the last tree known to pass.
    #[serde(default)]
    pub changed: Vec<String>,
    /// Only check that the host could test it (git, the clone, trust), and say `ready`.
    #[serde(default)]
    pub check_only: bool,
}

/// One line the remote side prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TestEvent {
    /// The candidate is checked out: this tree is what will be tested.
    CheckedOut {
        host: String,
        commit: String,
        tree: String,
    },
    /// The host could test it (a `check_only` request).
    Ready { host: String, tree: String },
    /// The test still runs (every few seconds; the run ignores it, the host learns from
    /// writing it whether the run is still there).
    Alive,
    /// A test command ended.
    Command { run: CommandRun },
    /// The test's end: the host, the tree it checked out, and what the test found.
    Result {
        host: String,
        commit: String,
        tree: String,
        test: TreeTest,
    },
    /// The project is not trusted there (or another reason the host will not run it).
    Refused { host: String, reason: String },
    /// Something failed before a result.
    Error { message: String },
}
