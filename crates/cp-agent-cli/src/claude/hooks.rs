//! Claude Code's hooks: what `init` writes into a project (`.mcp.json`, and in
//! `.claude/settings.json` a `PostToolUse` hook for the edit tools, a `Stop` hook and a
//! `SessionStart` hook, which records where the session began and prints nothing), and
//! what a hook answers, in Claude Code's documented format:
//!
//! - `PostToolUse`: `hookSpecificOutput.additionalContext` adds text for the model;
//!   `{"decision": "block", "reason": …}` prompts it with the reason.
//! - `Stop`: `{"decision": "block", "reason": …}` keeps it working; no output lets it stop.
//! - `{"systemMessage": …}` without a decision lets it stop and shows the text to the user.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::SPEC;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::{
    Apply, HOOK_TIMEOUT_SECS, SettingsFile, ensure_hook, hook_command, set_server,
};
use crate::settings_json::Json;

/// The stdout of a hook, if any.
pub(super) fn reply(kind: EventKind, reply: &Reply) -> Option<String> {
    let value: Option<Value> = match (kind, reply) {
        (_, Reply::Nothing) | (EventKind::Stop | EventKind::SessionStart, Reply::Context(_)) => {
            None
        }
        (EventKind::AfterEdit, Reply::Context(text)) => Some(json!({
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}
        })),
        (_, Reply::Block(reason)) => Some(json!({"decision": "block", "reason": reason})),
        (_, Reply::Notice(text)) => Some(json!({"systemMessage": text})),
    };
    value.map(|v| v.to_string())
}

/// `.mcp.json` gets the MCP server; `.claude/settings.json` gets the hooks.
pub(super) fn project_settings(program: &str) -> Vec<SettingsFile> {
    let program = program.to_owned();
    let hooks_program = program.clone();
    vec![
        SettingsFile {
            path: PathBuf::from(".mcp.json"),
            apply: Apply::Json(Box::new(move |doc| set_server(doc, &program))),
        },
        SettingsFile {
            path: PathBuf::from(".claude/settings.json"),
            apply: Apply::Json(Box::new(move |doc| {
                for event in SPEC.hook_events {
                    let hook = Json::object([
                        ("type", Json::str("command")),
                        (
                            "command",
                            Json::str(hook_command(&hooks_program, event.cli_name)),
                        ),
                        ("timeout", Json::Number(HOOK_TIMEOUT_SECS.into())),
                    ]);
                    let matcher = (event.kind == EventKind::AfterEdit).then(|| SPEC.edit_matcher());
                    ensure_hook(doc, event.name, matcher.as_deref(), event.cli_name, hook)?;
                }
                Ok(())
            })),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(kind: EventKind, reply_: &Reply) -> Option<Value> {
        reply(kind, reply_).map(|s| serde_json::from_str(&s).unwrap())
    }

    #[test]
    fn claude_formats() {
        let ctx = parsed(EventKind::AfterEdit, &Reply::Context("ok".into())).unwrap();
        assert_eq!(ctx["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(ctx["hookSpecificOutput"]["additionalContext"], "ok");
        let block = parsed(EventKind::Stop, &Reply::Block("commit".into())).unwrap();
        assert_eq!(block, json!({"decision": "block", "reason": "commit"}));
        assert_eq!(reply(EventKind::Stop, &Reply::Nothing), None);
    }

    #[test]
    fn a_notice_lets_the_agent_stop_and_tells_the_user() {
        let out = parsed(EventKind::Stop, &Reply::Notice("left: a.rs".into()));
        assert_eq!(out.unwrap(), json!({"systemMessage": "left: a.rs"}));
    }

    #[test]
    fn the_edit_matcher_names_every_edit_tool() {
        assert_eq!(
            SPEC.edit_matcher(),
            "Write|Edit|MultiEdit|NotebookEdit|Bash"
        );
    }
}
