//! The Anthropic request body: system prompt, tools and messages in the Messages API's shape,
//! with prompt-cache breakpoints on the stable prefix and the changing panel context after
//! the last one.

use serde_json::{Map, Value, json};

use crate::types::{ContentBlock, Request, Role};

/// The cache breakpoint marker.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body for `request`, with prompt-cache breakpoints (at most 4, the API's limit):
/// on the last tool definition, on the system prompt, on the last block of the latest message
/// and on the last block of the user message before it (where the previous request put its
/// breakpoint, so that entry is read even when more than 20 blocks were added since). The
/// volatile [`Request::context`] follows the last breakpoint, so the cached prefix (tools,
/// system, conversation) is byte-stable from request to request.
pub(crate) fn request_body(request: &Request) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": match message.role { Role::User => "user", Role::Assistant => "assistant" },
                "content": message.content.iter().filter_map(block_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    mark_message_breakpoints(&mut messages);
    append_context(&mut messages, &request.context);
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_output_tokens));
    body.insert("stream".into(), json!(true));
    if !request.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]),
        );
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// Puts a breakpoint on the last block of the latest message and of the latest user message
/// before it (two of the four allowed; tools and system take the other two).
fn mark_message_breakpoints(messages: &mut [Value]) {
    let with_content: Vec<usize> = (0..messages.len())
        .filter(|&i| {
            messages[i]["content"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        })
        .collect();
    let Some(&latest) = with_content.last() else {
        return;
    };
    let previous_user = with_content
        .iter()
        .rev()
        .skip(1)
        .find(|&&i| messages[i]["role"] == "user")
        .copied();
    for index in std::iter::once(latest).chain(previous_user) {
        if let Some(block) = messages[index]["content"]
            .as_array_mut()
            .and_then(|c| c.last_mut())
        {
            block["cache_control"] = ephemeral();
        }
    }
}

/// Appends the volatile context as a last text block of the latest user message (a new user
/// message when the conversation ends with the assistant), after the breakpoint.
fn append_context(messages: &mut Vec<Value>, context: &str) {
    if context.is_empty() {
        return;
    }
    let block = json!({"type": "text", "text": context});
    match messages.last_mut() {
        Some(last) if last["role"] == "user" => {
            if let Some(content) = last["content"].as_array_mut() {
                content.push(block);
            }
        }
        _ => messages.push(json!({"role": "user", "content": [block]})),
    }
}

/// One content block on the wire. Empty text blocks are dropped: the API rejects them.
fn block_json(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::ToolUse(call) => json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.input.to_wire_value(),
        }),
        ContentBlock::ToolResult {
            tool_use_id,
            text,
            is_error,
        } => {
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": text,
            });
            if *is_error {
                result["is_error"] = json!(true);
            }
            result
        }
    })
}
