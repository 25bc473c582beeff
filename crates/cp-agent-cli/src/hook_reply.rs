//! A hook's decision, before an agent's descriptor writes it in that agent's documented
//! format ([`AgentCli::hook_reply`](crate::AgentCli::hook_reply)).
//!
//! Exit code 0 in every case: the agents read a hook's stdout only then. Both agents show a
//! reply's `systemMessage` to the user.

use serde_json::{Value, json};

/// The kinds of hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// After a file edit tool: fire callbacks.
    AfterEdit,
    /// The agent ends its turn: run the stop gate.
    Stop,
    /// The agent's session begins: record where HEAD is, so the stop gate checks what the
    /// session commits as well as what it leaves uncommitted. Nothing is said to the agent.
    SessionStart,
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
