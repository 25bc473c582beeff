//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.
//!
//! The stream is `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, or `input_json_delta` fragments of a tool call's
//! input) and `content_block_stop`, then `message_delta` (stop reason, output usage) and
//! `message_stop`. `ping` may come anywhere; `error` reports a failure mid-stream. Unknown
//! event and block types are ignored, as the API's versioning policy asks of clients.

mod decode;
mod request;

use super::config::ProviderConfig;
use super::error::LlmError;
use super::provider::Provider;
use super::transport::{HttpRequest, Transport};
use super::types::{Request, Response, StreamEvent};
use super::wire_cache::CachePool;
use cp_base::CancelToken;
use decode::Decoder;
use request::BodyCache;
pub(super) use request::request_body;

/// API version sent in `anthropic-version`.
const API_VERSION: &str = "2023-06-01";

/// A provider speaking the Anthropic Messages API.
pub(super) struct Anthropic {
    config: ProviderConfig,
    transport: Transport,
    /// The messages serialized for earlier requests, reused while they are unchanged: a
    /// cache per conversation (parallel workflow phases share a provider).
    bodies: CachePool<BodyCache>,
}

impl Anthropic {
    /// A provider for `config` (whose kind is Anthropic).
    pub(super) fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        Self {
            config,
            transport,
            bodies: CachePool::default(),
        }
    }

    fn http_request(&self, request: &Request) -> Result<HttpRequest, LlmError> {
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
            ("anthropic-version", API_VERSION.to_owned()),
        ];
        if let Some(key) = &self.config.api_key {
            headers.push(("x-api-key", key.expose().to_owned()));
        }
        let body = self
            .bodies
            .with(|cache| cache.claim(request), |cache| cache.body(request))
            .map_err(|e| LlmError::Connection {
                provider: self.config.label(),
                message: format!("the request body could not be encoded as JSON: {e}"),
            })?;
        Ok(HttpRequest {
            url: format!("{}/v1/messages", self.config.base_url),
            headers,
            body,
        })
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
        self.transport
            .stream(&self.http_request(request)?, Decoder::new, cancel, on_event)
    }
}

/// Decodes a whole event stream given as chunks; for tests of the decoder alone.
#[cfg(test)]
pub(super) fn decode_chunks(
    chunks: &[&[u8]],
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    super::sse::decode_slices(Decoder::new("Anthropic"), chunks, on_event)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::{
        ContentBlock, FinishReason, Message, Role, ToolDefinition, ToolInput, ToolUse, Usage,
    };

    /// The body as sent, parsed back.
    fn body_value(request: &Request) -> serde_json::Value {
        serde_json::from_slice(&request_body(request).unwrap()).unwrap()
    }

    #[test]
    fn request_body_bytes_are_those_of_a_json_value() {
        // The body used to be built as a `serde_json::Value`, whose objects write their keys
        // sorted. The same bytes keep the prompt cache's prefix valid across the change.
        let request = Request {
            model: "claude-test".into(),
            system: "Be brief.".into(),
            messages: vec![
                Message::user_text("list files"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: "Looking.".into(),
                        },
                        ContentBlock::ToolUse(ToolUse {
                            id: "toolu_1".into(),
                            name: "File_read".into(),
                            input: ToolInput::Valid(json!({"path": "a.rs", "lines": [1, 2.5]})),
                        }),
                        ContentBlock::ToolUse(ToolUse {
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
                            text: "fn main() { \"é\" }\n".into(),
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
            tools: vec![
                ToolDefinition {
                    name: "File_read".into(),
                    description: "Read a file".into(),
                    parameters: json!({"type": "object", "required": ["path"]}),
                },
                ToolDefinition {
                    name: "File_write".into(),
                    description: "Write a file".into(),
                    parameters: json!({"type": "object"}),
                },
            ],
            max_output_tokens: 256,
            context: "<panels>console tail</panels>".into(),
        };
        let bytes = request_body(&request).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            String::from_utf8(serde_json::to_vec(&value).unwrap()).unwrap(),
            String::from_utf8(bytes).unwrap()
        );
    }

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
                        ContentBlock::ToolUse(ToolUse {
                            id: "toolu_1".into(),
                            name: "File_read".into(),
                            input: ToolInput::Valid(json!({"path": "a.rs"})),
                        }),
                        ContentBlock::ToolUse(ToolUse {
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
        assert_eq!(body_value(&request), expected);
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
        let body = body_value(&request);
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
        assert_eq!(
            response.finish_reason,
            FinishReason::Other("refusal".into())
        );
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
