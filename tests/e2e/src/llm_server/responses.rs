//! OpenAI Responses API wire format (`POST {base_url}/responses`, answered with SSE), the only
//! format Codex CLI speaks.
//!
//! A stream is `response.created`, then per output item `response.output_item.added`, its
//! deltas (`response.output_text.delta`, `response.function_call_arguments.delta`) and
//! `response.output_item.done`, then `response.completed` with the usage. Every event is an
//! `event: <type>` line and a `data:` line whose JSON repeats the type and carries a
//! `sequence_number`.
//!
//! Besides a [`Turn`]'s text and function calls, Codex's models make two other kinds of call,
//! written with [`Item`]: a **custom tool call** (`apply_patch`, whose input is the raw patch
//! text, not JSON) and a function call in a **namespace** (an MCP tool found through
//! `tool_search`, e.g. namespace `mcp__context_pilot`, name `Callback_upsert`).

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::turn::pieces;
use super::{Reply, Turn};

/// One output item of a scripted response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Assistant text.
    Message(String),
    /// A function call: `call_id`, `name`, the raw argument JSON text, and the namespace of an
    /// MCP tool (`None` for Codex's own tools such as `exec_command`).
    FunctionCall {
        call_id: String,
        name: String,
        arguments: String,
        namespace: Option<String>,
    },
    /// A freeform tool call (`apply_patch`): `call_id`, `name` and the raw input text.
    CustomCall {
        call_id: String,
        name: String,
        input: String,
    },
}

impl Item {
    /// A call of Codex's shell tool running `cmd`.
    pub fn shell(call_id: &str, cmd: &str) -> Self {
        Self::FunctionCall {
            call_id: call_id.to_owned(),
            name: "exec_command".to_owned(),
            arguments: json!({ "cmd": cmd }).to_string(),
            namespace: None,
        }
    }

    /// An `apply_patch` call with the patch text `patch` (`*** Begin Patch` … `*** End Patch`).
    pub fn apply_patch(call_id: &str, patch: &str) -> Self {
        Self::CustomCall {
            call_id: call_id.to_owned(),
            name: "apply_patch".to_owned(),
            input: patch.to_owned(),
        }
    }

    /// A call of MCP tool `name` in `namespace` with argument JSON `arguments`.
    pub fn mcp_call(call_id: &str, namespace: &str, name: &str, arguments: &str) -> Self {
        Self::FunctionCall {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            namespace: Some(namespace.to_owned()),
        }
    }
}

/// Writes one event with its type and sequence number.
struct Events {
    out: String,
    sequence: u64,
}

impl Events {
    fn push(&mut self, kind: &str, mut data: Value) {
        if let Some(object) = data.as_object_mut() {
            object.insert("type".into(), json!(kind));
            object.insert("sequence_number".into(), json!(self.sequence));
        }
        self.sequence += 1;
        let _ = write!(self.out, "event: {kind}\ndata: {data}\n\n");
    }
}

/// The finished JSON of `item` at `index` of response `response_id`.
fn finished(item: &Item, response_id: &str, index: usize) -> Value {
    match item {
        Item::Message(text) => json!({
            "type": "message", "id": format!("msg_{response_id}_{index}"), "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Item::FunctionCall {
            call_id,
            name,
            arguments,
            namespace,
        } => {
            let mut call = json!({
                "type": "function_call", "id": format!("fc_{response_id}_{index}"),
                "status": "completed", "call_id": call_id, "name": name, "arguments": arguments,
            });
            if let (Some(namespace), Some(object)) = (namespace, call.as_object_mut()) {
                object.insert("namespace".into(), json!(namespace));
            }
            call
        }
        Item::CustomCall {
            call_id,
            name,
            input,
        } => json!({
            "type": "custom_tool_call", "id": format!("ctc_{response_id}_{index}"),
            "status": "completed", "call_id": call_id, "name": name, "input": input,
        }),
    }
}

/// The event stream of a response made of `items`, with `turn`'s usage figures.
pub fn sse_items(items: &[Item], usage: &Turn) -> String {
    let id = "resp_scripted";
    let mut events = Events {
        out: String::new(),
        sequence: 0,
    };
    let response = |status: &str, output: Value, usage: Value| {
        json!({
            "id": id, "object": "response", "created_at": 1_767_225_600, "status": status,
            "model": "gpt-5.5", "output": output, "usage": usage,
        })
    };
    events.push(
        "response.created",
        json!({ "response": response("in_progress", json!([]), Value::Null) }),
    );
    let mut output = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let done = finished(item, id, index);
        let mut added = done.clone();
        if let Some(object) = added.as_object_mut() {
            object.insert("status".into(), json!("in_progress"));
            for (key, empty) in [
                ("content", json!([])),
                ("arguments", json!("")),
                ("input", json!("")),
            ] {
                if object.contains_key(key) {
                    object.insert(key.into(), empty);
                }
            }
        }
        events.push(
            "response.output_item.added",
            json!({ "output_index": index, "item": added }),
        );
        let item_id = done["id"].clone();
        match item {
            Item::Message(text) => {
                for piece in pieces(text, 12) {
                    events.push(
                        "response.output_text.delta",
                        json!({ "item_id": item_id, "output_index": index, "content_index": 0,
                                "delta": piece }),
                    );
                }
                events.push(
                    "response.output_text.done",
                    json!({ "item_id": item_id, "output_index": index, "content_index": 0,
                            "text": text }),
                );
            }
            Item::FunctionCall { arguments, .. } => {
                for piece in pieces(arguments, 7) {
                    events.push(
                        "response.function_call_arguments.delta",
                        json!({ "item_id": item_id, "output_index": index, "delta": piece }),
                    );
                }
                events.push(
                    "response.function_call_arguments.done",
                    json!({ "item_id": item_id, "output_index": index, "arguments": arguments }),
                );
            }
            Item::CustomCall { .. } => {}
        }
        events.push(
            "response.output_item.done",
            json!({ "output_index": index, "item": done }),
        );
        output.push(done);
    }
    let input = usage.input_tokens + usage.cache_read_tokens;
    let usage = json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + usage.output_tokens,
    });
    events.push(
        "response.completed",
        json!({ "response": response("completed", Value::Array(output), usage) }),
    );
    events.out
}

/// The event stream of `turn`: its text as a message, then its tool calls as function calls.
pub fn sse(turn: &Turn) -> String {
    let mut items = Vec::new();
    if !turn.text.is_empty() {
        items.push(Item::Message(turn.text.clone()));
    }
    for (call_id, name, arguments) in &turn.tool_calls {
        items.push(Item::FunctionCall {
            call_id: call_id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            namespace: None,
        });
    }
    sse_items(&items, turn)
}

/// `turn` as a streamed reply.
pub fn reply(turn: &Turn) -> Reply {
    Reply::sse(&sse(turn))
}

/// A streamed text-only reply.
pub fn text_turn(text: &str) -> Reply {
    reply(&Turn::text(text))
}

/// A streamed reply of `items`, with the default usage figures.
pub fn items_turn(items: &[Item]) -> Reply {
    Reply::sse(&sse_items(items, &Turn::text("")))
}

/// An error reply in the Responses API's shape, e.g. `(401, "Incorrect API key provided")`.
pub fn error(status: u16, message: &str) -> Reply {
    let code = match status {
        401 => "invalid_api_key",
        429 => "rate_limit_exceeded",
        400..=499 => "invalid_request_error",
        _ => "server_error",
    };
    Reply::json(
        status,
        &json!({"error": {"message": message, "type": code, "param": null, "code": code}}),
    )
}

#[cfg(test)]
mod tests {

    use super::*;

    /// The `data:` JSON of every event, in order.
    fn events(sse: &str) -> Vec<Value> {
        sse.split("\n\n")
            .filter(|block| !block.is_empty())
            .map(|block| {
                let mut lines = block.lines();
                let kind = lines.next().unwrap().strip_prefix("event: ").unwrap();
                let data: Value =
                    serde_json::from_str(lines.next().unwrap().strip_prefix("data: ").unwrap())
                        .unwrap();
                assert_eq!(data["type"], kind, "the data repeats the event type");
                data
            })
            .collect()
    }

    #[test]
    fn a_turn_streams_its_text_and_calls_between_created_and_completed() {
        let turn = Turn::tool_calls(&[("call_1", "exec_command", r#"{"cmd":"ls"}"#)])
            .with_text("Looking.")
            .with_usage(900, 100, 12);
        let events = events(&sse(&turn));
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"response.created"));
        assert_eq!(kinds.last(), Some(&"response.completed"));
        let sequence: Vec<u64> = events
            .iter()
            .map(|e| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert!(sequence.windows(2).all(|w| w[1] == w[0] + 1));
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(text, "Looking.");
        let done = &events.last().unwrap()["response"];
        assert_eq!(done["output"][1]["type"], "function_call");
        assert_eq!(done["output"][1]["call_id"], "call_1");
        assert_eq!(done["output"][1]["arguments"], r#"{"cmd":"ls"}"#);
        assert_eq!(done["usage"]["input_tokens"], 1000);
        assert_eq!(done["usage"]["input_tokens_details"]["cached_tokens"], 100);
    }

    #[test]
    fn apply_patch_is_a_custom_call_and_mcp_tools_carry_their_namespace() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
        let items = [
            Item::apply_patch("call_p", patch),
            Item::mcp_call("call_m", "mcp__context_pilot", "Callback_list", "{}"),
        ];
        let events = events(&sse_items(&items, &Turn::text("")));
        let done: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "response.output_item.done")
            .map(|e| &e["item"])
            .collect();
        assert_eq!(done[0]["type"], "custom_tool_call");
        assert_eq!(done[0]["input"], patch);
        assert_eq!(done[1]["namespace"], "mcp__context_pilot");
        assert_eq!(done[1]["name"], "Callback_list");
        let added = events
            .iter()
            .find(|e| e["type"] == "response.output_item.added")
            .unwrap();
        assert_eq!(added["item"]["input"], "", "an item starts empty");
    }
}
