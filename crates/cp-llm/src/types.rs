//! Provider-neutral conversation types: what the agent loop sends and what it gets back.
//!
//! Both wire formats (Anthropic Messages, OpenAI Chat Completions) are translated to and from
//! these types inside their provider file, so the agent loop never sees a wire format.

use std::fmt;
use std::time::Duration;

use cp_base::json_kind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request to a model: everything needed for one assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Model id as the provider spells it, e.g. `claude-sonnet-4-5` or `gpt-4o`.
    pub model: String,
    /// System prompt. An empty string sends no system prompt.
    pub system: String,
    /// The conversation so far, oldest first. It should start with a user message.
    pub messages: Vec<Message>,
    /// Tools the model may call. Empty means no tools are offered.
    pub tools: Vec<ToolDefinition>,
    /// Upper bound on the tokens the model may generate in this turn.
    pub max_output_tokens: u32,
    /// What changes from request to request (panel contexts such as a console tail). It is
    /// sent after the last cache breakpoint, at the end of the latest user message, and is
    /// never stored in the history, so the cached prefix (tools, system prompt, conversation)
    /// stays byte-stable from one request to the next. Empty sends nothing.
    pub context: String,
}

impl Request {
    /// This request with `context` as its volatile tail (see [`Request::context`]).
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = context.into();
        self
    }
}

/// A tool as the model sees it: name, description and JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Tool name, e.g. `File_edit`.
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// JSON Schema (an object schema) of the arguments.
    pub parameters: Value,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person or the host (tool results travel in user messages).
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author of the message.
    pub role: Role,
    /// Content blocks in order.
    #[serde(deserialize_with = "exact_blocks")]
    pub content: Vec<ContentBlock>,
}

/// The blocks of a saved message, in a vector just their size: grown one push at a time, a
/// one-block message (most of them) would keep room for four, 300 bytes a message of a
/// restored day's history.
fn exact_blocks<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock>, D::Error> {
    let mut blocks = Vec::<ContentBlock>::deserialize(deserializer)?;
    blocks.shrink_to_fit();
    Ok(blocks)
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// Appends a user text to `messages`: into the last message when that is already a user
    /// message (after a failed request, or with tool results), so roles keep alternating as
    /// some providers require.
    pub fn push_user_text(messages: &mut Vec<Message>, text: impl Into<String>) {
        let block = ContentBlock::Text { text: text.into() };
        match messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(block),
            _ => messages.push(Message {
                role: Role::User,
                content: vec![block],
            }),
        }
    }

    /// An assistant message holding one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }
}

/// One block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call made by the model (assistant messages only).
    ToolUse(ToolUse),
    /// The result of a tool call (user messages only). With the OpenAI format each result
    /// becomes a `role: "tool"` message; Anthropic keeps it as a `tool_result` block.
    ToolResult {
        /// Id of the [`ToolUse`] this answers.
        tool_use_id: String,
        /// The result text shown to the model.
        text: String,
        /// True when the tool failed; the model is told so.
        is_error: bool,
    },
}

/// A tool use: the model's request to call a tool, as the provider sent it (its arguments may
/// be malformed). The agent loop runs it as a `cp_base::ToolCall`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// Provider-assigned call id; the tool result must quote it.
    pub id: String,
    /// Name of the tool to call.
    pub name: String,
    /// The arguments, or the raw text when the model produced invalid JSON.
    pub input: ToolInput,
}

/// Arguments of a tool call.
///
/// Models sometimes emit malformed argument JSON. That must not fail the turn: the agent loop
/// answers an [`ToolInput::Invalid`] call with an error tool result (quoting `raw` and `error`)
/// so the model can correct itself. When such a call is sent back to a provider as history,
/// its arguments are sent as `{}` because some servers reject unparsable argument strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolInput {
    /// Arguments parsed to a JSON object.
    Valid(Value),
    /// Arguments that were not a JSON object.
    Invalid {
        /// The text exactly as the model produced it.
        raw: String,
        /// Why it was rejected, e.g. `expected value at line 1 column 9`.
        error: String,
    },
}

impl ToolInput {
    /// Parses argument text as produced by a model. Empty text means "no arguments" (`{}`),
    /// which some servers send for tools without parameters.
    pub fn parse(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return Self::Valid(Value::Object(serde_json::Map::new()));
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(value @ Value::Object(_)) => Self::Valid(value),
            Ok(other) => Self::Invalid {
                raw: raw.to_owned(),
                error: format!(
                    "tool arguments must be a JSON object, got {}",
                    json_kind(&other)
                ),
            },
            Err(err) => Self::Invalid {
                raw: raw.to_owned(),
                error: err.to_string(),
            },
        }
    }

    /// The arguments to send back to a provider as history: the object, or `{}` when invalid.
    pub fn to_wire_value(&self) -> Value {
        match self {
            Self::Valid(value) => value.clone(),
            Self::Invalid { .. } => Value::Object(serde_json::Map::new()),
        }
    }
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its turn.
    EndTurn,
    /// The model wants tool results before it continues.
    ToolUse,
    /// The output hit `max_output_tokens`.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// Anything else the provider reported (e.g. `refusal`, `content_filter`), verbatim.
    Other(String),
}

/// Token usage of one turn, as reported by the provider.
///
/// `input_tokens` counts only uncached input; the cache counters are separate, so
/// [`Usage::context_tokens`] is the full prompt size for both providers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic only).
    pub cache_creation_tokens: u64,
}

impl Usage {
    /// Size of the prompt this turn saw: the figure to compare with the context window.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens
    }
}

/// Progress reported while a turn streams, for the UI. The final [`Response`] is authoritative;
/// these events only let the UI show text as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More assistant text.
    TextDelta(String),
    /// The model started a tool call; its arguments follow.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of a tool call's argument JSON (not valid JSON on its own).
    ToolCallDelta {
        /// Call id.
        id: String,
        /// The fragment.
        fragment: String,
    },
    /// Usage so far (sent when the provider reports it; the last one is final).
    Usage(Usage),
    /// The request failed with a transient error and will be retried after `delay`.
    /// Sent only before any content was streamed, so the UI has nothing to discard.
    Retrying {
        /// Attempt about to be made (2 for the first retry).
        attempt: u32,
        /// Wait before the attempt.
        delay: Duration,
        /// What went wrong, e.g. `HTTP 429: rate limited`.
        reason: String,
    },
}

/// The completed assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// Content blocks in order: text and tool calls.
    pub content: Vec<ContentBlock>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Final usage of the turn.
    pub usage: Usage,
}

impl Response {
    /// All text blocks joined.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse(call) => Some(call),
            _ => None,
        })
    }

    /// The assistant message to append to the conversation.
    pub fn into_message(mut self) -> Message {
        // It stays in the history for the rest of the session: no room kept for more blocks.
        self.content.shrink_to_fit();
        Message {
            role: Role::Assistant,
            content: self.content,
        }
    }
}

/// A secret API key. Its `Debug` and `Display` never show the key, so it cannot leak through
/// logs or error messages; only the HTTP layer reads it with [`ApiKey::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_restored_message_keeps_no_room_for_more_blocks() {
        // From text, as the saved state is read: no length is known before the blocks end.
        let one: Message =
            serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"a"}]}"#)
                .unwrap();
        assert_eq!(one, Message::user_text("a"));
        assert_eq!(one.content.capacity(), 1);
        let three: Message = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]}"#,
        )
        .unwrap();
        assert_eq!(three.content.capacity(), 3);
    }

    #[test]
    fn tool_input_accepts_objects_and_empty_text() {
        assert_eq!(
            ToolInput::parse(r#"{"a":1}"#),
            ToolInput::Valid(json!({"a": 1}))
        );
        assert_eq!(ToolInput::parse("  "), ToolInput::Valid(json!({})));
    }

    #[test]
    fn tool_input_flags_invalid_json_and_non_objects() {
        let ToolInput::Invalid { raw, error } = ToolInput::parse(r#"{"path": "a.rs""#) else {
            panic!("truncated JSON must be invalid");
        };
        assert_eq!(raw, r#"{"path": "a.rs""#);
        assert!(error.contains("EOF"), "{error}");
        let ToolInput::Invalid { error, .. } = ToolInput::parse("[1, 2]") else {
            panic!("an array must be invalid");
        };
        assert!(error.contains("an array"), "{error}");
        assert_eq!(ToolInput::parse("[1]").to_wire_value(), json!({}));
    }

    #[test]
    fn api_key_is_redacted() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{key}").contains("secret"));
        assert_eq!(key.expose(), "sk-secret-123");
    }

    #[test]
    fn usage_context_tokens_adds_cache() {
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 100,
            cache_creation_tokens: 20,
        };
        assert_eq!(usage.context_tokens(), 130);
    }
}
