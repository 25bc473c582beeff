//! Decoding the Chat Completions event stream: text deltas, tool-call fragments keyed by
//! `index`, the finish reason and the usage chunk, tolerant of servers' small differences.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{LlmError, abbreviate};
use crate::sse::{EventDecoder, Flow, SseEvent};
use crate::types::{ContentBlock, FinishReason, Response, StreamEvent, ToolInput, ToolUse, Usage};

/// A tool call being streamed.
#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Folds the chunk stream into a [`Response`].
pub(super) struct Decoder {
    label: String,
    text: String,
    calls: BTreeMap<u64, Call>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl Decoder {
    pub(super) fn new(label: &str) -> Self {
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
pub(crate) fn decode_chunks(
    chunks: &[&[u8]],
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    crate::sse::decode_slices(Decoder::new("OpenAI"), chunks, on_event)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
