//! Codex CLI's `exec --json` events, and their mapping to [`Item`]s.
//!
//! Each line is one JSON event: `thread.started` (the thread id, which `exec resume` takes),
//! `turn.started`, `item.started` / `item.updated` / `item.completed` with an `item` whose
//! `type` is `agent_message`, `reasoning`, `command_execution`, `file_change`,
//! `mcp_tool_call`, `web_search`, `todo_list` or `error`, then `turn.completed` (with usage
//! that is cumulative for the thread, so it is not read) or `turn.failed`. A top-level
//! `error` is Codex retrying, not the end.
//!
//! The prompt size of each request is not in this stream: it comes from the session file
//! (see [`super::rollout`]).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::item::{Item, content_text};

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    #[serde(rename = "item.started")]
    ItemStarted { item: Value },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: Value },
    #[serde(rename = "turn.completed")]
    TurnCompleted,
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default)]
        error: Value,
    },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: String,
    },
    #[serde(other)]
    Other,
}

/// The items of one stream line; anything else gives none (and is logged).
pub fn parse_line(line: &str) -> Vec<Item> {
    let line = line.trim();
    if !line.starts_with('{') {
        return Vec::new();
    }
    let event = match serde_json::from_str::<Event>(line) {
        Ok(event) => event,
        Err(e) => {
            tracing::debug!("skipping a Codex CLI stream line ({e}): {line}");
            return Vec::new();
        }
    };
    match event {
        Event::ThreadStarted { thread_id } => vec![Item::Init {
            session_id: thread_id,
            model: None,
        }],
        Event::ItemStarted { item } => tool_call(&item).into_iter().collect(),
        // A call still in flight is the same call: the driver takes its start once.
        Event::ItemCompleted { item } => match kind(&item) {
            "agent_message" => text_of(&item, "text")
                .filter(|t| !t.is_empty())
                .map(Item::Text)
                .into_iter()
                .collect(),
            "error" => {
                tracing::info!("Codex CLI reported: {}", item["message"]);
                Vec::new()
            }
            _ => tool_call(&item)
                .into_iter()
                .chain(tool_result(&item))
                .collect(),
        },
        Event::TurnCompleted => vec![Item::Result {
            ok: true,
            message: String::new(),
            window: None,
        }],
        Event::TurnFailed { error } => vec![Item::Result {
            ok: false,
            message: error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned),
            window: None,
        }],
        Event::Error { message } => {
            tracing::info!("Codex CLI: {message}");
            Vec::new()
        }
        Event::Other => Vec::new(),
    }
}

fn kind(item: &Value) -> &str {
    item["type"].as_str().unwrap_or("")
}

fn text_of(item: &Value, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The tool call an item is, named as Codex's hooks name it (`Bash`, `apply_patch`,
/// `mcp__<server>__<tool>`).
fn tool_call(item: &Value) -> Option<Item> {
    let id = text_of(item, "id")?;
    let (name, input) = match kind(item) {
        "command_execution" => ("Bash".to_owned(), json!({"command": item["command"]})),
        "file_change" => {
            let changes = item["changes"].clone();
            let mut input = json!({ "changes": changes });
            if let Some(path) = changes.get(0).and_then(|c| c.get("path")) {
                input["path"] = path.clone();
            }
            ("apply_patch".to_owned(), input)
        }
        "mcp_tool_call" => (
            format!(
                "mcp__{}__{}",
                item["server"].as_str().unwrap_or(""),
                item["tool"].as_str().unwrap_or("")
            ),
            item["arguments"].clone(),
        ),
        _ => return None,
    };
    Some(Item::ToolUse { id, name, input })
}

/// The result of a finished tool item.
fn tool_result(item: &Value) -> Option<Item> {
    let id = text_of(item, "id")?;
    let status = item["status"].as_str().unwrap_or("");
    let failed = matches!(status, "failed" | "declined");
    let text = match kind(item) {
        "command_execution" => {
            let output = item["aggregated_output"].as_str().unwrap_or("").to_owned();
            match item["exit_code"].as_i64() {
                Some(code) if code != 0 => format!("exit code {code}\n{output}"),
                _ => output,
            }
        }
        "file_change" => item["changes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} {}",
                    c["kind"].as_str().unwrap_or("changed"),
                    c["path"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "mcp_tool_call" => match item.get("error").filter(|e| !e.is_null()) {
            Some(error) => error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned),
            None => content_text(&item["result"]["content"]),
        },
        _ => return None,
    };
    let is_error = failed
        || item["exit_code"].as_i64().is_some_and(|c| c != 0)
        || item.get("error").is_some_and(|e| !e.is_null());
    Some(Item::ToolResult { id, is_error, text })
}

/// Codex reports each request's window in its session file; its models are not tabled.
pub fn model_window(_model: &str) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(event: &Value) -> Vec<Item> {
        parse_line(&event.to_string())
    }

    #[test]
    fn the_thread_text_and_the_end_of_the_turn() {
        assert_eq!(
            items(&json!({"type": "thread.started", "thread_id": "01a2"})),
            [Item::Init {
                session_id: "01a2".into(),
                model: None
            }]
        );
        assert_eq!(
            items(&json!({"type": "item.completed",
                "item": {"id": "item_3", "type": "agent_message", "text": "Done."}})),
            [Item::Text("Done.".into())]
        );
        assert!(matches!(
            &items(&json!({"type": "turn.completed", "usage": {"input_tokens": 9}}))[..],
            [Item::Result { ok: true, .. }]
        ));
        assert_eq!(
            items(&json!({"type": "turn.failed", "error": {"message": "quota"}})),
            [Item::Result {
                ok: false,
                message: "quota".into(),
                window: None
            }]
        );
        assert!(items(&json!({"type": "error", "message": "Reconnecting... 1/5"})).is_empty());
        assert!(items(&json!({"type": "turn.started"})).is_empty());
        assert!(parse_line("WARNING: proceeding").is_empty());
    }

    #[test]
    fn commands_patches_and_mcp_calls_are_tool_calls_with_results() {
        let started = json!({"type": "item.started", "item": {"id": "item_1",
            "type": "command_execution", "command": "sed -i s/a/b/ x", "status": "in_progress"}});
        assert!(matches!(
            &items(&started)[..],
            [Item::ToolUse { id, name, input }] if id == "item_1" && name == "Bash"
                && input["command"] == "sed -i s/a/b/ x"
        ));
        let done = json!({"type": "item.completed", "item": {"id": "item_1",
            "type": "command_execution", "command": "false", "aggregated_output": "no",
            "exit_code": 1, "status": "failed"}});
        assert_eq!(
            items(&done)[1],
            Item::ToolResult {
                id: "item_1".into(),
                is_error: true,
                text: "exit code 1\nno".into()
            }
        );
        let patch = json!({"type": "item.completed", "item": {"id": "item_2",
            "type": "file_change", "changes": [{"path": "/p/notes.txt", "kind": "add"}],
            "status": "completed"}});
        let got = items(&patch);
        assert!(matches!(&got[0], Item::ToolUse { name, input, .. }
            if name == "apply_patch" && input["path"] == "/p/notes.txt"));
        assert!(
            matches!(&got[1], Item::ToolResult { is_error: false, text, .. }
            if text == "add /p/notes.txt")
        );
        let mcp = json!({"type": "item.completed", "item": {"id": "item_4",
            "type": "mcp_tool_call", "server": "context-pilot", "tool": "Callback_upsert",
            "arguments": {"name": "x"}, "result": {"content": [{"type": "text", "text": "ok"}]},
            "error": null, "status": "completed"}});
        let got = items(&mcp);
        assert!(matches!(&got[0], Item::ToolUse { name, .. }
            if name == "mcp__context-pilot__Callback_upsert"));
        assert!(matches!(&got[1], Item::ToolResult { is_error: false, text, .. } if text == "ok"));
    }
}
