//! Gemini CLI's hooks: what `init` writes into a project (`.gemini/settings.json` gets the
//! MCP server under `mcpServers` and the `AfterTool` and `AfterAgent` hooks), what a run adds
//! (`AfterModel`), and what a hook answers, in Gemini CLI's documented format:
//!
//! - `AfterTool`: `hookSpecificOutput.additionalContext` is appended to the tool result
//!   (`decision: "deny"` would replace the result, hiding the edit's own outcome, so failures
//!   use the same field plus a `systemMessage` for the user).
//! - `AfterAgent`: `{"decision": "deny", "reason": …}` rejects the response and sends the
//!   reason as a retry prompt.
//! - Gemini CLI parses stdout as JSON, so "nothing" is `{}`; `{"systemMessage": …}` without
//!   a decision lets it stop and shows the text to the user.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::SPEC;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::{
    Apply, HOOK_TIMEOUT_SECS, SettingsFile, ensure_hook, hook_command, hooks_of, remove_hook,
    set_server,
};
use crate::settings_json::Json;
use crate::spec::Version;

const FAILURE_NOTICE: &str =
    "Context Pilot: a callback failed after this edit; the details were added to the tool result.";

/// The stdout of a hook: always a JSON object.
pub(super) fn reply(kind: EventKind, reply: &Reply) -> String {
    let value = match (kind, reply) {
        // No session-start event is wired here (its `SessionStart` never follows a
        // compression); were one, nothing would be said to the agent then.
        (_, Reply::Nothing)
        | (EventKind::Stop | EventKind::SubagentStop, Reply::Context(_))
        | (EventKind::SessionStart, Reply::Context(_) | Reply::Block(_)) => json!({}),
        (EventKind::AfterEdit | EventKind::AfterBatch, Reply::Context(text)) => json!({
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": text}
        }),
        (EventKind::AfterEdit | EventKind::AfterBatch, Reply::Block(text)) => json!({
            "systemMessage": FAILURE_NOTICE,
            "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": text}
        }),
        (EventKind::Stop | EventKind::SubagentStop, Reply::Block(reason)) => {
            json!({"decision": "deny", "reason": reason})
        }
        (_, Reply::Notice(text)) => json!({"systemMessage": text}),
    };
    value.to_string()
}

/// `.gemini/settings.json` gets the MCP server and the hooks, each with Gemini CLI's `name`
/// and `description` (and a timeout in milliseconds).
pub(super) fn project_settings(program: &str, version: Option<Version>) -> Vec<SettingsFile> {
    let program = program.to_owned();
    vec![SettingsFile {
        path: PathBuf::from(".gemini/settings.json"),
        apply: Apply::Json(Box::new(move |doc| {
            set_server(doc, &program)?;
            for event in SPEC.hook_events {
                if !event.wired_for(version) {
                    remove_hook(doc, event.name, event.cli_name)?;
                    continue;
                }
                let (name, description) = match event.kind {
                    EventKind::AfterEdit | EventKind::AfterBatch => (
                        "context-pilot-callbacks",
                        "Context Pilot: run file-edit callbacks",
                    ),
                    EventKind::Stop | EventKind::SubagentStop => {
                        ("context-pilot-checkpoint", "Context Pilot: stop gate")
                    }
                    EventKind::SessionStart => (
                        "context-pilot-session",
                        "Context Pilot: where the session began, for the stop gate",
                    ),
                };
                let hook = Json::object([
                    ("name", Json::str(name)),
                    ("type", Json::str("command")),
                    ("command", Json::str(hook_command(&program, event.cli_name))),
                    ("description", Json::str(description)),
                    ("timeout", Json::Number((HOOK_TIMEOUT_SECS * 1000).into())),
                ]);
                let matcher = SPEC.matcher_of(event);
                ensure_hook(doc, event.name, matcher.as_deref(), event.cli_name, hook)?;
            }
            Ok(())
        })),
    }]
}

/// The hooks of a run: those `init` writes, and the `AfterModel` hook reporting each
/// response's prompt size to the run, which Gemini CLI's stream does not say. `init` does not
/// write that one: outside a run nobody reads it, and Gemini CLI runs it for every streamed
/// chunk.
pub(super) fn run_hooks(program: &str, version: Option<Version>) -> Value {
    let mut doc = hooks_of(project_settings(program, version));
    doc["hooks"]["AfterModel"] = usage_hook(program);
    doc
}

/// The `AfterModel` hook (`context-pilot model-usage`). Seconds are generous; it takes
/// milliseconds.
fn usage_hook(program: &str) -> Value {
    json!([{"hooks": [{
        "name": "context-pilot-usage",
        "type": "command",
        "command": format!("{} model-usage", cp_base::shell_word(program)),
        "description": "Context Pilot: the prompt size of each response, for smart restart",
        "timeout": 10_000,
    }]}])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(kind: EventKind, reply_: &Reply) -> Value {
        serde_json::from_str(&reply(kind, reply_)).unwrap()
    }

    #[test]
    fn gemini_formats() {
        let retry = parsed(EventKind::Stop, &Reply::Block("run tests".into()));
        assert_eq!(retry, json!({"decision": "deny", "reason": "run tests"}));
        assert_eq!(parsed(EventKind::Stop, &Reply::Nothing), json!({}));
        let failed = parsed(EventKind::AfterEdit, &Reply::Block("FAILED".into()));
        assert_eq!(failed["hookSpecificOutput"]["additionalContext"], "FAILED");
        assert_eq!(failed["hookSpecificOutput"]["hookEventName"], "AfterTool");
        assert!(
            failed.get("decision").is_none(),
            "must not hide the edit's result"
        );
    }

    #[test]
    fn a_notice_lets_the_agent_stop_and_tells_the_user() {
        let out = parsed(EventKind::Stop, &Reply::Notice("left: a.rs".into()));
        assert_eq!(out, json!({"systemMessage": "left: a.rs"}));
    }

    #[test]
    fn a_run_adds_the_usage_hook_init_does_not_write() {
        let run = run_hooks("context-pilot", None);
        assert_eq!(
            run["hooks"]["AfterModel"][0]["hooks"][0]["command"],
            "context-pilot model-usage"
        );
        assert!(
            hooks_of(project_settings("context-pilot", None))["hooks"]
                .get("AfterModel")
                .is_none()
        );
        assert_eq!(SPEC.edit_matcher(), "write_file|replace|run_shell_command");
    }
}
