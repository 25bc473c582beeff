//! What a hook writes to stdout, in each agent's documented format.
//!
//! - Claude Code `PostToolUse`: `hookSpecificOutput.additionalContext` adds text for the model;
//!   `{"decision": "block", "reason": …}` prompts it with the reason. Stop:
//!   `{"decision": "block", "reason": …}` keeps it working; no output lets it stop.
//! - Gemini CLI `AfterTool`: `hookSpecificOutput.additionalContext` is appended to the tool
//!   result (`decision: "deny"` would replace the result, hiding the edit's own outcome, so
//!   failures use the same field plus a `systemMessage` for the user). `AfterAgent`:
//!   `{"decision": "deny", "reason": …}` rejects the response and sends the reason as a retry
//!   prompt. Gemini parses stdout as JSON, so "nothing" is `{}`.
//! - Both: `{"systemMessage": …}` without a decision lets the agent stop and shows the text
//!   to the user (the checkpoint's block limit was reached with work left).
//!
//! Exit code 0 in every case: both agents read stdout only then.

use serde_json::{Value, json};

/// The agent whose conventions a hook follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Gemini,
}

/// The two kinds of hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// After a file edit tool: fire callbacks.
    AfterEdit,
    /// The agent ends its turn: run the stop checkpoint.
    Stop,
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

const GEMINI_FAILURE_NOTICE: &str =
    "Context Pilot: a callback failed after this edit; the details were added to the tool result.";

/// The stdout of the hook, if any.
pub fn render(agent: Agent, kind: EventKind, reply: &Reply) -> Option<String> {
    let value: Option<Value> = match (agent, kind, reply) {
        (Agent::Claude, _, Reply::Nothing)
        | (Agent::Claude, EventKind::Stop, Reply::Context(_)) => None,
        (Agent::Claude, EventKind::AfterEdit, Reply::Context(text)) => Some(json!({
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}
        })),
        (Agent::Claude, _, Reply::Block(reason)) => {
            Some(json!({"decision": "block", "reason": reason}))
        }
        (Agent::Gemini, _, Reply::Nothing)
        | (Agent::Gemini, EventKind::Stop, Reply::Context(_)) => Some(json!({})),
        (Agent::Gemini, EventKind::AfterEdit, Reply::Context(text)) => Some(json!({
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": text}
        })),
        (Agent::Gemini, EventKind::AfterEdit, Reply::Block(text)) => Some(json!({
            "systemMessage": GEMINI_FAILURE_NOTICE,
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": text}
        })),
        (Agent::Gemini, EventKind::Stop, Reply::Block(reason)) => {
            Some(json!({"decision": "deny", "reason": reason}))
        }
        (_, _, Reply::Notice(text)) => Some(json!({"systemMessage": text})),
    };
    value.map(|v| v.to_string())
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

    fn parsed(agent: Agent, kind: EventKind, reply: &Reply) -> Option<Value> {
        render(agent, kind, reply).map(|s| serde_json::from_str(&s).unwrap())
    }

    #[test]
    fn claude_formats() {
        let ctx = parsed(
            Agent::Claude,
            EventKind::AfterEdit,
            &Reply::Context("ok".into()),
        )
        .unwrap();
        assert_eq!(ctx["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(ctx["hookSpecificOutput"]["additionalContext"], "ok");
        let block = parsed(
            Agent::Claude,
            EventKind::Stop,
            &Reply::Block("commit".into()),
        )
        .unwrap();
        assert_eq!(block, json!({"decision": "block", "reason": "commit"}));
        assert_eq!(
            render(Agent::Claude, EventKind::Stop, &Reply::Nothing),
            None
        );
    }

    #[test]
    fn gemini_formats() {
        let retry = parsed(
            Agent::Gemini,
            EventKind::Stop,
            &Reply::Block("run tests".into()),
        )
        .unwrap();
        assert_eq!(retry, json!({"decision": "deny", "reason": "run tests"}));
        assert_eq!(
            parsed(Agent::Gemini, EventKind::Stop, &Reply::Nothing).unwrap(),
            json!({})
        );
        let failed = parsed(
            Agent::Gemini,
            EventKind::AfterEdit,
            &Reply::Block("FAILED".into()),
        )
        .unwrap();
        assert_eq!(failed["hookSpecificOutput"]["additionalContext"], "FAILED");
        assert_eq!(failed["hookSpecificOutput"]["hookEventName"], "AfterTool");
        assert!(
            failed.get("decision").is_none(),
            "must not hide the edit's result"
        );
    }

    #[test]
    fn a_notice_lets_the_agent_stop_and_tells_the_user() {
        for agent in [Agent::Claude, Agent::Gemini] {
            let out = parsed(agent, EventKind::Stop, &Reply::Notice("left: a.rs".into()));
            assert_eq!(out.unwrap(), json!({"systemMessage": "left: a.rs"}));
        }
    }
}
