//! Anthropic Messages API wire format.

use super::turn::pieces;
use super::{Reply, Turn};
use serde_json::{Value, json};
use std::fmt::Write as _;

fn event(out: &mut String, data: &Value) {
    let name = data["type"].as_str().unwrap_or("message");
    let _ = write!(out, "event: {name}\ndata: {data}\n\n");
}

/// The full event stream of `turn`.
pub fn sse(turn: &Turn) -> String {
    let mut out = String::new();
    event(
        &mut out,
        &json!({"type": "message_start", "message": {
            "id": "msg_01ScriptedReply", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": turn.input_tokens, "cache_creation_input_tokens": 0,
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
