//! Claude Code's hooks: what `init` writes into a project (`.mcp.json`, and in
//! `.claude/settings.json` the hooks of the installed version's wiring: `PostToolBatch`, or
//! `PostToolUse` for the edit tools before 2.1.118; `Stop`; `SubagentStop`; `SessionStart`),
//! and what a hook answers, in Claude Code's format (read from its own hook reference,
//! `--help` and bundle, and measured with the scripted server):
//!
//! - `PostToolUse`: `hookSpecificOutput.additionalContext` adds text for the model;
//!   `{"decision": "block", "reason": …}` prompts it with the reason.
//! - `PostToolBatch`: `hookSpecificOutput.additionalContext` reaches the model once for the
//!   whole batch (after the batch's last tool result). A block there stops the agentic loop,
//!   so a failed callback is said as context too, with a `systemMessage` for the person.
//! - `Stop` and `SubagentStop`: `{"decision": "block", "reason": …}` keeps the agent (or the
//!   subagent) working; no output lets it stop.
//! - `SessionStart`: records where the session began and says nothing; with source
//!   `compact`, `hookSpecificOutput.additionalContext` is given to the model in the first
//!   request after the compaction.
//! - `{"systemMessage": …}` without a decision lets it stop and shows the text to the user.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::SPEC;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::{
    Apply, HOOK_TIMEOUT_SECS, SettingsFile, ensure_hook, hook_command, remove_hook, set_server,
};
use crate::settings_json::Json;
use crate::spec::Version;

/// Shown with a failed callback's result at `PostToolBatch`, which reaches the model as
/// context.
const FAILURE_NOTICE: &str =
    "Context Pilot: a callback failed after this batch; the details were given to the model.";

/// The stdout of a hook, if any.
pub(super) fn reply(kind: EventKind, reply: &Reply) -> Option<String> {
    let context = |event: &str, text: &str| json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
    let value: Option<Value> = match (kind, reply) {
        (_, Reply::Nothing)
        | (EventKind::Stop | EventKind::SubagentStop, Reply::Context(_))
        | (EventKind::SessionStart, Reply::Block(_)) => None,
        (EventKind::AfterEdit, Reply::Context(text)) => Some(context("PostToolUse", text)),
        (EventKind::AfterBatch, Reply::Context(text)) => Some(context("PostToolBatch", text)),
        (EventKind::AfterBatch, Reply::Block(text)) => {
            let mut value = context("PostToolBatch", text);
            value["systemMessage"] = json!(FAILURE_NOTICE);
            Some(value)
        }
        (EventKind::SessionStart, Reply::Context(text)) => Some(context("SessionStart", text)),
        (
            EventKind::AfterEdit | EventKind::Stop | EventKind::SubagentStop,
            Reply::Block(reason),
        ) => Some(json!({"decision": "block", "reason": reason})),
        (_, Reply::Notice(text)) => Some(json!({"systemMessage": text})),
    };
    value.map(|v| v.to_string())
}

/// `.mcp.json` gets the MCP server; `.claude/settings.json` gets the hooks of `version`'s
/// wiring, and loses ours of events that wiring does not have (an upgrade from `PostToolUse`
/// to `PostToolBatch` must not fire callbacks twice).
pub(super) fn project_settings(program: &str, version: Option<Version>) -> Vec<SettingsFile> {
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
                    if !event.wired_for(version) {
                        remove_hook(doc, event.name, event.cli_name)?;
                        continue;
                    }
                    let hook = Json::object([
                        ("type", Json::str("command")),
                        (
                            "command",
                            Json::str(hook_command(&hooks_program, event.cli_name)),
                        ),
                        ("timeout", Json::Number(HOOK_TIMEOUT_SECS.into())),
                    ]);
                    let matcher = SPEC.matcher_of(event);
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
    use crate::settings_json::Json;

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
    fn a_batch_failure_is_context_for_the_model_and_a_notice_for_the_person() {
        // A block at PostToolBatch would stop the agentic loop.
        let failed = parsed(EventKind::AfterBatch, &Reply::Block("FAILED".into())).unwrap();
        assert_eq!(
            failed["hookSpecificOutput"]["hookEventName"],
            "PostToolBatch"
        );
        assert_eq!(failed["hookSpecificOutput"]["additionalContext"], "FAILED");
        assert!(failed.get("decision").is_none(), "{failed}");
        assert!(failed["systemMessage"].is_string(), "{failed}");
        let held = parsed(EventKind::SubagentStop, &Reply::Block("red".into())).unwrap();
        assert_eq!(held, json!({"decision": "block", "reason": "red"}));
        let back = parsed(EventKind::SessionStart, &Reply::Context("handoff".into())).unwrap();
        assert_eq!(back["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(back["hookSpecificOutput"]["additionalContext"], "handoff");
    }

    /// `.claude/settings.json` as `init` leaves it for `version`, starting from `before`.
    fn settings(before: &str, version: Option<Version>) -> Value {
        let file = project_settings("context-pilot", version).pop().unwrap();
        let Apply::Json(apply) = file.apply else {
            panic!("Claude Code's settings are JSON")
        };
        let mut doc: Json = serde_json::from_str(before).unwrap();
        apply(&mut doc).unwrap();
        serde_json::to_value(&doc).unwrap()
    }

    #[test]
    fn each_version_gets_its_own_wiring_and_an_upgrade_drops_the_old_edit_hook() {
        let old = settings("{}", Some((2, 1, 117)));
        let mut events: Vec<&String> = old["hooks"].as_object().unwrap().keys().collect();
        events.sort();
        assert_eq!(
            events,
            ["PostToolUse", "SessionStart", "Stop", "SubagentStop"]
        );
        assert_eq!(
            old["hooks"]["PostToolUse"][0]["matcher"],
            "Write|Edit|MultiEdit|NotebookEdit|Bash"
        );
        // Every start, compaction included: where the session began, and the handoff back.
        assert!(
            old["hooks"]["SessionStart"][0].get("matcher").is_none(),
            "{old}"
        );
        assert_eq!(
            old["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "context-pilot hook session-start"
        );
        // Before 2.1.69 there is no SubagentStop hook: the compaction agent looks like any other.
        let older = settings("{}", Some((2, 1, 68)));
        assert!(older["hooks"].get("SubagentStop").is_none(), "{older}");

        // The person upgrades and runs init again: callbacks move to PostToolBatch, and the
        // user's own PostToolUse hook stays.
        let mut mine = old.clone();
        mine["hooks"]["PostToolUse"].as_array_mut().unwrap().push(
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}),
        );
        let new = settings(&mine.to_string(), Some((2, 1, 332)));
        assert_eq!(
            new["hooks"]["PostToolUse"],
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}])
        );
        let batch = &new["hooks"]["PostToolBatch"][0];
        assert!(batch.get("matcher").is_none(), "{batch}");
        assert_eq!(
            batch["hooks"][0]["command"],
            "context-pilot hook post-tool-batch"
        );
        // Unknown version (not installed): the newest release's wiring.
        assert_eq!(settings("{}", None), settings("{}", Some((2, 1, 332))));
    }

    #[test]
    fn the_edit_matcher_names_every_edit_tool() {
        assert_eq!(
            SPEC.edit_matcher(),
            "Write|Edit|MultiEdit|NotebookEdit|Bash"
        );
    }
}
