//! Claude Code's `--output-format stream-json --verbose` events, typed, and their mapping to
//! [`Item`]s.
//!
//! Each line is one JSON event: `system` (`init` with the session id and model,
//! `compact_boundary` when Claude Code compacted by itself), `assistant` (one per content
//! block, each repeating the message's `id` and `usage`), `user` (tool results) and a final
//! `result` with `modelUsage[model].contextWindow`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::item::{Item, content_text};

/// One line of the stream.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    System(System),
    Assistant(Envelope),
    User(Envelope),
    Result(Finish),
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct System {
    #[serde(default)]
    subtype: String,
    session_id: Option<String>,
    model: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Envelope {
    message: Message,
}

#[derive(Debug, Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    content: Content,
    usage: Option<Usage>,
}

/// A user message's content may be plain text.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Blocks(Vec<Block>),
    Text(#[allow(dead_code, reason = "only recognised, never read")] String),
}

impl Default for Content {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default)]
        is_error: bool,
        #[serde(default)]
        content: Value,
    },
    #[serde(other)]
    Other,
}

/// Anthropic's usage of one request.
#[derive(Debug, Default, Deserialize)]
#[expect(clippy::struct_field_names, reason = "Anthropic's wire names")]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
}

#[derive(Debug, Deserialize)]
struct Finish {
    #[serde(default)]
    subtype: String,
    #[serde(default)]
    is_error: bool,
    result: Option<String>,
    #[serde(default, rename = "modelUsage")]
    model_usage: BTreeMap<String, ModelUsage>,
}

#[derive(Debug, Deserialize)]
struct ModelUsage {
    #[serde(rename = "contextWindow")]
    context_window: Option<u64>,
}

/// The items of one stream line; a line that is not a known event gives none (and is
/// logged), so a newer Claude Code never breaks the run.
pub fn parse_line(line: &str) -> Vec<Item> {
    let line = line.trim();
    if line.is_empty() {
        return Vec::new();
    }
    match serde_json::from_str::<Event>(line) {
        Ok(event) => items(event),
        Err(e) => {
            tracing::debug!("skipping a Claude Code stream line ({e}): {line}");
            Vec::new()
        }
    }
}

fn items(event: Event) -> Vec<Item> {
    match event {
        Event::System(system) => match system.subtype.as_str() {
            "init" => system
                .session_id
                .map(|session_id| Item::Init {
                    session_id,
                    model: system.model,
                })
                .into_iter()
                .collect(),
            "compact_boundary" => vec![Item::Compacted],
            _ => Vec::new(),
        },
        Event::Assistant(envelope) => assistant(envelope.message),
        Event::User(envelope) => match envelope.message.content {
            Content::Blocks(blocks) => blocks
                .into_iter()
                .filter_map(|block| match block {
                    Block::ToolResult {
                        tool_use_id,
                        is_error,
                        content,
                    } => Some(Item::ToolResult {
                        id: tool_use_id,
                        is_error,
                        text: content_text(&content),
                    }),
                    _ => None,
                })
                .collect(),
            Content::Text(_) => Vec::new(),
        },
        Event::Result(finish) => {
            let ok = !finish.is_error && finish.subtype == "success";
            let message = if ok {
                finish.result.unwrap_or_default()
            } else {
                finish.result.unwrap_or(finish.subtype)
            };
            let window = finish
                .model_usage
                .values()
                .filter_map(|m| m.context_window)
                .max();
            vec![Item::Result {
                ok,
                message,
                window,
            }]
        }
        Event::Other => Vec::new(),
    }
}

fn assistant(message: Message) -> Vec<Item> {
    let mut out = Vec::new();
    if let Some(usage) = message.usage {
        out.push(Item::Usage {
            message_id: message.id,
            prompt_tokens: usage
                .input_tokens
                .saturating_add(usage.cache_creation_input_tokens)
                .saturating_add(usage.cache_read_input_tokens),
            model: message.model,
        });
    }
    if let Content::Blocks(blocks) = message.content {
        for block in blocks {
            match block {
                Block::Text { text } if !text.is_empty() => out.push(Item::Text(text)),
                Block::ToolUse { id, name, input } => out.push(Item::ToolUse { id, name, input }),
                _ => {}
            }
        }
    }
    out
}

/// The context window of a Claude model by name: `[1m]` variants have a million tokens,
/// the others 200,000.
pub fn model_window(model: &str) -> Option<u64> {
    let model = model.to_ascii_lowercase();
    if model.contains("[1m]") {
        Some(1_000_000)
    } else if model.starts_with("claude-") || ["opus", "sonnet", "haiku"].contains(&model.as_str())
    {
        Some(200_000)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_assistant_event_gives_its_prompt_size_and_tool_calls() {
        let line = json!({"type": "assistant", "session_id": "s", "message": {
            "id": "msg_1", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "t1", "name": "Write",
                         "input": {"file_path": "/p/a.rs", "content": "x"}}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 200,
                      "cache_read_input_tokens": 3000, "output_tokens": 7}}})
        .to_string();
        let items = parse_line(&line);
        assert_eq!(
            items[0],
            Item::Usage {
                message_id: Some("msg_1".into()),
                prompt_tokens: 3210,
                model: Some("claude-sonnet-4-5".into())
            }
        );
        assert!(matches!(&items[1], Item::ToolUse { name, .. } if name == "Write"));
    }

    #[test]
    fn results_compaction_and_tool_results_are_recognised() {
        let result = json!({"type": "result", "subtype": "success", "is_error": false,
            "result": "Done.", "modelUsage": {"claude-sonnet-4-5": {"contextWindow": 1_000_000}}});
        assert_eq!(
            parse_line(&result.to_string()),
            [Item::Result {
                ok: true,
                message: "Done.".into(),
                window: Some(1_000_000)
            }]
        );
        let interrupted =
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true});
        assert!(matches!(
            &parse_line(&interrupted.to_string())[0],
            Item::Result { ok: false, message, .. } if message == "error_during_execution"
        ));
        let compact = json!({"type": "system", "subtype": "compact_boundary"});
        assert_eq!(parse_line(&compact.to_string()), [Item::Compacted]);
        let user = json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]}]}});
        assert_eq!(
            parse_line(&user.to_string()),
            [Item::ToolResult {
                id: "t1".into(),
                is_error: false,
                text: "ok".into()
            }]
        );
    }

    #[test]
    fn unknown_or_broken_lines_are_skipped() {
        assert!(parse_line("{\"type\": \"stream_event\"}").is_empty());
        assert!(parse_line("not json").is_empty());
        assert!(parse_line("").is_empty());
    }

    #[test]
    fn model_table_knows_claude_windows() {
        assert_eq!(model_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(model_window("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(model_window("gpt-4o"), None);
    }
}
