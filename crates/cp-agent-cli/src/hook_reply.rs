//! A hook's decision, before an agent's descriptor writes it in that agent's documented
//! format ([`AgentCli::hook_reply`](crate::AgentCli::hook_reply)).
//!
//! Exit code 0 in every case: the agents read a hook's stdout only then. Both agents show a
//! reply's `systemMessage` to the user.

use serde_json::{Value, json};

/// What Context Pilot does at a hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// After one file edit tool (or shell tool): fire callbacks for its files.
    AfterEdit,
    /// After every tool call of a batch resolved, before the next model request: fire
    /// callbacks once for the files of the whole batch, as the built-in agent does.
    AfterBatch,
    /// The agent ends its turn: run the stop gate.
    Stop,
    /// A subagent ends: hold it while its own edits are untested, red, or (in a worktree)
    /// uncommitted; never a subagent that edited nothing, nor the agent's compaction.
    SubagentStop,
    /// The agent's session begins, or begins again after a compaction: record where HEAD is
    /// at the session's first event, so the stop gate checks what the session commits as well
    /// as what it leaves uncommitted; after a compaction (source `compact`) also put the latest
    /// handoff and the stop gate's open items back into the context.
    SessionStart,
}

impl EventKind {
    /// Whether it decides if an agent (or a subagent) may stop.
    pub fn is_stop(self) -> bool {
        matches!(self, Self::Stop | Self::SubagentStop)
    }

    /// Whether it fires callbacks for edited files.
    pub fn fires_callbacks(self) -> bool {
        matches!(self, Self::AfterEdit | Self::AfterBatch)
    }

    /// What it does, for help texts: "fire callbacks for the edited files".
    pub fn does(self) -> &'static str {
        match self {
            Self::AfterEdit => "fire callbacks for the edited files",
            Self::AfterBatch => "fire callbacks once for the files of the whole tool batch",
            Self::Stop => "run the stop gate",
            Self::SubagentStop => "run the stop gate for a subagent that edited files",
            Self::SessionStart => {
                "record where the session began; after compaction, put the latest handoff and \
                 the stop gate's open items back"
            }
        }
    }
}

/// The decision of a hook, before formatting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Nothing to say.
    Nothing,
    /// Text for the agent (callback results, notifications); all is well.
    Context(String),
    /// Text the agent must act on: a failed callback, or a stop the checkpoint blocks.
    Block(String),
    /// The agent may stop, and the person (not the model) reads this: the checkpoint's
    /// block limit was reached with work left. Both agents show `systemMessage` to the user.
    Notice(String),
}

/// A reply (`None`: no output) with `message` added as its `systemMessage`, after any
/// message it already has.
pub fn with_system_message(stdout: Option<&str>, message: &str) -> String {
    let mut value = stdout
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let text = match value.get("systemMessage").and_then(Value::as_str) {
        Some(existing) => format!("{existing}\n{message}"),
        None => message.to_owned(),
    };
    value["systemMessage"] = Value::String(text);
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_message_joins_the_one_a_reply_has() {
        assert_eq!(
            with_system_message(None, "config problem"),
            r#"{"systemMessage":"config problem"}"#
        );
        let joined = with_system_message(Some(r#"{"systemMessage":"a"}"#), "b");
        assert_eq!(joined, r#"{"systemMessage":"a\nb"}"#);
    }
}
