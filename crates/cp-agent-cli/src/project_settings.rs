//! What `context-pilot init` merges into an agent's project settings, for every agent alike:
//! the MCP server entry, and Context Pilot's hooks, recognised by their command so a second
//! run changes nothing. Each agent's descriptor says which files and which events
//! ([`AgentCli::project_settings`](crate::AgentCli::project_settings)).

use std::path::PathBuf;

use indexmap::IndexMap;

use crate::settings_json::Json;
use crate::wiring::MCP_SERVER;

/// Blocking callbacks and the test run may take a while; the agents' defaults are 60 s.
pub const HOOK_TIMEOUT_SECS: u64 = 600;

/// A settings entry `init` has to change is not what it must be, e.g. `'hooks' is not an
/// object`.
#[derive(Debug, thiserror::Error)]
#[error("'{key}' is not {expected}")]
pub struct ShapeError {
    key: String,
    expected: &'static str,
}

impl ShapeError {
    /// `key` is not `expected`, e.g. `an object`.
    pub fn new(key: impl Into<String>, expected: &'static str) -> Self {
        Self {
            key: key.into(),
            expected,
        }
    }
}

/// Brings a settings document up to date, or says why it cannot: a JSON file (Claude Code,
/// Gemini CLI) or a TOML file edited in place, comments and all (Codex CLI).
pub enum Apply {
    Json(Box<ApplyJson>),
    Toml(Box<ApplyToml>),
}

/// Brings a JSON settings document up to date.
pub type ApplyJson = dyn Fn(&mut Json) -> Result<(), ShapeError>;

/// Brings a TOML settings document up to date, in place.
pub type ApplyToml = dyn Fn(&mut toml_edit::DocumentMut) -> Result<(), ShapeError>;

/// A settings file and how to bring it up to date.
pub struct SettingsFile {
    /// Relative to the project root.
    pub path: PathBuf,
    pub apply: Apply,
}

/// Why a TOML settings file could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum TomlMergeError {
    #[error("it is not valid TOML ({0})")]
    Corrupt(String),
    #[error("{0}")]
    Shape(#[from] ShapeError),
}

/// `before` (the file's text, if any) with `apply` made, keeping comments, key order and
/// everything else; the same text when nothing had to change.
pub fn merge_toml(apply: &ApplyToml, before: Option<&str>) -> Result<String, TomlMergeError> {
    let mut doc: toml_edit::DocumentMut = before
        .unwrap_or_default()
        .parse()
        .map_err(|e: toml_edit::TomlError| TomlMergeError::Corrupt(e.message().to_owned()))?;
    apply(&mut doc)?;
    Ok(doc.to_string())
}

/// The table under `key` in `parent`, made (without a header of its own, so an empty one is
/// not written) when missing. An inline table (`mcp_servers = { other = {…} }`) is the same
/// table to TOML: it becomes a `[key]` section holding the same keys, so ours can join
/// them. Anything else under `key` is a [`ShapeError`] naming `path`.
pub fn toml_table<'a>(
    parent: &'a mut toml_edit::Table,
    key: &str,
    path: &str,
) -> Result<&'a mut toml_edit::Table, ShapeError> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    if let Some(inline) = item.as_inline_table().cloned() {
        *item = toml_edit::Item::Table(inline.into_table());
    }
    item.as_table_mut()
        .ok_or_else(|| ShapeError::new(path.to_owned(), "a table"))
}

/// The array of tables under `key` in `parent`, made when missing; an inline array of
/// tables (`Stop = [{ hooks = […] }]`) becomes `[[key]]` sections holding the same.
pub fn toml_array_of_tables<'a>(
    parent: &'a mut toml_edit::Table,
    key: &str,
    path: &str,
) -> Result<&'a mut toml_edit::ArrayOfTables, ShapeError> {
    let item = parent
        .entry(key)
        .or_insert_with(|| toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()));
    if item
        .as_array()
        .is_some_and(|a| a.iter().all(toml_edit::Value::is_inline_table))
    {
        let taken = std::mem::take(item);
        *item = taken
            .into_array_of_tables()
            .map_or_else(|same| same, toml_edit::Item::ArrayOfTables);
    }
    item.as_array_of_tables_mut()
        .ok_or_else(|| ShapeError::new(path.to_owned(), "an array of tables"))
}

/// The shell command of a hook: the program (quoted when it needs it) and the event.
pub fn hook_command(program: &str, event: &str) -> String {
    format!("{} hook {event}", cp_base::shell_word(program))
}

/// The hooks of `files` as one settings document (`{"hooks": {…}}`), built by the same
/// builders as `init`, for passing per invocation instead of writing them into the project.
pub fn hooks_of(files: Vec<SettingsFile>) -> serde_json::Value {
    let mut hooks = serde_json::Map::new();
    for file in files {
        // Codex CLI's TOML hooks are not passed per invocation this way.
        let Apply::Json(apply) = file.apply else {
            continue;
        };
        let mut doc = Json::Object(IndexMap::new());
        if apply(&mut doc).is_err() {
            continue;
        }
        if let Some(found) = doc.get("hooks")
            && let Ok(serde_json::Value::Object(found)) = serde_json::to_value(found)
        {
            hooks.extend(found);
        }
    }
    serde_json::json!({ "hooks": hooks })
}

/// The program the MCP server entry `init` wrote runs, read from a settings file's `text`:
/// `mcpServers.context-pilot.command` (JSON: Claude Code, Gemini CLI) or
/// `[mcp_servers.context-pilot] command` (TOML: Codex CLI). `None` when there is no entry, or
/// it does not run `… mcp`.
pub fn mcp_server_program(text: &str) -> Option<String> {
    let (command, args) = if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
        let entry = &json["mcpServers"][MCP_SERVER];
        let args: Vec<String> = entry["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        (entry["command"].as_str()?.to_owned(), args)
    } else {
        let doc = text.parse::<toml_edit::DocumentMut>().ok()?;
        let entry = doc.get("mcp_servers")?.get(MCP_SERVER)?;
        let args: Vec<String> = entry
            .get("args")
            .and_then(toml_edit::Item::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        (entry.get("command")?.as_str()?.to_owned(), args)
    };
    (args.first().map(String::as_str) == Some("mcp")).then_some(command)
}

/// `mcpServers.context-pilot` runs `<program> mcp`; other fields of the entry (e.g. `env`)
/// and other servers are kept.
pub fn set_server(doc: &mut Json, program: &str) -> Result<(), ShapeError> {
    let servers = doc
        .object_at("mcpServers")
        .ok_or_else(|| ShapeError::new("mcpServers", "an object"))?;
    let entry = servers
        .entry(MCP_SERVER.to_owned())
        .or_insert_with(|| Json::Object(IndexMap::new()));
    let Json::Object(entry) = entry else {
        return Err(ShapeError::new(
            format!("mcpServers.{MCP_SERVER}"),
            "an object",
        ));
    };
    entry.insert("command".into(), Json::str(program));
    entry.insert("args".into(), Json::Array(vec![Json::str("mcp")]));
    Ok(())
}

/// Adds `hook` under `hooks.<event>` in a group with `matcher`, unless a Context Pilot hook
/// for `cli_event` is already there; then that one gets the current command (the binary may
/// have moved), its group the current matcher, and everything else stays as the user left it.
pub fn ensure_hook(
    doc: &mut Json,
    event: &str,
    matcher: Option<&str>,
    cli_event: &str,
    hook: Json,
) -> Result<(), ShapeError> {
    let hooks = doc
        .object_at("hooks")
        .ok_or_else(|| ShapeError::new("hooks", "an object"))?;
    let Json::Array(groups) = hooks
        .entry(event.to_owned())
        .or_insert_with(|| Json::Array(Vec::new()))
    else {
        return Err(ShapeError::new(format!("hooks.{event}"), "an array"));
    };
    let mut found = false;
    for group in groups.iter_mut() {
        let Json::Object(group) = group else { continue };
        let Some(Json::Array(items)) = group.get_mut("hooks") else {
            continue;
        };
        let found_before = found;
        for item in items.iter_mut() {
            let Json::Object(fields) = item else { continue };
            let ours = fields
                .get("command")
                .and_then(Json::as_str)
                .is_some_and(|c| is_our_command(c, cli_event));
            if ours {
                found = true;
                if let Some(command) = hook.get("command") {
                    fields.insert("command".into(), command.clone());
                }
            }
        }
        // Our group follows the tools we now watch (e.g. the shell tools, added later).
        if found
            && !found_before
            && let Some(m) = matcher
            && group.contains_key("matcher")
        {
            group.insert("matcher".into(), Json::str(m));
        }
    }
    if !found {
        let mut group = IndexMap::new();
        if let Some(m) = matcher {
            group.insert("matcher".to_owned(), Json::str(m));
        }
        group.insert("hooks".to_owned(), Json::Array(vec![hook]));
        groups.push(Json::Object(group));
    }
    Ok(())
}

/// Removes Context Pilot's hooks for `cli_event` from `hooks.<event>`, with a group (and the
/// event) they leave empty; every other hook stays as the user left it. For an event the
/// installed version's wiring no longer has (e.g. `PostToolUse` once `PostToolBatch` fires
/// the callbacks).
pub fn remove_hook(doc: &mut Json, event: &str, cli_event: &str) -> Result<(), ShapeError> {
    let Json::Object(top) = doc else {
        return Err(ShapeError::new("the top level", "an object"));
    };
    let Some(hooks) = top.get_mut("hooks") else {
        return Ok(());
    };
    let Json::Object(hooks) = hooks else {
        return Err(ShapeError::new("hooks", "an object"));
    };
    let Some(Json::Array(groups)) = hooks.get_mut(event) else {
        return Ok(());
    };
    let mut removed = false;
    groups.retain_mut(|group| {
        let Json::Object(group) = group else {
            return true;
        };
        let Some(Json::Array(items)) = group.get_mut("hooks") else {
            return true;
        };
        let before = items.len();
        items.retain(|item| {
            !item
                .get("command")
                .and_then(Json::as_str)
                .is_some_and(|c| is_our_command(c, cli_event))
        });
        let ours = items.len() != before;
        removed |= ours;
        !(ours && items.is_empty())
    });
    if removed && groups.is_empty() {
        hooks.shift_remove(event);
    }
    Ok(())
}

/// Whether a settings file's `text` (JSON, or Codex CLI's TOML) holds a Context Pilot hook
/// for `cli_event` that `init` wrote: a plugin's hook then leaves the event to it, so a project
/// wired twice runs each hook once.
pub fn has_our_hook(text: &str, cli_event: &str) -> bool {
    fn json_has(value: &serde_json::Value, cli_event: &str) -> bool {
        match value {
            serde_json::Value::Object(map) => map.iter().any(|(key, v)| {
                (key == "command" && v.as_str().is_some_and(|c| is_our_command(c, cli_event)))
                    || json_has(v, cli_event)
            }),
            serde_json::Value::Array(items) => items.iter().any(|v| json_has(v, cli_event)),
            _ => false,
        }
    }
    fn toml_has(table: &dyn toml_edit::TableLike, cli_event: &str) -> bool {
        table.iter().any(|(key, item)| match item {
            toml_edit::Item::Value(toml_edit::Value::String(s)) => {
                key == "command" && is_our_command(s.value(), cli_event)
            }
            toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => toml_has(t, cli_event),
            toml_edit::Item::Value(toml_edit::Value::Array(items)) => items
                .iter()
                .any(|v| v.as_inline_table().is_some_and(|t| toml_has(t, cli_event))),
            toml_edit::Item::Table(t) => toml_has(t, cli_event),
            toml_edit::Item::ArrayOfTables(tables) => tables.iter().any(|t| toml_has(t, cli_event)),
            _ => false,
        })
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
        return json_has(&json, cli_event);
    }
    text.parse::<toml_edit::DocumentMut>()
        .is_ok_and(|doc| toml_has(doc.as_table(), cli_event))
}

/// `… context-pilot hook <event>` with any path to the binary, quoted or not.
pub(crate) fn is_our_command(command: &str, cli_event: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(&format!(" hook {cli_event}")) else {
        return false;
    };
    let program = program.trim().trim_matches(['\'', '"']);
    std::path::Path::new(program)
        .file_name()
        .is_some_and(|n| n == "context-pilot")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_group_of_ours_gets_the_current_matcher_and_others_keep_theirs() {
        let mut doc: Json = serde_json::from_str(
            r#"{"hooks": {"PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ran"}]},
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "context-pilot hook post-tool-use"}]}
            ]}}"#,
        )
        .unwrap();
        let hook = Json::object([("command", Json::str("context-pilot hook post-tool-use"))]);
        ensure_hook(
            &mut doc,
            "PostToolUse",
            Some("Write|Edit|Bash"),
            "post-tool-use",
            hook,
        )
        .unwrap();
        let value = serde_json::to_value(&doc).unwrap();
        let groups = value["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0]["matcher"], "Bash");
        assert_eq!(groups[1]["matcher"], "Write|Edit|Bash");
    }

    #[test]
    fn removing_our_hook_keeps_the_users_and_drops_what_it_empties() {
        let mut doc: Json = serde_json::from_str(
            r#"{"hooks": {"PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ran"},
                    {"type": "command", "command": "context-pilot hook post-tool-use"}]},
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "/x/context-pilot hook post-tool-use"}]}
            ], "Stop": [{"hooks": [{"type": "command", "command": "context-pilot hook stop"}]}]}}"#,
        )
        .unwrap();
        remove_hook(&mut doc, "PostToolUse", "post-tool-use").unwrap();
        remove_hook(&mut doc, "SessionStart", "session-start-compact").unwrap();
        let value = serde_json::to_value(&doc).unwrap();
        assert_eq!(
            value["hooks"]["PostToolUse"],
            serde_json::json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ran"}]}])
        );
        remove_hook(&mut doc, "Stop", "stop").unwrap();
        let value = serde_json::to_value(&doc).unwrap();
        assert!(value["hooks"].get("Stop").is_none(), "{value}");
        assert!(remove_hook(&mut Json::Object(IndexMap::new()), "Stop", "stop").is_ok());
    }

    #[test]
    fn a_hook_init_wrote_is_found_in_json_and_toml() {
        let json = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": "/opt/cp/context-pilot hook stop"}]}]}}"#;
        assert!(has_our_hook(json, "stop"));
        assert!(!has_our_hook(json, "post-tool-batch"));
        let toml = "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\n\
                    command = \"context-pilot hook codex-stop\"\n";
        assert!(has_our_hook(toml, "codex-stop"));
        assert!(!has_our_hook(toml, "stop"));
        let plugin = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": "exec context-pilot hook --plugin stop"}]}]}}"#;
        assert!(
            !has_our_hook(plugin, "stop"),
            "a plugin's own hook is not init's"
        );
        assert!(!has_our_hook("[[[", "stop"));
    }

    #[test]
    fn recognises_our_hooks_only() {
        assert!(is_our_command("context-pilot hook stop", "stop"));
        assert!(is_our_command(
            "'/opt/my tools/context-pilot' hook stop",
            "stop"
        ));
        assert!(is_our_command(
            "/usr/bin/context-pilot hook post-tool-use",
            "post-tool-use"
        ));
        assert!(!is_our_command("context-pilot hook stop", "post-tool-use"));
        assert!(!is_our_command("other hook stop", "stop"));
        assert_eq!(
            hook_command("/a b/context-pilot", "stop"),
            "'/a b/context-pilot' hook stop"
        );
        assert_eq!(
            hook_command("context-pilot", "stop"),
            "context-pilot hook stop"
        );
    }

    #[test]
    fn the_mcp_server_program_is_read_from_json_and_toml() {
        let json = r#"{"mcpServers": {"context-pilot": {"command": "/opt/cp/context-pilot",
            "args": ["mcp"]}, "other": {"command": "x"}}}"#;
        assert_eq!(
            mcp_server_program(json).as_deref(),
            Some("/opt/cp/context-pilot")
        );
        let toml = "[mcp_servers.context-pilot]\ncommand = \"context-pilot\"\nargs = [\"mcp\"]\n";
        assert_eq!(mcp_server_program(toml).as_deref(), Some("context-pilot"));
        assert_eq!(mcp_server_program(r#"{"mcpServers": {}}"#), None);
        let not_ours = r#"{"mcpServers": {"context-pilot": {"command": "x", "args": ["serve"]}}}"#;
        assert_eq!(mcp_server_program(not_ours), None);
        assert_eq!(mcp_server_program("[[["), None);
    }
}
