//! OpenAI Chat Completions wire format.

use super::turn::pieces;
use super::{Reply, Turn};
use serde_json::{Value, json};
use std::fmt::Write as _;

fn chunk(out: &mut String, choices: &Value, usage: &Value) {
    let data = json!({
        "id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_767_225_600,
        "model": "gpt-4o", "system_fingerprint": "fp_scripted",
        "choices": choices, "usage": usage,
    });
    let _ = write!(out, "data: {data}\n\n");
}

fn delta(out: &mut String, delta: &Value) {
    chunk(
        out,
        &json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
        &Value::Null,
    );
}

/// The full chunk stream of `turn`, ending with a usage chunk and `[DONE]`.
pub fn sse(turn: &Turn) -> String {
    let mut out = String::new();
    delta(
        &mut out,
        &json!({"role": "assistant", "content": "", "refusal": null}),
    );
    for piece in pieces(&turn.text, 12) {
        delta(&mut out, &json!({"content": piece}));
    }
    for (index, (id, name, args)) in turn.tool_calls.iter().enumerate() {
        delta(
            &mut out,
            &json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        );
        for piece in pieces(args, 7) {
            delta(
                &mut out,
                &json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
            );
        }
    }
    let natural = if turn.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let finish = turn.stop_reason.as_deref().unwrap_or(natural);
    chunk(
        &mut out,
        &json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish}]),
        &Value::Null,
    );
    let prompt = turn.input_tokens + turn.cache_read_tokens;
    chunk(
        &mut out,
        &json!([]),
        &json!({
            "prompt_tokens": prompt, "completion_tokens": turn.output_tokens,
            "total_tokens": prompt + turn.output_tokens,
            "prompt_tokens_details": {"cached_tokens": turn.cache_read_tokens},
        }),
    );
    out.push_str("data: [DONE]\n\n");
    out
}

/// `turn` as a streamed reply.
pub fn reply(turn: &Turn) -> Reply {
    Reply::sse(&sse(turn))
}

/// A streamed text-only reply.
pub fn text_turn(text: &str) -> Reply {
    reply(&Turn::text(text))
}

/// A streamed reply of tool calls `(id, name, argument JSON)`.
pub fn tool_call_turn(calls: &[(&str, &str, &str)]) -> Reply {
    reply(&Turn::tool_calls(calls))
}

/// An error reply in OpenAI's shape, e.g. `(401, "Incorrect API key provided")`.
pub fn error(status: u16, message: &str) -> Reply {
    let kind = match status {
        429 => "rate_limit_exceeded",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
    )
}
