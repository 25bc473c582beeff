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

/// What the run asks of `context-pilot phase --json`: run phase `phase` from `commit` (already
/// sent into the clone of `project`) on branch `branch`, as the run would run it here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseRequest {
    /// The project's key (see [`project_key`](crate::project_key)).
    pub project: String,
    /// The commit the phase starts from: its base, or the last commit of its work.
    pub commit: String,
    /// The phase's branch (`cp/<run>/<phase>`), made there at `commit`.
    pub branch: String,
    /// The phase's id.
    pub phase: String,
    /// The worker it acts as.
    pub worker: String,
    /// The prompt, as the run built it (approval feedback and handoff folded in).
    pub prompt: String,
    /// The phase's own `agent:`; `None`: the host's configured agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// The restart policy and thresholds in force in the run.
    pub restart: cp_orchestrate::RestartConfig,
}

/// How a phase on a host ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseEnd {
    /// Its agent finished.
    Completed,
    /// Its agent or its restart loop failed.
    Failed,
    /// It was stopped (the run closed the connection).
    Stopped,
}

/// One line `context-pilot phase --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum PhaseEvent {
    /// The phase's commit is checked out on its branch there.
    Started {
        host: String,
        commit: String,
        branch: String,
        /// How long sending the commit took, in milliseconds: filled in by the run (the
        /// host does not know it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent_ms: Option<u64>,
    },
    /// The phase still runs (every few seconds).
    Alive,
    /// What its agent reports (the front-end's own form of it: text, tool calls, notices).
    News { news: serde_json::Value },
    /// A step of its restart loop; a `committed` one says the branch has a new commit to
    /// fetch.
    Restart {
        restart: cp_orchestrate::RestartEvent,
    },
    /// The end: how it ended, why when it failed, the stop gate's last verdict, and the
    /// branch's head there.
    Result {
        host: String,
        end: PhaseEnd,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        verdict: String,
        head: String,
        restarts: u32,
        tokens: u64,
    },
    /// The project is not trusted there (or another reason the host will not run it).
    Refused { host: String, reason: String },
    /// Something failed before the phase started.
    Error { message: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_request_and_its_events_are_one_json_line_each() {
        let request: PhaseRequest = serde_json::from_str(
            r#"{"project": "app-1a2b", "commit": "0123abcd", "branch": "cp/r/api",
                "phase": "api", "worker": "api", "prompt": "Do it.",
                "restart": {"max_restarts": 1}}"#,
        )
        .unwrap();
        assert_eq!(request.restart.max_restarts, 1);
        assert!(request.agent.is_none());
        // Anything else in a request is refused, not ignored.
        assert!(
            serde_json::from_str::<PhaseRequest>(
                r#"{"project": "a", "commit": "b", "branch": "c", "phase": "d",
                    "worker": "e", "prompt": "f", "restart": {}, "key": "sk-…"}"#
            )
            .is_err()
        );
        let committed = r#"{"event":"restart","restart":{"event":"committed","phase":"api","message":"m","commit":"89ab"}}"#;
        let event: PhaseEvent = serde_json::from_str(committed).unwrap();
        assert!(matches!(
            event,
            PhaseEvent::Restart {
                restart: cp_orchestrate::RestartEvent::Committed { commit: Some(ref c), .. }
            } if c == "89ab"
        ));
        let result = PhaseEvent::Result {
            host: "build-1".into(),
            end: PhaseEnd::Completed,
            error: None,
            verdict: "passed".into(),
            head: "89ab".into(),
            restarts: 0,
            tokens: 12,
        };
        let line = serde_json::to_string(&result).unwrap();
        assert!(
            !line.contains('\n') && line.contains(r#""end":"completed""#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<PhaseEvent>(&line).unwrap(), result);
        let started: PhaseEvent = serde_json::from_str(
            r#"{"event":"started","host":"h","commit":"c","branch":"cp/r/api"}"#,
        )
        .unwrap();
        assert!(matches!(started, PhaseEvent::Started { sent_ms: None, .. }));
    }
}
