//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with `stream: true`.
//!
//! Serves OpenAI, Ollama, vLLM, llama.cpp, OpenRouter and anything else speaking the format.
//! Each `data:` chunk carries `choices[0].delta` with `content` text and/or `tool_calls`
//! fragments keyed by `index` (id and name first, then `arguments` string pieces), then a
//! `finish_reason`, then (with `stream_options.include_usage`) a usage chunk, then
//! `data: [DONE]`. Servers differ in small ways; the decoder tolerates a missing `index`, a
//! missing `[DONE]` after `finish_reason`, and `finish_reason: "stop"` on tool calls.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

use serde_json::Value;

use super::config::ProviderConfig;
use super::error::{LlmError, abbreviate};
use super::provider::Provider;
use super::sse::{EventDecoder, Flow, SseEvent};
use super::transport::{HttpRequest, Transport};
use super::types::{
    ContentBlock, FinishReason, Message, Request, Response, Role, StreamEvent, ToolInput, ToolUse,
    Usage,
};
use cp_base::CancelToken;

/// A provider speaking OpenAI Chat Completions.
pub(super) struct OpenAi {
    config: ProviderConfig,
    transport: Transport,
}

impl OpenAi {
    /// A provider for `config` (whose kind is OpenAI).
    pub(super) fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        Self { config, transport }
    }

    fn http_request(&self, request: &Request) -> Result<HttpRequest, LlmError> {
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
        ];
        if let Some(key) = &self.config.api_key {
            headers.push(("authorization", format!("Bearer {}", key.expose())));
        }
        let tokens_field = if self.config.is_official_openai() {
            TokensField::MaxCompletionTokens
        } else {
            TokensField::MaxTokens
        };
        let body = request_body(request, tokens_field).map_err(|e| LlmError::Connection {
            provider: self.config.label(),
            message: format!("the request body could not be encoded as JSON: {e}"),
        })?;
        Ok(HttpRequest {
            url: format!("{}/chat/completions", self.config.base_url),
            headers,
            body,
        })
    }
}

impl Provider for OpenAi {
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

/// Name of the output limit field: OpenAI itself wants `max_completion_tokens` (reasoning
/// models reject `max_tokens`); compatible servers know `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokensField {
    /// `max_tokens`.
    MaxTokens,
    /// `max_completion_tokens`.
    MaxCompletionTokens,
}

/// The JSON body for `request`, serialized straight from its typed messages through structs
/// that borrow them (nothing of the history is copied). Fields are listed in alphabetical
/// order, as a `serde_json::Value` object writes its keys, so the bytes are those of the body
/// built as a `Value` before.
pub(super) fn request_body(
    request: &Request,
    tokens_field: TokensField,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(WireMessage::text("system", Cow::Borrowed(&request.system)));
    }
    for message in &request.messages {
        push_message(&mut messages, message);
    }
    append_context(&mut messages, &request.context);
    let limit = Some(request.max_output_tokens);
    let (max_completion_tokens, max_tokens) = match tokens_field {
        TokensField::MaxTokens => (None, limit),
        TokensField::MaxCompletionTokens => (limit, None),
    };
    let tools = request
        .tools
        .iter()
        .map(|tool| WireTool {
            function: WireFunction {
                description: &tool.description,
                name: &tool.name,
                parameters: &tool.parameters,
            },
            kind: "function",
        })
        .collect();
    serde_json::to_vec(&Body {
        max_completion_tokens,
        max_tokens,
        messages,
        model: &request.model,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools,
    })
}

/// The top-level body.
#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    messages: Vec<WireMessage<'a>>,
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireTool<'a> {
    function: WireFunction<'a>,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    description: &'a str,
    name: &'a str,
    parameters: &'a Value,
}

/// One message on the wire. `content` is `null` for an assistant message without text.
#[derive(Serialize)]
struct WireMessage<'a> {
    content: Option<Cow<'a, str>>,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
}

impl<'a> WireMessage<'a> {
    fn text(role: &'static str, content: Cow<'a, str>) -> Self {
        Self {
            content: Some(content),
            role,
            tool_call_id: None,
            tool_calls: Vec::new(),
        }
    }
}

#[derive(Serialize)]
struct WireCall<'a> {
    function: WireCallFunction<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct WireCallFunction<'a> {
    arguments: String,
    name: &'a str,
}

/// Appends the volatile context at the very end, so the prefix these services cache
/// automatically (system, tools, conversation) stays stable: into the latest user message's
/// text when the conversation ends with one, else as a new user message (after tool results).
fn append_context<'a>(messages: &mut Vec<WireMessage<'a>>, context: &'a str) {
    if context.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last.role == "user"
        && let Some(text) = &mut last.content
    {
        *text = Cow::Owned(format!("{text}\n\n{context}"));
        return;
    }
    messages.push(WireMessage::text("user", Cow::Borrowed(context)));
}

/// Appends the wire messages for one message. Tool results become `role: "tool"` messages,
/// placed first because they must directly follow the assistant's `tool_calls`; the text of
/// the same user message follows as one user message.
fn push_message<'a>(out: &mut Vec<WireMessage<'a>>, message: &'a Message) {
    let mut texts = message.content.iter().filter_map(|block| match block {
        ContentBlock::Text { text } if !text.is_empty() => Some(text.as_str()),
        _ => None,
    });
    let text: Option<Cow<'a, str>> = match (texts.next(), texts.next()) {
        (None, _) => None,
        (Some(one), None) => Some(Cow::Borrowed(one)),
        (Some(first), Some(second)) => {
            let mut joined = format!("{first}\n\n{second}");
            for more in texts {
                joined.push_str("\n\n");
                joined.push_str(more);
            }
            Some(Cow::Owned(joined))
        }
    };
    match message.role {
        Role::User => {
            for block in &message.content {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    text,
                    is_error,
                } = block
                {
                    // The format has no error flag; say it in the content.
                    let content = if *is_error {
                        Cow::Owned(format!("Error: {text}"))
                    } else {
                        Cow::Borrowed(text.as_str())
                    };
                    out.push(WireMessage {
                        tool_call_id: Some(tool_use_id),
                        ..WireMessage::text("tool", content)
                    });
                }
            }
            if let Some(text) = text {
                out.push(WireMessage::text("user", text));
            }
        }
        Role::Assistant => {
            let tool_calls = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolUse(call) => Some(WireCall {
                        function: WireCallFunction {
                            arguments: call.input.to_wire_value().to_string(),
                            name: &call.name,
                        },
                        id: &call.id,
                        kind: "function",
                    }),
                    _ => None,
                })
                .collect();
            out.push(WireMessage {
                content: text,
                role: "assistant",
                tool_call_id: None,
                tool_calls,
            });
        }
    }
}

/// A tool call being streamed.
#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Folds the chunk stream into a [`Response`].
struct Decoder {
    label: String,
    text: String,
    calls: BTreeMap<u64, Call>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl Decoder {
    fn new(label: &str) -> Self {
        Self {
            label: label.to_owned(),
            text: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: Usage::default(),
            done: false,
        }
    }

    fn tool_call_fragment(&mut self, fragment: &Value, on_event: &mut dyn FnMut(StreamEvent)) {
        let text = |pointer: &str| {
            fragment
                .pointer(pointer)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let id = text("/id");
        // Servers that omit `index`: a new id starts a new call, else it continues the last.
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| {
                let last = self.calls.keys().next_back().copied();
                let known = id.and_then(|id| self.calls.iter().find(|(_, call)| call.id == id));
                match (id, known) {
                    (_, Some((index, _))) => *index,
                    (Some(_), None) => last.map_or(0, |n| n + 1),
                    (None, None) => last.unwrap_or(0),
                }
            });
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id
            && call.id.is_empty()
        {
            id.clone_into(&mut call.id);
        }
        if let Some(name) = text("/function/name") {
            name.clone_into(&mut call.name);
        }
        let piece = text("/function/arguments").unwrap_or("");
        call.arguments.push_str(piece);
        if call.announced {
            if !piece.is_empty() {
                on_event(StreamEvent::ToolCallDelta {
                    id: call.id.clone(),
                    fragment: piece.to_owned(),
                });
            }
        } else if !call.name.is_empty() {
            call.announced = true;
            on_event(StreamEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if !call.arguments.is_empty() {
                on_event(StreamEvent::ToolCallDelta {
                    id: call.id.clone(),
                    fragment: call.arguments.clone(),
                });
            }
        }
    }
}

impl EventDecoder for Decoder {
    fn handle(
        &mut self,
        event: &SseEvent,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Flow, LlmError> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(Flow::Stop);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|err| LlmError::Protocol {
            provider: self.label.clone(),
            detail: format!(
                "chunk has invalid JSON ({err}): {}",
                abbreviate(&event.data, 200)
            ),
        })?;
        if let Some(error) = data.get("error") {
            let text = |name: &str| error.get(name).and_then(Value::as_str).map(str::to_owned);
            return Err(LlmError::StreamError {
                provider: self.label.clone(),
                kind: text("type")
                    .or_else(|| text("code"))
                    .unwrap_or_else(|| "error".to_owned()),
                message: text("message")
                    .or_else(|| error.as_str().map(str::to_owned))
                    .unwrap_or_else(|| abbreviate(&error.to_string(), 200)),
            });
        }
        if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
            self.usage = parse_usage(usage);
            on_event(StreamEvent::Usage(self.usage));
        }
        let Some(choice) = data.get("choices").and_then(|c| c.get(0)) else {
            return Ok(Flow::Continue);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(piece) = delta.get("content").and_then(Value::as_str)
            && !piece.is_empty()
        {
            self.text.push_str(piece);
            on_event(StreamEvent::TextDelta(piece.to_owned()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for fragment in calls {
                self.tool_call_fragment(fragment, on_event);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(Flow::Continue)
    }

    fn finish(self) -> Result<Response, LlmError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(LlmError::StreamCut {
                provider: self.label,
                detail: "the stream ended without a `finish_reason` or `[DONE]`".to_owned(),
            });
        }
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(ContentBlock::Text { text: self.text });
        }
        let has_tools = !self.calls.is_empty();
        for (index, call) in self.calls {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            let input = ToolInput::parse(&call.arguments);
            content.push(ContentBlock::ToolUse(ToolUse {
                id,
                name: call.name,
                input,
            }));
        }
        let finish_reason = match self.finish_reason.as_deref() {
            Some("length") => FinishReason::MaxTokens,
            _ if has_tools => FinishReason::ToolUse,
            Some("stop") | None => FinishReason::EndTurn,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        Ok(Response {
            content,
            finish_reason,
            usage: self.usage,
        })
    }
}

/// OpenAI counts cached tokens inside `prompt_tokens`; [`Usage`] keeps them apart.
fn parse_usage(value: &Value) -> Usage {
    let get = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let prompt = get("/prompt_tokens");
    let cached = get("/prompt_tokens_details/cached_tokens").min(prompt);
    Usage {
        input_tokens: prompt - cached,
        output_tokens: get("/completion_tokens"),
        cache_read_tokens: cached,
        cache_creation_tokens: 0,
    }
}

/// Decodes a whole event stream given as chunks; for tests of the decoder alone.
#[cfg(test)]
pub(super) fn decode_chunks(
    chunks: &[&[u8]],
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    super::sse::decode_slices(Decoder::new("OpenAI"), chunks, on_event)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::ToolDefinition;

    fn conversation() -> Request {
        Request {
            model: "gpt-test".into(),
            system: "Be brief.".into(),
            messages: vec![
                Message::user_text("read a.rs"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: "Reading.".into(),
                        },
                        ContentBlock::ToolUse(ToolUse {
                            id: "call_1".into(),
                            name: "File_read".into(),
                            input: ToolInput::Valid(json!({"path": "a.rs"})),
                        }),
                        ContentBlock::ToolUse(ToolUse {
                            id: "call_2".into(),
                            name: "File_read".into(),
                            input: ToolInput::parse("{\"path\": "),
                        }),
                    ],
                },
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::ToolResult {
                            tool_use_id: "call_1".into(),
                            text: "fn main() {}".into(),
                            is_error: false,
                        },
                        ContentBlock::ToolResult {
                            tool_use_id: "call_2".into(),
                            text: "arguments were not valid JSON".into(),
                            is_error: true,
                        },
                        ContentBlock::Text {
                            text: "Also check b.rs".into(),
                        },
                    ],
                },
            ],
            tools: vec![ToolDefinition {
                name: "File_read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object"}),
            }],
            max_output_tokens: 256,
            context: String::new(),
        }
    }

    #[test]
    fn request_body_shape() {
        let expected = json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "read a.rs"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "File_read", "arguments": "{\"path\":\"a.rs\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "File_read", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: arguments were not valid JSON"},
                {"role": "user", "content": "Also check b.rs"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
            "tools": [{"type": "function", "function": {
                "name": "File_read", "description": "Read a file", "parameters": {"type": "object"},
            }}],
        });
        assert_eq!(
            body_value(&conversation(), TokensField::MaxTokens),
            expected
        );
        let official = body_value(&conversation(), TokensField::MaxCompletionTokens);
        assert_eq!(official["max_completion_tokens"], json!(256));
        assert!(official.get("max_tokens").is_none());
    }

    #[test]
    fn assistant_without_text_sends_null_content() {
        let mut request = conversation();
        request.messages[1].content.remove(0);
        let body = body_value(&request, TokensField::MaxTokens);
        assert_eq!(body["messages"][2]["content"], Value::Null);
    }

    /// The body as sent, parsed back.
    fn body_value(request: &Request, tokens_field: TokensField) -> Value {
        serde_json::from_slice(&request_body(request, tokens_field).unwrap()).unwrap()
    }

    #[test]
    fn request_body_bytes_are_those_of_a_json_value() {
        // Built as a `serde_json::Value` before, whose objects write their keys sorted: the
        // same bytes keep the servers' automatic prefix cache valid across the change.
        let mut request = conversation();
        request.context = "<panels>tail</panels>".into();
        request.messages[1].content.push(ContentBlock::Text {
            text: "Second text.".into(),
        });
        for field in [TokensField::MaxTokens, TokensField::MaxCompletionTokens] {
            let bytes = request_body(&request, field).unwrap();
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(
                String::from_utf8(serde_json::to_vec(&value).unwrap()).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
            assert_eq!(
                value["messages"][2]["content"],
                json!("Reading.\n\nSecond text.")
            );
        }
    }

    fn sse(chunks: &[Value]) -> String {
        let mut out = String::new();
        for chunk in chunks {
            out.push_str("data: ");
            out.push_str(&chunk.to_string());
            out.push_str("\n\n");
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    #[test]
    fn tool_calls_without_index_and_stop_finish_reason() {
        // Older Ollama: whole calls in one chunk each, no `index`, finish_reason "stop".
        let stream = sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"id": "a", "function": {"name": "File_read", "arguments": "{\"path\":\"x\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"id": "b", "function": {"name": "File_delete", "arguments": "{\"path\":\"y\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]);
        let mut started = Vec::new();
        let response = decode_chunks(&[stream.as_bytes()], &mut |event| {
            if let StreamEvent::ToolCallStarted { id, name } = event {
                started.push(format!("{id}:{name}"));
            }
        })
        .unwrap();
        assert_eq!(started, ["a:File_read", "b:File_delete"]);
        let calls: Vec<_> = response
            .tool_calls()
            .map(|c| (c.id.as_str(), c.input.clone()))
            .collect();
        assert_eq!(
            calls,
            [
                ("a", ToolInput::Valid(json!({"path": "x"}))),
                ("b", ToolInput::Valid(json!({"path": "y"})))
            ]
        );
        assert_eq!(response.finish_reason, FinishReason::ToolUse);
    }

    #[test]
    fn error_chunk_and_missing_done() {
        let stream =
            "data: {\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\"}}\n\n";
        let err = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("model crashed"), "{err}");
        // finish_reason seen but no [DONE]: complete (usage may be missing).
        let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"length\"}]}\n\n";
        let response = decode_chunks(&[stream.as_bytes()], &mut |_| {}).unwrap();
        assert_eq!(response.finish_reason, FinishReason::MaxTokens);
        assert_eq!(response.text(), "hi");
    }

    #[test]
    fn usage_separates_cached_tokens() {
        let usage = parse_usage(&json!({
            "prompt_tokens": 1000, "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 800}
        }));
        assert_eq!(usage.input_tokens, 200);
        assert_eq!(usage.cache_read_tokens, 800);
        assert_eq!(usage.context_tokens(), 1000);
    }
}
