//! Codex CLI's hooks: what `init` merges into the project's `.codex/config.toml` (the MCP
//! server under `[mcp_servers.context-pilot]`, and a `[[hooks.<Event>]]` group for each event
//! of the installed version's wiring — `PostToolUse`, `Stop`, `SubagentStop`, `SessionStart`
//! with `matcher = "compact"` — each with one `[[hooks.X.hooks]]` command), the trust steps
//! Codex needs before it runs them, and what a hook answers. The replies have Claude Code's
//! shape:
//!
//! - `PostToolUse`: `hookSpecificOutput.additionalContext` reaches the model as a developer
//!   message. A failed callback is said the same way, with a `systemMessage` for the person:
//!   Codex's `decision: block` there would *replace* the tool's output.
//! - `Stop` and `SubagentStop`: `{"decision": "block", "reason": …}` becomes the (sub)agent's
//!   next user message. Codex has no cap of its own on these, so the stop gate's `max_blocks`
//!   is all that bounds it.
//! - `SessionStart` (source `compact`): `hookSpecificOutput.additionalContext` reaches the
//!   first request after the compaction as a developer message. (`PreCompact` and
//!   `PostCompact` take no context for the model.)
//! - `{"systemMessage": …}` without a decision lets it stop and shows the text to the user.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};

use super::SPEC;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::{
    Apply, HOOK_TIMEOUT_SECS, SettingsFile, ShapeError, hook_command, is_our_command,
    toml_array_of_tables, toml_table,
};
use crate::spec::Version;
use crate::wiring::MCP_SERVER;

/// Shown with a failed callback's result, which reaches the model as context.
const FAILURE_NOTICE: &str =
    "Context Pilot: a callback failed after this edit; the details were given to the model.";

/// The stdout of a hook, if any.
pub(super) fn reply(kind: EventKind, reply: &Reply) -> Option<String> {
    let value: Option<Value> = match (kind, reply) {
        (_, Reply::Nothing)
        | (EventKind::Stop | EventKind::SubagentStop, Reply::Context(_))
        | (EventKind::SessionStart, Reply::Block(_)) => None,
        (EventKind::AfterEdit | EventKind::AfterBatch, Reply::Context(text)) => Some(json!({
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}
        })),
        (EventKind::AfterEdit | EventKind::AfterBatch, Reply::Block(text)) => Some(json!({
            "systemMessage": FAILURE_NOTICE,
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": text}
        })),
        (EventKind::SessionStart, Reply::Context(text)) => Some(json!({
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
        })),
        (EventKind::Stop | EventKind::SubagentStop, Reply::Block(reason)) => {
            Some(json!({"decision": "block", "reason": reason}))
        }
        (_, Reply::Notice(text)) => Some(json!({"systemMessage": text})),
    };
    value.map(|v| v.to_string())
}

/// `.codex/config.toml` gets the MCP server and the hooks of `version`'s wiring (ours of
/// other events are removed). The `PostToolUse` hook has no matcher: it runs after every
/// tool, so edits through the shell are seen too.
pub(super) fn project_settings(program: &str, version: Option<Version>) -> Vec<SettingsFile> {
    let program = program.to_owned();
    vec![SettingsFile {
        path: PathBuf::from(".codex/config.toml"),
        apply: Apply::Toml(Box::new(move |doc| {
            set_server(doc, &program)?;
            for event in SPEC.hook_events {
                if event.wired_for(version) {
                    ensure_hook(
                        doc,
                        event.name,
                        SPEC.matcher_of(event).as_deref(),
                        &hook_command(&program, event.cli_name),
                        event.cli_name,
                    )?;
                } else {
                    remove_hook(doc, event.name, event.cli_name)?;
                }
            }
            Ok(())
        })),
    }]
}

/// The hooks a run of `version` passes with `-c` (`{"hooks": {"PostToolUse": [{"hooks":
/// [{"type": "command", "command": …, "timeout": …}]}], "SessionStart": [{"matcher":
/// "compact", …}], …}}`): the ones `init` writes.
pub(super) fn run_hooks(program: &str, version: Option<Version>) -> Value {
    let mut hooks = serde_json::Map::new();
    for event in SPEC.wired_events(version) {
        let mut group = json!({"hooks": [{
            "type": "command",
            "command": hook_command(program, event.cli_name),
            "timeout": HOOK_TIMEOUT_SECS,
        }]});
        if let Some(matcher) = SPEC.matcher_of(event) {
            group["matcher"] = json!(matcher);
        }
        hooks.insert(event.name.to_owned(), json!([group]));
    }
    json!({ "hooks": hooks })
}

/// What the person must do in Codex before it reads `.codex/` in `root` and runs the hooks.
pub(super) fn trust_steps(root: &Path) -> String {
    let root = root.display();
    let events: Vec<&str> = SPEC.wired_events(None).map(|event| event.name).collect();
    let events = events.join(", ");
    format!(
        "Codex CLI needs two trust steps before it uses this (Context Pilot never writes into ~/.codex/):\n\
         1. Trust the project, or Codex ignores its whole .codex/ folder (it only prints a warning): \
         start `codex` in {root} and answer the trust prompt, or add to ~/.codex/config.toml:\n\
         \x20    [projects.\"{root}\"]\n\
         \x20    trust_level = \"trusted\"\n\
         2. Review and trust the hooks, or Codex skips them silently: in Codex type `/hooks`, \
         review Context Pilot's hooks ({events}: `… hook codex-…`) and trust them. Codex asks \
         again whenever a hook's command changes.\n"
    )
}

/// `[mcp_servers.context-pilot]` runs `<program> mcp`; its other keys and other servers stay.
fn set_server(doc: &mut DocumentMut, program: &str) -> Result<(), ShapeError> {
    let servers = toml_table(doc.as_table_mut(), "mcp_servers", "mcp_servers")?;
    let entry = toml_table(servers, MCP_SERVER, &format!("mcp_servers.{MCP_SERVER}"))?;
    entry.set_implicit(false);
    if entry.get("command").and_then(Item::as_str) != Some(program) {
        entry.insert("command", value(program));
    }
    let args_ok = entry
        .get("args")
        .and_then(Item::as_array)
        .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|v| v.as_str()) == Some("mcp"));
    if !args_ok {
        entry.insert("args", value(Array::from_iter(["mcp"])));
    }
    Ok(())
}

/// A `[[hooks.<event>]]` group (with `matcher`, if any) with our command, unless one of ours
/// is there already; then that one gets `command` (the binary may have moved), its group the
/// matcher, and all else stays.
fn ensure_hook(
    doc: &mut DocumentMut,
    event: &str,
    matcher: Option<&str>,
    command: &str,
    cli_event: &str,
) -> Result<(), ShapeError> {
    let hooks = toml_table(doc.as_table_mut(), "hooks", "hooks")?;
    let groups = toml_array_of_tables(hooks, event, &format!("hooks.{event}"))?;
    let mut found = false;
    for group in groups.iter_mut() {
        let Some(items) = group
            .get_mut("hooks")
            .and_then(Item::as_array_of_tables_mut)
        else {
            continue;
        };
        let mut in_group = false;
        for item in items.iter_mut() {
            let ours = item
                .get("command")
                .and_then(Item::as_str)
                .is_some_and(|c| is_our_command(c, cli_event));
            if ours {
                in_group = true;
                if item.get("command").and_then(Item::as_str) != Some(command) {
                    item.insert("command", value(command));
                }
            }
        }
        if in_group
            && let Some(matcher) = matcher
            && group.get("matcher").and_then(Item::as_str) != Some(matcher)
        {
            group.insert("matcher", value(matcher));
        }
        found |= in_group;
    }
    if !found {
        let mut hook = Table::new();
        hook.insert("type", value("command"));
        hook.insert("command", value(command));
        hook.insert(
            "timeout",
            value(i64::try_from(HOOK_TIMEOUT_SECS).unwrap_or(i64::MAX)),
        );
        let mut items = ArrayOfTables::new();
        items.push(hook);
        let mut group = Table::new();
        if let Some(matcher) = matcher {
            group.insert("matcher", value(matcher));
        }
        group.insert("hooks", Item::ArrayOfTables(items));
        groups.push(group);
    }
    Ok(())
}

/// Removes our command for `cli_event` from `[[hooks.<event>]]`, with a group (and the
/// event) it leaves empty; other hooks stay.
fn remove_hook(doc: &mut DocumentMut, event: &str, cli_event: &str) -> Result<(), ShapeError> {
    let Some(hooks) = doc.get_mut("hooks") else {
        return Ok(());
    };
    let hooks = hooks
        .as_table_mut()
        .ok_or_else(|| ShapeError::new("hooks", "a table"))?;
    let Some(groups) = hooks.get_mut(event).and_then(Item::as_array_of_tables_mut) else {
        return Ok(());
    };
    let mut removed = false;
    groups.retain(|group| {
        let Some(items) = group.get("hooks").and_then(Item::as_array_of_tables) else {
            return true;
        };
        let ours = items.iter().any(|item| {
            item.get("command")
                .and_then(Item::as_str)
                .is_some_and(|c| is_our_command(c, cli_event))
        });
        if !ours {
            return true;
        }
        removed = true;
        // A group with commands of the user's keeps them (see below).
        items.iter().any(|item| {
            !item
                .get("command")
                .and_then(Item::as_str)
                .is_some_and(|c| is_our_command(c, cli_event))
        })
    });
    for group in groups.iter_mut() {
        if let Some(items) = group
            .get_mut("hooks")
            .and_then(Item::as_array_of_tables_mut)
        {
            items.retain(|item| {
                !item
                    .get("command")
                    .and_then(Item::as_str)
                    .is_some_and(|c| is_our_command(c, cli_event))
            });
        }
    }
    if removed && groups.is_empty() {
        hooks.remove(event);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project_settings::merge_toml;

    fn parsed(kind: EventKind, reply_: &Reply) -> Option<Value> {
        reply(kind, reply_).map(|s| serde_json::from_str(&s).unwrap())
    }

    #[test]
    fn codex_formats() {
        let ctx = parsed(EventKind::AfterEdit, &Reply::Context("ok".into())).unwrap();
        assert_eq!(ctx["hookSpecificOutput"]["additionalContext"], "ok");
        let failed = parsed(EventKind::AfterEdit, &Reply::Block("FAILED".into())).unwrap();
        assert_eq!(failed["hookSpecificOutput"]["additionalContext"], "FAILED");
        assert!(
            failed.get("decision").is_none(),
            "must not replace the patch's output"
        );
        let block = parsed(EventKind::Stop, &Reply::Block("commit".into())).unwrap();
        assert_eq!(block, json!({"decision": "block", "reason": "commit"}));
        let notice = parsed(EventKind::Stop, &Reply::Notice("left: a.rs".into())).unwrap();
        assert_eq!(notice, json!({"systemMessage": "left: a.rs"}));
        assert_eq!(reply(EventKind::Stop, &Reply::Nothing), None);
    }

    fn merged(before: Option<&str>, program: &str) -> String {
        let file = project_settings(program, None).pop().unwrap();
        let Apply::Toml(apply) = file.apply else {
            panic!("Codex's settings are TOML")
        };
        merge_toml(apply.as_ref(), before).unwrap()
    }

    #[test]
    fn init_keeps_comments_order_other_servers_and_hooks_and_is_idempotent() {
        let mine = "# my settings\nmodel = \"gpt-5.5\" # pinned\n\n[mcp_servers.other]\ncommand = \"other\"\n\n[[hooks.PostToolUse]]\nmatcher = \"Bash\"\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"echo ran\"\n";
        let once = merged(Some(mine), "/opt/cp/context-pilot");
        // Everything of mine stays, in order; our server joins the other servers.
        let mut rest = once.as_str();
        for line in mine.lines() {
            let at = rest
                .find(line)
                .unwrap_or_else(|| panic!("{line:?} lost or moved: {once}"));
            rest = &rest[at + line.len()..];
        }
        assert!(once.find("[mcp_servers.context-pilot]") < once.find("[[hooks.PostToolUse]]"));
        let doc: toml_edit::DocumentMut = once.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["context-pilot"]["command"].as_str(),
            Some("/opt/cp/context-pilot")
        );
        assert_eq!(
            doc["mcp_servers"]["other"]["command"].as_str(),
            Some("other")
        );
        let post = doc["hooks"]["PostToolUse"].as_array_of_tables().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(
            post.get(1).unwrap()["hooks"][0]["command"].as_str(),
            Some("/opt/cp/context-pilot hook codex-post-tool-use")
        );
        assert_eq!(
            doc["hooks"]["Stop"][0]["hooks"][0]["command"].as_str(),
            Some("/opt/cp/context-pilot hook codex-stop")
        );
        assert_eq!(merged(Some(&once), "/opt/cp/context-pilot"), once);

        // The binary moved: our entries follow it, nothing is duplicated.
        let moved = merged(Some(&once), "context-pilot");
        assert_eq!(moved.matches("hook codex-post-tool-use").count(), 1);
        assert!(
            moved.contains("command = \"context-pilot hook codex-stop\""),
            "{moved}"
        );
    }

    #[test]
    fn inline_tables_are_tables_too() {
        let mine = "mcp_servers = { other = { command = \"other\", args = [\"x\"] } }\n\
                    hooks = { Stop = [{ hooks = [{ type = \"command\", command = \"echo ran\" }] }] }\n";
        let once = merged(Some(mine), "context-pilot");
        let doc: toml_edit::DocumentMut = once.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["other"]["command"].as_str(),
            Some("other")
        );
        assert_eq!(
            doc["mcp_servers"]["context-pilot"]["command"].as_str(),
            Some("context-pilot")
        );
        let stop = doc["hooks"]["Stop"].as_array_of_tables().unwrap();
        assert_eq!(stop.len(), 2, "{once}");
        assert_eq!(
            stop.get(0).unwrap()["hooks"][0]["command"].as_str(),
            Some("echo ran")
        );
        assert_eq!(merged(Some(&once), "context-pilot"), once, "idempotent");
    }

    #[test]
    fn a_fresh_file_has_codex_shape() {
        let text = merged(None, "context-pilot");
        assert!(
            text.contains(
                "[mcp_servers.context-pilot]\ncommand = \"context-pilot\"\nargs = [\"mcp\"]"
            ),
            "{text}"
        );
        assert!(
            text.contains("[[hooks.Stop]]\n\n[[hooks.Stop.hooks]]\ntype = \"command\""),
            "{text}"
        );
    }

    #[test]
    fn the_trust_steps_name_the_project_and_the_screen() {
        let steps = trust_steps(Path::new("/work/app"));
        assert!(steps.contains("[projects.\"/work/app\"]"), "{steps}");
        assert!(steps.contains("trust_level = \"trusted\""), "{steps}");
        assert!(steps.contains("/hooks"), "{steps}");
    }
}
