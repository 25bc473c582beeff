//! Folding the Messages API's event stream into a [`Response`]: text and tool-call blocks as
//! they stream, usage from `message_start` and `message_delta`, and the stop reason.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::{LlmError, abbreviate};
use crate::sse::{EventDecoder, Flow, SseEvent};
use crate::types::{ContentBlock, FinishReason, Response, StreamEvent, ToolInput, ToolUse, Usage};

/// A content block being streamed.
enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// A block type this host does not use (e.g. `thinking`); its deltas are skipped.
    Ignored,
}

/// Folds the event stream into a [`Response`].
pub(super) struct Decoder {
    label: String,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    finish_reason: Option<String>,
    complete: bool,
}

impl Decoder {
    pub(super) fn new(label: &str) -> Self {
        Self {
            label: label.to_owned(),
            blocks: BTreeMap::new(),
            usage: Usage::default(),
            finish_reason: None,
            complete: false,
        }
    }

    fn protocol(&self, detail: String) -> LlmError {
        LlmError::Protocol {
            provider: self.label.clone(),
            detail,
        }
    }

    fn index(&self, data: &Value) -> Result<u64, LlmError> {
        data.get("index").and_then(Value::as_u64).ok_or_else(|| {
            self.protocol(format!(
                "event without a block index: {}",
                abbreviate(&data.to_string(), 200)
            ))
        })
    }

    fn start_block(
        &mut self,
        data: &Value,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        let index = self.index(data)?;
        let block = data.get("content_block").unwrap_or(&Value::Null);
        let text_field = |name: &str| {
            block
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let new = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = text_field("text");
                if !text.is_empty() {
                    on_event(StreamEvent::TextDelta(text.clone()));
                }
                Block::Text(text)
            }
            Some("tool_use") => {
                let (id, name) = (text_field("id"), text_field("name"));
                on_event(StreamEvent::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                let initial = block.get("input").cloned().unwrap_or_else(|| json!({}));
                Block::Tool {
                    id,
                    name,
                    json: String::new(),
                    initial,
                }
            }
            _ => Block::Ignored,
        };
        self.blocks.insert(index, new);
        Ok(())
    }

    fn delta(
        &mut self,
        data: &Value,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), LlmError> {
        let index = self.index(data)?;
        let delta = data.get("delta").unwrap_or(&Value::Null);
        let field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or("");
        match (
            self.blocks.get_mut(&index),
            delta.get("type").and_then(Value::as_str),
        ) {
            (Some(Block::Text(text)), Some("text_delta")) => {
                let piece = field("text");
                text.push_str(piece);
                if !piece.is_empty() {
                    on_event(StreamEvent::TextDelta(piece.to_owned()));
                }
            }
            (Some(Block::Tool { id, json, .. }), Some("input_json_delta")) => {
                let piece = field("partial_json");
                json.push_str(piece);
                if !piece.is_empty() {
                    on_event(StreamEvent::ToolCallDelta {
                        id: id.clone(),
                        fragment: piece.to_owned(),
                    });
                }
            }
            (None, _) => {
                return Err(self.protocol(format!("delta for block {index}, which never started")));
            }
            // Deltas of ignored blocks (thinking, signatures) and future delta types.
            _ => {}
        }
        Ok(())
    }
}

impl EventDecoder for Decoder {
    fn handle(
        &mut self,
        event: &SseEvent,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Flow, LlmError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            self.protocol(format!(
                "event `{}` has invalid JSON ({err}): {}",
                event.event,
                abbreviate(&event.data, 200)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    merge_usage(&mut self.usage, usage);
                    on_event(StreamEvent::Usage(self.usage));
                }
            }
            "content_block_start" => self.start_block(&data, on_event)?,
            "content_block_delta" => self.delta(&data, on_event)?,
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish_reason = Some(reason.to_owned());
                }
                if let Some(usage) = data.get("usage") {
                    merge_usage(&mut self.usage, usage);
                    on_event(StreamEvent::Usage(self.usage));
                }
            }
            "message_stop" => {
                self.complete = true;
                return Ok(Flow::Stop);
            }
            "error" => {
                let text = |pointer: &str| {
                    data.pointer(pointer)
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_owned()
                };
                return Err(LlmError::StreamError {
                    provider: self.label.clone(),
                    kind: text("/error/type"),
                    message: text("/error/message"),
                });
            }
            // `ping`, `content_block_stop` (blocks are finalized at the end) and event types
            // added to the API later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self) -> Result<Response, LlmError> {
        if !self.complete {
            return Err(LlmError::StreamCut {
                provider: self.label,
                detail: "the stream ended without `message_stop`".to_owned(),
            });
        }
        let content: Vec<ContentBlock> = self
            .blocks
            .into_values()
            .filter_map(|block| match block {
                Block::Text(text) => Some(ContentBlock::Text { text }),
                Block::Tool {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let input = if json.trim().is_empty() {
                        ToolInput::parse(&initial.to_string())
                    } else {
                        ToolInput::parse(&json)
                    };
                    Some(ContentBlock::ToolUse(ToolUse { id, name, input }))
                }
                Block::Ignored => None,
            })
            .collect();
        let has_tools = content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse(_)));
        let finish_reason = match self.finish_reason.as_deref() {
            Some("end_turn") => FinishReason::EndTurn,
            Some("tool_use") => FinishReason::ToolUse,
            Some("max_tokens") => FinishReason::MaxTokens,
            Some("stop_sequence") => FinishReason::StopSequence,
            Some(other) => FinishReason::Other(other.to_owned()),
            None if has_tools => FinishReason::ToolUse,
            None => FinishReason::EndTurn,
        };
        Ok(Response {
            content,
            finish_reason,
            usage: self.usage,
        })
    }
}

/// Takes every usage counter present in `value` (later events carry cumulative figures).
fn merge_usage(usage: &mut Usage, value: &Value) {
    let get = |name: &str| value.get(name).and_then(Value::as_u64);
    if let Some(n) = get("input_tokens") {
        usage.input_tokens = n;
    }
    if let Some(n) = get("output_tokens") {
        usage.output_tokens = n;
    }
    if let Some(n) = get("cache_read_input_tokens") {
        usage.cache_read_tokens = n;
    }
    if let Some(n) = get("cache_creation_input_tokens") {
        usage.cache_creation_tokens = n;
    }
}
