//! Gemini CLI's `--output-format stream-json` events, typed, and their mapping to [`Item`]s.
//!
//! Each line is one JSON event: `init` (session id and model), `message` (the user's prompt,
//! then assistant text in deltas), `tool_use`, `tool_result`, `error` and a final `result`
//! whose `stats` hold token totals for the whole run. No event carries a single request's
//! prompt size: that comes from Gemini CLI's `AfterModel` hook instead (see `hook_report`).

use serde::Deserialize;
use serde_json::Value;

use crate::item::Item;

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Init {
        session_id: String,
        model: Option<String>,
    },
    Message {
        role: String,
        #[serde(default)]
        content: Value,
    },
    ToolUse {
        tool_name: String,
        tool_id: String,
        #[serde(default)]
        parameters: Value,
    },
    ToolResult {
        tool_id: String,
        #[serde(default)]
        status: String,
        output: Option<String>,
        error: Option<Failure>,
    },
    Result {
        #[serde(default)]
        status: String,
        error: Option<Failure>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct Failure {
    #[serde(default)]
    message: String,
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
            tracing::debug!("skipping a Gemini CLI stream line ({e}): {line}");
            return Vec::new();
        }
    };
    match event {
        Event::Init { session_id, model } => vec![Item::Init { session_id, model }],
        Event::Message { role, content } if role == "assistant" => content
            .as_str()
            .filter(|t| !t.is_empty())
            .map(|t| Item::Text(t.to_owned()))
            .into_iter()
            .collect(),
        Event::ToolUse {
            tool_name,
            tool_id,
            parameters,
        } => vec![Item::ToolUse {
            id: tool_id,
            name: tool_name,
            input: parameters,
        }],
        Event::ToolResult {
            tool_id,
            status,
            output,
            error,
        } => {
            let is_error = status == "error";
            let text = match (output, error) {
                (_, Some(failure)) if is_error => failure.message,
                (Some(output), _) => output,
                _ => String::new(),
            };
            vec![Item::ToolResult {
                id: tool_id,
                is_error,
                text,
            }]
        }
        Event::Result { status, error } => vec![Item::Result {
            ok: status == "success",
            message: error.map_or(status, |e| e.message),
            window: None,
        }],
        Event::Message { .. } | Event::Other => Vec::new(),
    }
}

/// The context window of a Gemini model, when the table knows it: 2,097,152 tokens for
/// Gemini 1.5 Pro, 1,048,576 for the other Gemini models (2.x, 3).
pub fn model_window(model: &str) -> Option<u64> {
    let model = model.to_ascii_lowercase();
    if model.starts_with("gemini-1.5-pro") {
        Some(2_097_152)
    } else if model.starts_with("gemini-") {
        Some(1_048_576)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_models_have_their_window() {
        assert_eq!(model_window("gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(model_window("gemini-1.5-pro-002"), Some(2_097_152));
        assert_eq!(model_window("claude-sonnet-4-5"), None);
    }

    #[test]
    fn events_map_to_items() {
        let init = json!({"type": "init", "session_id": "abc", "model": "gemini-2.5-pro"});
        assert_eq!(
            parse_line(&init.to_string()),
            [Item::Init {
                session_id: "abc".into(),
                model: Some("gemini-2.5-pro".into())
            }]
        );
        let call = json!({"type": "tool_use", "tool_name": "write_file", "tool_id": "t1",
            "parameters": {"file_path": "a.sh"}});
        assert!(
            matches!(&parse_line(&call.to_string())[0], Item::ToolUse { name, .. } if name == "write_file")
        );
        let failed = json!({"type": "tool_result", "tool_id": "t1", "status": "error",
            "error": {"type": "X", "message": "denied"}});
        assert_eq!(
            parse_line(&failed.to_string()),
            [Item::ToolResult {
                id: "t1".into(),
                is_error: true,
                text: "denied".into()
            }]
        );
        let done = json!({"type": "result", "status": "success", "stats": {"total_tokens": 5}});
        assert!(matches!(
            &parse_line(&done.to_string())[0],
            Item::Result { ok: true, .. }
        ));
        let user = json!({"type": "message", "role": "user", "content": "Do it"});
        assert!(parse_line(&user.to_string()).is_empty());
        assert!(parse_line("Loaded cached credentials.").is_empty());
    }
}
