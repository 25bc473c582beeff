//! Anthropic Messages API wire format.

use super::turn::pieces;
use super::{Reply, Turn};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

fn event(out: &mut String, data: &Value) {
    let name = data["type"].as_str().unwrap_or("message");
    let _ = write!(out, "event: {name}\ndata: {data}\n\n");
}

/// The full event stream of `turn`. Every reply gets its own message id, as the real API's
/// do (clients de-duplicate usage by it).
pub fn sse(turn: &Turn) -> String {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let id = format!(
        "msg_01Scripted{:06}",
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    );
    let mut out = String::new();
    event(
        &mut out,
        &json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": turn.input_tokens,
                      "cache_creation_input_tokens": turn.cache_creation_tokens,
                      "cache_read_input_tokens": turn.cache_read_tokens, "output_tokens": 1},
        }}),
    );
    event(&mut out, &json!({"type": "ping"}));
    let mut index = 0;
    if !turn.text.is_empty() {
        event(
            &mut out,
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}),
        );
        for piece in pieces(&turn.text, 12) {
            event(
                &mut out,
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        event(
            &mut out,
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    for (id, name, args) in &turn.tool_calls {
        event(
            &mut out,
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        event(
            &mut out,
            &json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": ""}}),
        );
        for piece in pieces(args, 7) {
            event(
                &mut out,
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        event(
            &mut out,
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    let natural = if turn.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let stop = turn.stop_reason.as_deref().unwrap_or(natural);
    event(
        &mut out,
        &json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": turn.output_tokens}}),
    );
    event(&mut out, &json!({"type": "message_stop"}));
    out
}

/// `turn` as a streamed reply.
pub fn reply(turn: &Turn) -> Reply {
    Reply::sse(&sse(turn)).with_header("request-id", "req_scripted")
}

/// A streamed text-only reply.
pub fn text_turn(text: &str) -> Reply {
    reply(&Turn::text(text))
}

/// A streamed reply of tool calls `(id, name, argument JSON)`.
pub fn tool_use_turn(calls: &[(&str, &str, &str)]) -> Reply {
    reply(&Turn::tool_calls(calls))
}

/// A non-streaming Messages API answer (`"stream": false`) whose text is `text`.
pub fn message(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "msg_01ScriptedSide", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 3}}),
    )
}

/// The answer to a Claude Code side request, or `None` for a conversation turn. Side
/// requests carry no tools (titles, topic and quota checks) or count tokens; they get a
/// short text so they do not consume scripted turns.
pub fn side_reply(request: &super::RecordedRequest) -> Option<Reply> {
    if request.path.contains("count_tokens") {
        return Some(Reply::json(200, &json!({"input_tokens": 1843})));
    }
    let has_tools = request.body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty());
    if has_tools || !request.path.starts_with("/v1/messages") {
        return None;
    }
    Some(if request.body["stream"] == json!(true) {
        text_turn("Scripted side answer.")
    } else {
        message("Scripted side answer.")
    })
}

/// An error reply in Anthropic's shape, e.g. `(401, "authentication_error", "invalid x-api-key")`.
pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"type": "error", "error": {"type": error_type, "message": message}}),
    )
}

/// `429 rate_limit_error` with `retry-after: {seconds}`.
pub fn rate_limited(retry_after_seconds: u64) -> Reply {
    error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
    )
    .with_header("retry-after", &retry_after_seconds.to_string())
}

/// `529 overloaded_error`.
pub fn overloaded() -> Reply {
    error(529, "overloaded_error", "Overloaded")
}

/// The directory Claude Code says the conversation of `request` works in ("Primary working
/// directory: …" in its system prompt or first message): for a subagent with `isolation:
/// "worktree"`, the worktree it made.
pub fn working_directory(request: &super::RecordedRequest) -> Option<std::path::PathBuf> {
    const MARK: &str = "Primary working directory: ";
    fn find(value: &Value) -> Option<String> {
        match value {
            Value::String(text) => {
                let at = text.find(MARK)? + MARK.len();
                let rest = &text[at..];
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                Some(rest[..end].to_owned())
            }
            Value::Array(items) => items.iter().find_map(find),
            Value::Object(map) => map.values().find_map(find),
            _ => None,
        }
    }
    find(&request.body["system"])
        .or_else(|| find(&request.body["messages"]))
        .map(std::path::PathBuf::from)
}
