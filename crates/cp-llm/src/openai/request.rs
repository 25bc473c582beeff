//! The Chat Completions request body, serialized from the typed messages without copying
//! them.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::types::{ContentBlock, Message, Request, Role};

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::{ToolDefinition, ToolInput, ToolUse};

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
}
