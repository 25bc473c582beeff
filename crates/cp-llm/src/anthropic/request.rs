//! The Anthropic request body: system prompt, tools and messages in the Messages API's shape,
//! with prompt-cache breakpoints on the stable prefix and the changing panel context after
//! the last one.
//!
//! The body is serialized straight from the request's typed messages through structs that
//! borrow them: nothing of the history is copied, whatever its length. Every struct lists its
//! fields in alphabetical order, the order a `serde_json::Value` object writes its keys in, so
//! the bytes are those the body had when it was built as a `Value` (the cached prefix is
//! byte-stable across versions too; a test checks it).

use serde::Serialize;
use serde_json::Value;

use crate::types::{ContentBlock, Message, Request, Role, ToolDefinition, ToolInput};

/// The JSON body for `request`, with prompt-cache breakpoints (at most 4, the API's limit):
/// on the last tool definition, on the system prompt, on the last block of the latest message
/// and on the last block of the user message before it (where the previous request put its
/// breakpoint, so that entry is read even when more than 20 blocks were added since). The
/// volatile [`Request::context`] follows the last breakpoint, so the cached prefix (tools,
/// system, conversation) is byte-stable from request to request.
pub(crate) fn request_body(request: &Request) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&Body::of(request))
}

/// The top-level body.
#[derive(Serialize)]
struct Body<'a> {
    max_tokens: u32,
    messages: Vec<WireMessage<'a>>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[TextBlock<'a>; 1]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

impl<'a> Body<'a> {
    fn of(request: &'a Request) -> Self {
        let mut messages: Vec<WireMessage<'a>> =
            request.messages.iter().map(WireMessage::of).collect();
        mark_message_breakpoints(&mut messages);
        append_context(&mut messages, &request.context);
        let system = (!request.system.is_empty()).then(|| {
            [TextBlock {
                cache_control: Some(EPHEMERAL),
                text: &request.system,
                kind: "text",
            }]
        });
        let mut tools: Vec<WireTool<'a>> = request.tools.iter().map(WireTool::of).collect();
        if let Some(last) = tools.last_mut() {
            last.cache_control = Some(EPHEMERAL);
        }
        Self {
            max_tokens: request.max_output_tokens,
            messages,
            model: &request.model,
            stream: true,
            system,
            tools,
        }
    }
}

/// The cache breakpoint marker: `{"type": "ephemeral"}`.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Serialize)]
struct WireMessage<'a> {
    content: Vec<WireBlock<'a>>,
    role: &'static str,
}

impl<'a> WireMessage<'a> {
    fn of(message: &'a Message) -> Self {
        Self {
            content: message.content.iter().filter_map(WireBlock::of).collect(),
            role: role_name(message.role),
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// One content block on the wire.
#[derive(Serialize)]
#[serde(untagged)]
enum WireBlock<'a> {
    Text(TextBlock<'a>),
    ToolUse(ToolUseBlock<'a>),
    ToolResult(ToolResultBlock<'a>),
}

impl<'a> WireBlock<'a> {
    /// The block on the wire; empty text blocks are dropped: the API rejects them.
    fn of(block: &'a ContentBlock) -> Option<Self> {
        Some(match block {
            ContentBlock::Text { text } if text.is_empty() => return None,
            ContentBlock::Text { text } => Self::Text(TextBlock {
                cache_control: None,
                text,
                kind: "text",
            }),
            ContentBlock::ToolUse(call) => Self::ToolUse(ToolUseBlock {
                cache_control: None,
                id: &call.id,
                input: WireInput::of(&call.input),
                name: &call.name,
                kind: "tool_use",
            }),
            ContentBlock::ToolResult {
                tool_use_id,
                text,
                is_error,
            } => Self::ToolResult(ToolResultBlock {
                cache_control: None,
                content: text,
                is_error: *is_error,
                tool_use_id,
                kind: "tool_result",
            }),
        })
    }

    fn set_breakpoint(&mut self) {
        let slot = match self {
            Self::Text(block) => &mut block.cache_control,
            Self::ToolUse(block) => &mut block.cache_control,
            Self::ToolResult(block) => &mut block.cache_control,
        };
        *slot = Some(EPHEMERAL);
    }
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
    text: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct ToolUseBlock<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
    id: &'a str,
    input: WireInput<'a>,
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct ToolResultBlock<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
    content: &'a str,
    #[serde(skip_serializing_if = "is_false")]
    is_error: bool,
    tool_use_id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes the field by reference"
)]
fn is_false(value: &bool) -> bool {
    !*value
}

/// A tool call's arguments as sent back: the object, or `{}` when the model's were invalid
/// (see [`ToolInput::to_wire_value`]).
#[derive(Serialize)]
#[serde(untagged)]
enum WireInput<'a> {
    Object(&'a Value),
    Empty {},
}

impl<'a> WireInput<'a> {
    fn of(input: &'a ToolInput) -> Self {
        match input {
            ToolInput::Valid(value) => Self::Object(value),
            ToolInput::Invalid { .. } => Self::Empty {},
        }
    }
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
    description: &'a str,
    input_schema: &'a Value,
    name: &'a str,
}

impl<'a> WireTool<'a> {
    fn of(tool: &'a ToolDefinition) -> Self {
        Self {
            cache_control: None,
            description: &tool.description,
            input_schema: &tool.parameters,
            name: &tool.name,
        }
    }
}

/// Puts a breakpoint on the last block of the latest message and of the latest user message
/// before it (two of the four allowed; tools and system take the other two).
fn mark_message_breakpoints(messages: &mut [WireMessage<'_>]) {
    let mut with_content = messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| !m.content.is_empty());
    let Some((latest, _)) = with_content.next() else {
        return;
    };
    let previous_user = with_content.find(|(_, m)| m.role == "user").map(|(i, _)| i);
    for index in std::iter::once(latest).chain(previous_user) {
        if let Some(block) = messages[index].content.last_mut() {
            block.set_breakpoint();
        }
    }
}

/// Appends the volatile context as a last text block of the latest user message (a new user
/// message when the conversation ends with the assistant), after the breakpoint.
fn append_context<'a>(messages: &mut Vec<WireMessage<'a>>, context: &'a str) {
    if context.is_empty() {
        return;
    }
    let block = WireBlock::Text(TextBlock {
        cache_control: None,
        text: context,
        kind: "text",
    });
    match messages.last_mut() {
        Some(last) if last.role == "user" => last.content.push(block),
        _ => messages.push(WireMessage {
            content: vec![block],
            role: "user",
        }),
    }
}
