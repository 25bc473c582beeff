//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.
//!
//! The stream is `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, or `input_json_delta` fragments of a tool call's
//! input) and `content_block_stop`, then `message_delta` (stop reason, output usage) and
//! `message_stop`. `ping` may come anywhere; `error` reports a failure mid-stream. Unknown
//! event and block types are ignored, as the API's versioning policy asks of clients.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::config::ProviderConfig;
use super::error::{LlmError, abbreviate};
use super::provider::Provider;
use super::sse::{self, EventDecoder, Flow, SseEvent};
use super::transport::{HttpRequest, Transport};
use super::types::{
    ContentBlock, Request, Response, Role, StopReason, StreamEvent, ToolCall, ToolInput, Usage,
};
use cp_base::CancelToken;

/// API version sent in `anthropic-version`.
const API_VERSION: &str = "2023-06-01";

/// A provider speaking the Anthropic Messages API.
pub(super) struct Anthropic {
    config: ProviderConfig,
    transport: Transport,
}

impl Anthropic {
    /// A provider for `config` (whose kind is Anthropic).
    pub(super) fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        Self { config, transport }
    }

    fn http_request(&self, request: &Request) -> HttpRequest {
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
            ("anthropic-version", API_VERSION.to_owned()),
        ];
        if let Some(key) = &self.config.api_key {
            headers.push(("x-api-key", key.expose().to_owned()));
        }
        HttpRequest {
            url: format!("{}/v1/messages", self.config.base_url),
            headers,
            body: request_body(request).to_string().into_bytes(),
        }
    }
}

impl Provider for Anthropic {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn stream(
        &self,
        request: &Request,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError> {
        let mut body = self
            .transport
            .open_stream(&self.http_request(request), cancel, on_event)?;
        let decoder = Decoder::new(self.transport.label());
        sse::decode(decoder, || body.next_chunk(cancel), on_event)
    }
}

/// The cache breakpoint marker.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body for `request`, with prompt-cache breakpoints (at most 4, the API's limit):
/// on the last tool definition, on the system prompt, on the last block of the latest message
/// and on the last block of the user message before it (where the previous request put its
/// breakpoint, so that entry is read even when more than 20 blocks were added since). The
/// volatile [`Request::context`] follows the last breakpoint, so the cached prefix (tools,
/// system, conversation) is byte-stable from request to request.
pub(super) fn request_body(request: &Request) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": match message.role { Role::User => "user", Role::Assistant => "assistant" },
                "content": message.content.iter().filter_map(block_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    mark_message_breakpoints(&mut messages);
    append_context(&mut messages, &request.context);
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_output_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]),
        );
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// Puts a breakpoint on the last block of the latest message and of the latest user message
/// before it (two of the four allowed; tools and system take the other two).
fn mark_message_breakpoints(messages: &mut [Value]) {
    let with_content: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            messages[i]["content"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        })
        .collect();
    let Some(&latest) = with_content.last() else {
        return;
    };
    let previous_user = with_content
        .iter()
        .rev()
        .skip(1)
        .find(|&&i| messages[i]["role"] == "user")
        .copied();
    for index in std::iter::once(latest).chain(previous_user) {
        if let Some(block) = messages[index]["content"]
            .as_array_mut()
            .and_then(|c| c.last_mut())
        {
            block["cache_control"] = ephemeral();
        }
    }
}

/// Appends the volatile context as a last text block of the latest user message (a new user
/// message when the conversation ends with the assistant), after the breakpoint.
fn append_context(messages: &mut Vec<Value>, context: &str) {
    if context.is_empty() {
        return;
    }
    let block = json!({"type": "text", "text": context});
    match messages.last_mut() {
        Some(last) if last["role"] == "user" => {
            if let Some(content) = last["content"].as_array_mut() {
                content.push(block);
            }
        }
        _ => messages.push(json!({"role": "user", "content": [block]})),
    }
}

/// One content block on the wire. Empty text blocks are dropped: the API rejects them.
fn block_json(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::ToolUse(call) => json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.input.to_wire_value(),
        }),
        ContentBlock::ToolResult {
            tool_use_id,
            text,
            is_error,
        } => {
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": text,
            });
            if *is_error {
                result["is_error"] = json!(true);
            }
            result
        }
    })
}

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
struct Decoder {
    label: String,
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    complete: bool,
}

impl Decoder {
    fn new(label: &str) -> Self {
        Self {
            label: label.to_owned(),
            blocks: BTreeMap::new(),
            usage: Usage::default(),
            stop_reason: None,
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
                    self.stop_reason = Some(reason.to_owned());
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
                    Some(ContentBlock::ToolUse(ToolCall { id, name, input }))
                }
                Block::Ignored => None,
            })
            .collect();
        let has_tools = content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse(_)));
        let stop_reason = match self.stop_reason.as_deref() {
            Some("end_turn") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            Some("stop_sequence") => StopReason::StopSequence,
            Some(other) => StopReason::Other(other.to_owned()),
            None if has_tools => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        Ok(Response {
            content,
            stop_reason,
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

/// Decodes a whole event stream given as chunks; for tests of the decoder alone.
#[cfg(test)]
pub(super) fn decode_chunks(
    chunks: &[&[u8]],
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    sse::decode_slices(Decoder::new("Anthropic"), chunks, on_event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, ToolDefinition};

    #[test]
    fn request_body_shape() {
        let request = Request {
            model: "claude-test".into(),
            system: "Be brief.".into(),
            messages: vec![
                Message::user_text("list files"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: String::new(),
                        },
                        ContentBlock::ToolUse(ToolCall {
                            id: "toolu_1".into(),
                            name: "File_read".into(),
                            input: ToolInput::Valid(json!({"path": "a.rs"})),
                        }),
                        ContentBlock::ToolUse(ToolCall {
                            id: "toolu_2".into(),
                            name: "File_read".into(),
                            input: ToolInput::parse("{oops"),
                        }),
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::ToolResult {
                            tool_use_id: "toolu_1".into(),
                            text: "fn main() {}".into(),
                            is_error: false,
                        },
                        ContentBlock::ToolResult {
                            tool_use_id: "toolu_2".into(),
                            text: "invalid JSON".into(),
                            is_error: true,
                        },
                    ],
                },
            ],
            tools: vec![ToolDefinition {
                name: "File_read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            max_output_tokens: 1000,
            context: String::new(),
        };
        let expected = json!({
            "model": "claude-test",
            "max_tokens": 1000,
            "stream": true,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "list files",
                    "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "File_read", "input": {"path": "a.rs"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "File_read", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "invalid JSON", "is_error": true,
                        "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{
                "name": "File_read",
                "description": "Read a file",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"},
            }],
        });
        assert_eq!(request_body(&request), expected);
    }

    #[test]
    fn no_system_and_no_tools_are_omitted() {
        let request = Request {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::user_text("hi")],
            tools: vec![],
            max_output_tokens: 5,
            context: String::new(),
        };
        let body = request_body(&request);
        assert!(
            body.get("system").is_none() && body.get("tools").is_none(),
            "{body}"
        );
    }

    #[test]
    fn ignores_thinking_blocks_and_unknown_events() {
        let stream = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
            "event: future_event\ndata: {\"type\":\"future_event\"}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":9}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let response = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap();
        assert_eq!(
            response.content,
            vec![ContentBlock::Text { text: "ok".into() }]
        );
        assert_eq!(response.stop_reason, StopReason::Other("refusal".into()));
        assert_eq!(
            (response.usage.input_tokens, response.usage.output_tokens),
            (3, 9)
        );
    }

    #[test]
    fn cache_figures_are_read_from_the_usage() {
        let stream = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":1500,\"cache_read_input_tokens\":40000,\"output_tokens\":1}}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let response = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap();
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 7,
                cache_read_tokens: 40_000,
                cache_creation_tokens: 1_500,
            }
        );
    }

    #[test]
    fn error_event_is_a_typed_error() {
        let stream = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        let err = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap_err();
        assert!(
            matches!(&err, LlmError::StreamError { kind, .. } if kind == "overloaded_error"),
            "{err:?}"
        );
        assert!(err.is_transient());
        assert!(err.to_string().contains("Overloaded"));
    }

    #[test]
    fn malformed_event_json_is_a_protocol_error() {
        let stream = "event: message_start\ndata: {not json\n\n";
        let err = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("invalid JSON"), "{err}");
    }
}
