//! The agent-neutral items both CLIs' streams are parsed into, and what the driver does with
//! them.

use serde_json::Value;

/// One fact from an agent's output stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// The session's id (and model, when said).
    Init {
        /// The session id.
        session_id: String,
        /// The model in use.
        model: Option<String>,
    },
    /// One model response's usage; `message_id` de-duplicates a response split over events.
    Usage {
        /// The response's id (`None`: count every report).
        message_id: Option<String>,
        /// Prompt tokens of the request (input + cache creation + cache read).
        prompt_tokens: u64,
        /// The model that answered.
        model: Option<String>,
    },
    /// Assistant text.
    Text(String),
    /// A tool call.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// A tool call's result.
    ToolResult {
        /// The call's id.
        id: String,
        /// Whether it failed.
        is_error: bool,
        /// Its text.
        text: String,
    },
    /// The context window the agent reported for the model of its latest request.
    Window(u64),
    /// The agent compacted its context by itself.
    Compacted,
    /// A hook (Context Pilot's callbacks or stop gate) answered.
    Hook {
        /// The agent's hook event, e.g. `Stop`.
        event: String,
        /// What it decided or reported, one line.
        summary: String,
        /// The same in full (e.g. a callback's last lines of output), for a view with room.
        detail: String,
    },
    /// A part of Context Pilot's wiring proved loaded: the MCP server (`mcp`), else the
    /// hooks (see [`crate::wired`]).
    Wired {
        /// The MCP server, not a hook.
        mcp: bool,
    },
    /// The run's final record.
    Result {
        /// Whether the agent reported success.
        ok: bool,
        /// The result text or error subtype.
        message: String,
        /// The context window the agent reported for its model.
        window: Option<u64>,
    },
}

/// The files a tool call names (`file_path`, `path`, `absolute_path`), for the tool history.
pub fn input_paths(input: &Value) -> Vec<String> {
    ["file_path", "path", "absolute_path", "notebook_path"]
        .iter()
        .filter_map(|key| input.get(key).and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// Text of a tool result's `content`: a string, or the `text` of its blocks.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
