//! The entries `init` adds to each agent's project settings, and how they are merged.

use std::path::PathBuf;

use indexmap::IndexMap;

use super::json::Json;

/// The MCP server's key under `mcpServers`.
pub const SERVER_KEY: &str = "context-pilot";
/// Claude Code's file edit tools.
pub const CLAUDE_EDIT_MATCHER: &str = "Write|Edit|MultiEdit|NotebookEdit";
/// Gemini CLI's file edit tools.
pub const GEMINI_EDIT_MATCHER: &str = "write_file|replace";
/// Blocking callbacks and the test run may take a while; the agents' defaults are 60 s.
const HOOK_TIMEOUT_SECS: u64 = 600;

/// A settings entry `init` has to change is not what it must be, e.g. `'hooks' is not an
/// object`.
#[derive(Debug, thiserror::Error)]
#[error("'{key}' is not {expected}")]
pub struct ShapeError {
    key: String,
    expected: &'static str,
}

impl ShapeError {
    fn new(key: impl Into<String>, expected: &'static str) -> Self {
        Self {
            key: key.into(),
            expected,
        }
    }
}

/// Brings a settings document up to date, or says why it cannot.
pub type Apply = dyn Fn(&mut Json) -> Result<(), ShapeError>;

/// A settings file and how to bring it up to date.
pub struct Target {
    /// Relative to the project root.
    pub path: PathBuf,
    pub apply: Box<Apply>,
}

/// Where `init` writes for each agent.
pub fn claude_targets(program: &str) -> Vec<Target> {
    let program = program.to_owned();
    let hooks_program = program.clone();
    vec![
        Target {
            path: PathBuf::from(".mcp.json"),
            apply: Box::new(move |doc| set_server(doc, &program)),
        },
        Target {
            path: PathBuf::from(".claude/settings.json"),
            apply: Box::new(move |doc| {
                let hook = |event: &str| {
                    Json::object([
                        ("type", Json::str("command")),
                        ("command", Json::str(hook_command(&hooks_program, event))),
                        ("timeout", Json::Number(HOOK_TIMEOUT_SECS.into())),
                    ])
                };
                ensure_hook(
                    doc,
                    "PostToolUse",
                    Some(CLAUDE_EDIT_MATCHER),
                    "post-tool-use",
                    hook("post-tool-use"),
                )?;
                ensure_hook(doc, "Stop", None, "stop", hook("stop"))
            }),
        },
    ]
}

pub fn gemini_targets(program: &str) -> Vec<Target> {
    let program = program.to_owned();
    vec![Target {
        path: PathBuf::from(".gemini/settings.json"),
        apply: Box::new(move |doc| {
            set_server(doc, &program)?;
            let hook = |event: &str, name: &str, description: &str| {
                Json::object([
                    ("name", Json::str(name)),
                    ("type", Json::str("command")),
                    ("command", Json::str(hook_command(&program, event))),
                    ("description", Json::str(description)),
                    ("timeout", Json::Number((HOOK_TIMEOUT_SECS * 1000).into())),
                ])
            };
            ensure_hook(
                doc,
                "AfterTool",
                Some(GEMINI_EDIT_MATCHER),
                "after-tool",
                hook(
                    "after-tool",
                    "context-pilot-callbacks",
                    "Context Pilot: run file-edit callbacks",
                ),
            )?;
            ensure_hook(
                doc,
                "AfterAgent",
                None,
                "after-agent",
                hook(
                    "after-agent",
                    "context-pilot-checkpoint",
                    "Context Pilot: stop checkpoint",
                ),
            )
        }),
    }]
}

/// The shell command of a hook: the program (quoted when it needs it) and the event.
pub fn hook_command(program: &str, event: &str) -> String {
    format!("{} hook {event}", cp_base::shell_word(program))
}

/// Gemini CLI's `AfterModel` hook in a run (`context-pilot model-usage`): it reports each
/// response's prompt size to the run. Seconds are generous; it takes milliseconds.
pub fn gemini_usage_hook(program: &str) -> serde_json::Value {
    serde_json::json!([{"hooks": [{
        "name": "context-pilot-usage",
        "type": "command",
        "command": format!("{} model-usage", cp_base::shell_word(program)),
        "description": "Context Pilot: the prompt size of each response, for smart restart",
        "timeout": 10_000,
    }]}])
}

/// `mcpServers.context-pilot` runs `<program> mcp`; other fields of the entry (e.g. `env`)
/// and other servers are kept.
fn set_server(doc: &mut Json, program: &str) -> Result<(), ShapeError> {
    let servers = doc
        .object_at("mcpServers")
        .ok_or_else(|| ShapeError::new("mcpServers", "an object"))?;
    let entry = servers
        .entry(SERVER_KEY.to_owned())
        .or_insert_with(|| Json::Object(IndexMap::new()));
    let Json::Object(entry) = entry else {
        return Err(ShapeError::new(
            format!("mcpServers.{SERVER_KEY}"),
            "an object",
        ));
    };
    entry.insert("command".into(), Json::str(program));
    entry.insert("args".into(), Json::Array(vec![Json::str("mcp")]));
    Ok(())
}

/// Adds `hook` under `hooks.<event>` in a group with `matcher`, unless a Context Pilot hook
/// for `cli_event` is already there; then that one gets the current command (the binary may
/// have moved) and everything else stays as the user left it.
fn ensure_hook(
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
        let Some(Json::Array(items)) = (match group {
            Json::Object(g) => g.get_mut("hooks"),
            _ => None,
        }) else {
            continue;
        };
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

/// `… context-pilot hook <event>` with any path to the binary, quoted or not.
fn is_our_command(command: &str, cli_event: &str) -> bool {
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
}
