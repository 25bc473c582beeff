//! The Anthropic request body: system prompt, tools and messages in the Messages API's shape,
//! with prompt-cache breakpoints on the stable prefix and the changing panel context after
//! the last one.
//!
//! The body is serialized straight from the request's typed messages through structs that
//! borrow them: nothing of the history is copied, whatever its length. Every struct lists its
//! fields in alphabetical order, the order a `serde_json::Value` object writes its keys in, so
//! the bytes are those the body had when it was built as a `Value` (the cached prefix is
//! byte-stable across versions too; a test checks it).
//!
//! A provider builds its bodies with a [`BodyCache`] per conversation (a
//! [`CachePool`](crate::wire_cache::CachePool) of them: parallel workflow phases share their
//! provider): each message without a breakpoint or the context is serialized once and its
//! bytes kept (see [`WireCache`]), so a request costs serializing what changed, and copying
//! the rest. The bytes are those [`request_body`]
//! writes from scratch (a test checks it over changing histories).

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::types::{ContentBlock, Message, Request, Role, ToolDefinition, ToolInput};
use crate::wire_cache::{Claim, WireCache};

/// The JSON body for `request`, with prompt-cache breakpoints (at most 4, the API's limit):
/// on the last tool definition, on the system prompt, on the last block of the latest message
/// and on the last block of the user message before it (where the previous request put its
/// breakpoint, so that entry is read even when more than 20 blocks were added since). The
/// volatile [`Request::context`] follows the last breakpoint, so the cached prefix (tools,
/// system, conversation) is byte-stable from request to request.
pub(crate) fn request_body(request: &Request) -> Result<Vec<u8>, serde_json::Error> {
    let marks = Marks::of(request);
    let messages = (0..request.messages.len())
        .map(|index| marks.message(request, index))
        .chain(Marks::context_message(request))
        .collect();
    serde_json::to_vec(&Body::of(request, messages))
}

/// The serialized messages of earlier requests, for [`BodyCache::body`].
#[derive(Default)]
pub(crate) struct BodyCache {
    messages: WireCache<Box<RawValue>>,
}

impl BodyCache {
    /// Whether this cache was made for `request`'s conversation, for a
    /// [`CachePool`](crate::wire_cache::CachePool).
    pub(crate) fn claim(&self, request: &Request) -> Claim {
        match self.messages.starts_with(request.messages.first()) {
            Some(true) => Claim::Mine,
            Some(false) => Claim::Other,
            None => Claim::Unclaimed,
        }
    }

    /// The body [`request_body`] writes for `request`, reusing the bytes of every message
    /// serialized for an earlier request that is still the same, without a breakpoint or the
    /// context.
    pub(crate) fn body(&mut self, request: &Request) -> Result<Vec<u8>, serde_json::Error> {
        let marks = Marks::of(request);
        let plain = |index: usize| !marks.touches(request, index);
        let kept = self.messages.refresh(&request.messages, plain, |message| {
            serde_json::value::to_raw_value(&WireMessage::of(message))
        })?;
        let messages: Vec<Part<'_>> = kept
            .into_iter()
            .enumerate()
            .map(|(index, kept)| match kept {
                Some(raw) => Part::Kept(raw),
                None => Part::New(marks.message(request, index)),
            })
            .chain(Marks::context_message(request).map(Part::New))
            .collect();
        serde_json::to_vec(&Body::of(request, messages))
    }
}

/// A message of a body built with a [`BodyCache`]: its kept bytes, or serialized now.
#[derive(Serialize)]
#[serde(untagged)]
enum Part<'a> {
    Kept(&'a RawValue),
    New(WireMessage<'a>),
}

/// Where a request's messages differ from their plain wire form: the breakpoints, and the
/// context.
struct Marks {
    /// The latest message with content: a breakpoint on its last block.
    latest: Option<usize>,
    /// The latest user message with content before it: a breakpoint on its last block.
    previous_user: Option<usize>,
}

impl Marks {
    fn of(request: &Request) -> Self {
        let mut with_content = request
            .messages
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, m)| m.content.iter().any(|b| WireBlock::of(b).is_some()));
        let latest = with_content.next().map(|(i, _)| i);
        let previous_user = latest.and_then(|_| {
            with_content
                .find(|(_, m)| m.role == Role::User)
                .map(|(i, _)| i)
        });
        Self {
            latest,
            previous_user,
        }
    }

    /// Whether the message at `index` has a breakpoint or takes the context.
    fn touches(&self, request: &Request, index: usize) -> bool {
        self.latest == Some(index)
            || self.previous_user == Some(index)
            || Self::takes_context(request, index)
    }

    /// The context goes at the end of the last message when that is a user message.
    fn takes_context(request: &Request, index: usize) -> bool {
        !request.context.is_empty()
            && index + 1 == request.messages.len()
            && request.messages[index].role == Role::User
    }

    /// The message at `index` on the wire, with its breakpoint and the context if it has them.
    fn message<'a>(&self, request: &'a Request, index: usize) -> WireMessage<'a> {
        let mut message = WireMessage::of(&request.messages[index]);
        if (self.latest == Some(index) || self.previous_user == Some(index))
            && let Some(block) = message.content.last_mut()
        {
            block.set_breakpoint();
        }
        if Self::takes_context(request, index) {
            message.content.push(context_block(&request.context));
        }
        message
    }

    /// The context as a message of its own, when the conversation does not end with a user
    /// message to take it.
    fn context_message(request: &Request) -> Option<WireMessage<'_>> {
        let taken = request
            .messages
            .len()
            .checked_sub(1)
            .is_some_and(|last| Self::takes_context(request, last));
        (!request.context.is_empty() && !taken).then(|| WireMessage {
            content: vec![context_block(&request.context)],
            role: "user",
        })
    }
}

/// The volatile context as the last text block, after the breakpoint.
fn context_block(context: &str) -> WireBlock<'_> {
    WireBlock::Text(TextBlock {
        cache_control: None,
        text: context,
        kind: "text",
    })
}

/// The top-level body; `M` is a message on the wire, or its serialized bytes.
#[derive(Serialize)]
struct Body<'a, M> {
    max_tokens: u32,
    messages: Vec<M>,
    model: &'a str,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[TextBlock<'a>; 1]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

impl<'a, M> Body<'a, M> {
    fn of(request: &'a Request, messages: Vec<M>) -> Self {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::ToolUse;
    use crate::wire_cache::CachePool;

    fn call(id: &str, input: ToolInput) -> ContentBlock {
        ContentBlock::ToolUse(ToolUse {
            id: id.into(),
            name: "File_edit".into(),
            input,
        })
    }

    fn result(id: &str, text: &str) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            text: text.into(),
            is_error: false,
        }
    }

    /// A history changed in every way a session changes it (and some it never does), one
    /// step at a time.
    /// One change to a request's history or context.
    type Step = Box<dyn Fn(&mut Request)>;

    fn steps() -> Vec<Step> {
        vec![
            Box::new(|r| r.messages.push(Message::user_text("fix the parser"))),
            Box::new(|r| {
                r.messages.push(Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text {
                            text: "Looking.".into(),
                        },
                        call("t1", ToolInput::Valid(json!({"path": "a.rs", "n": 0.0}))),
                    ],
                });
            }),
            Box::new(|r| {
                r.messages.push(Message {
                    role: Role::User,
                    content: vec![result("t1", "fn main() {}\n")],
                });
            }),
            Box::new(|r| Message::push_user_text(&mut r.messages, "<system-reminder>")),
            Box::new(|r| r.context = "<panels>console tail</panels>".into()),
            Box::new(|r| r.messages.push(Message::assistant_text("Done."))),
            Box::new(|r| r.messages.push(Message::user_text("and the lexer"))),
            // An earlier message changed in place: its text, a number's sign, an error flag.
            Box::new(|r| {
                r.messages[0] = Message::user_text("fix the parser, please");
            }),
            Box::new(|r| {
                r.messages[1].content[1] =
                    call("t1", ToolInput::Valid(json!({"path": "a.rs", "n": -0.0})));
            }),
            Box::new(|r| {
                if let ContentBlock::ToolResult { is_error, .. } = &mut r.messages[2].content[0] {
                    *is_error = true;
                }
            }),
            Box::new(|r| r.messages[1].content[1] = call("t1", ToolInput::parse("{oops"))),
            // A message with nothing to send (empty text) at the end.
            Box::new(|r| {
                r.messages.push(Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Text {
                        text: String::new(),
                    }],
                });
            }),
            Box::new(|r| r.context.clear()),
            Box::new(|r| r.messages.push(Message::user_text("go on"))),
            Box::new(|r| r.context = "<panels>2</panels>".into()),
            Box::new(|r| r.system.clear()),
            // Cut back (a failed request's history), then grown again differently.
            Box::new(|r| r.messages.truncate(3)),
            Box::new(|r| r.messages.push(Message::assistant_text("Other."))),
            Box::new(|r| r.messages.clear()),
            Box::new(|r| r.messages.push(Message::user_text("again"))),
        ]
    }

    #[test]
    fn conversations_sharing_a_provider_keep_their_own_cache() {
        let pool: CachePool<BodyCache> = CachePool::default();
        let conversation = |name: &str| Request {
            model: "claude-test".into(),
            system: String::new(),
            messages: (0..20)
                .map(|i| {
                    if i % 2 == 0 {
                        Message::user_text(format!("{name} {i}"))
                    } else {
                        Message::assistant_text(format!("{name} {i}"))
                    }
                })
                .collect(),
            tools: Vec::new(),
            max_output_tokens: 256,
            context: "<panels/>".into(),
        };
        let (mut a, mut b) = (conversation("a"), conversation("b"));
        for step in 0..4 {
            for request in [&mut a, &mut b] {
                request
                    .messages
                    .push(Message::user_text(format!("step {step}")));
                let body = pool
                    .with(|c| c.claim(request), |c| c.body(request))
                    .unwrap();
                assert_eq!(body, request_body(request).unwrap());
                request.messages.push(Message::assistant_text("ok"));
            }
        }
        for request in [&a, &b] {
            let claim = pool.with(|c| c.claim(request), |c| c.claim(request));
            assert_eq!(claim, Claim::Mine);
        }
    }

    #[test]
    fn a_cached_body_is_the_body_written_from_scratch_at_every_step() {
        let mut request = Request {
            model: "claude-test".into(),
            system: "Be brief.".into(),
            messages: Vec::new(),
            tools: vec![ToolDefinition {
                name: "File_edit".into(),
                description: "Edit a file".into(),
                parameters: json!({"type": "object"}),
            }],
            max_output_tokens: 256,
            context: String::new(),
        };
        let mut cache = BodyCache::default();
        for (number, step) in steps().iter().enumerate() {
            step(&mut request);
            // Twice: the second body is built from what the first one kept.
            for _ in 0..2 {
                let cached = String::from_utf8(cache.body(&request).unwrap()).unwrap();
                let fresh = String::from_utf8(request_body(&request).unwrap()).unwrap();
                assert_eq!(cached, fresh, "step {number}");
            }
        }
    }
}

/// Not a test but a measurement, run under callgrind for instruction counts that a busy
/// machine does not move (BENCHMARKS.md, "The request body at 10,000 entries"): `TURNS`
/// requests on a history of `PAIRS` user/assistant pairs (the `day` bench's shape), each after
/// a new user message, built from scratch (`PROBE=scratch`), with a [`BodyCache`]
/// (`PROBE=cached`) or not at all (`PROBE=none`, the set-up alone).
#[cfg(test)]
mod body_cost {
    use super::*;

    fn var(name: &str, default: usize) -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    #[test]
    #[ignore = "a measurement for callgrind, see the module's doc"]
    fn request_bodies_of_a_long_history() {
        let mode = std::env::var("PROBE").unwrap_or_default();
        let mut request = Request {
            model: "claude-test".into(),
            system: "Be brief.".into(),
            messages: Vec::new(),
            tools: Vec::new(),
            max_output_tokens: 256,
            context: "<panels>console tail</panels>".into(),
        };
        for i in 0..var("PAIRS", 3_334) {
            request.messages.push(Message::user_text(format!(
                "Step {i}: add the next check to the parser, please."
            )));
            request.messages.push(Message::assistant_text(format!(
                "Done with step {i}: the parser now rejects empty input, and `cargo test` passes."
            )));
        }
        let mut cache = BodyCache::default();
        let mut bytes = 0;
        for turn in 0..var("TURNS", 11) {
            request
                .messages
                .push(Message::user_text(format!("write t{turn}")));
            bytes += match mode.as_str() {
                "scratch" => request_body(&request).unwrap().len(),
                "cached" => cache.body(&request).unwrap().len(),
                _ => 0,
            };
            request
                .messages
                .push(Message::assistant_text(format!("Wrote t{turn}.")));
        }
        std::hint::black_box(bytes);
    }
}
