//! Prompt caching on the wire: the cache breakpoints Anthropic requests carry, and a request
//! prefix that stays the same across a session whose panels change.

use serde_json::json;

use super::*;

fn edit_tool() -> ToolDefinition {
    ToolDefinition {
        name: "File_edit".into(),
        description: "Edit a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// Runs a 6-request agent-like session against the scripted server: each request carries a
/// different panel context (a console tail that grows), each reply is a tool call whose result
/// goes back. Returns the bodies the server received.
fn session_bodies(wire: Wire) -> Vec<serde_json::Value> {
    let server = LlmServer::start().unwrap();
    let provider = wire.provider(&server);
    let mut history = vec![Message::user_text("Fix the failing test in src/lib.rs")];
    for step in 0..6 {
        let id = format!("call_{step}");
        let args = format!(r#"{{"path":"src/file_{step}.rs"}}"#);
        server.push(match wire {
            Wire::Anthropic => wire_a::tool_use_turn(&[(&id, "File_read", &args)]),
            Wire::OpenAi => wire_o::tool_call_turn(&[(&id, "File_read", &args)]),
        });
        let tail = "test ... FAILED\n".repeat(step + 1);
        let request = provider
            .config()
            .request(
                "You are a coding agent.",
                history.clone(),
                vec![read_file_tool(), edit_tool()],
            )
            .with_context(format!("<panels>\nconsole tail:\n{tail}</panels>"));
        let response = run(provider.as_ref(), &request).0.unwrap();
        let calls: Vec<ToolUse> = response.tool_calls().cloned().collect();
        history.push(response.into_message());
        history.push(Message {
            role: Role::User,
            content: calls
                .iter()
                .map(|call| ContentBlock::ToolResult {
                    tool_use_id: call.id.clone(),
                    text: format!("contents of file {step}"),
                    is_error: false,
                })
                .collect(),
        });
    }
    server.requests().into_iter().map(|r| r.body).collect()
}

fn count_breakpoints(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => {
            usize::from(map.contains_key("cache_control"))
                + map.values().map(count_breakpoints).sum::<usize>()
        }
        serde_json::Value::Array(items) => items.iter().map(count_breakpoints).sum(),
        _ => 0,
    }
}

#[test]
fn anthropic_request_carries_cache_breakpoints() {
    let bodies = session_bodies(Wire::Anthropic);
    let ephemeral = json!({"type": "ephemeral"});
    for body in &bodies {
        assert!(
            count_breakpoints(body) <= 4,
            "at most 4 breakpoints: {body}"
        );
        assert_eq!(body["tools"][1]["cache_control"], ephemeral, "last tool");
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["system"][0]["cache_control"], ephemeral, "system");
        assert_eq!(body["system"][0]["text"], json!("You are a coding agent."));
        let messages = body["messages"].as_array().unwrap();
        let latest = messages.last().unwrap()["content"].as_array().unwrap();
        // The latest message: its own blocks, the breakpoint, then the panel context.
        let context = latest.last().unwrap();
        assert!(
            context["text"]
                .as_str()
                .unwrap()
                .starts_with("<panels>\nconsole tail:"),
            "{context}"
        );
        assert!(
            context.get("cache_control").is_none(),
            "context is volatile"
        );
        assert_eq!(latest[latest.len() - 2]["cache_control"], ephemeral);
    }
    // From the second request on, the previous user message keeps its breakpoint too.
    let third = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(
        third[third.len() - 3]["content"][0]["cache_control"],
        ephemeral
    );
    assert_eq!(count_breakpoints(&bodies[2]), 4);
}

#[test]
fn anthropic_cached_prefix_is_stable_across_a_session_with_changing_panels() {
    use super::cache_model::{CacheModel, PromptView};
    let bodies = session_bodies(Wire::Anthropic);
    let views: Vec<PromptView> = bodies.iter().map(PromptView::of_anthropic_body).collect();
    for pair in views.windows(2) {
        let stable = pair[0].stable_prefix();
        assert!(!stable.contains("console tail"), "the context is after it");
        let next = pair[1].prefix_bytes(pair[1].blocks.len() - 1);
        assert!(
            next.starts_with(&stable),
            "request prefix changed:\n{stable}\n---\n{next}"
        );
    }
    let mut cache = CacheModel::default();
    let served: Vec<usize> = views.iter().map(|v| cache.serve(v)).collect();
    assert_eq!(served[0], 0);
    for (n, pair) in views.windows(2).enumerate() {
        assert_eq!(
            served[n + 1],
            pair[0].stable_prefix().len(),
            "request {} reads all of request {n}'s stable prefix",
            n + 1
        );
    }
}

#[test]
fn openai_prefix_is_stable_across_a_session_with_changing_panels() {
    let bodies = session_bodies(Wire::OpenAi);
    for pair in bodies.windows(2) {
        assert_eq!(pair[0]["tools"], pair[1]["tools"]);
        let (before, after) = (
            pair[0]["messages"].as_array().unwrap(),
            pair[1]["messages"].as_array().unwrap(),
        );
        assert_eq!(
            before[0],
            json!({"role": "system", "content": "You are a coding agent."})
        );
        // All but the message carrying the context recur verbatim; the context comes last.
        let stable = &before[..before.len() - 1];
        assert_eq!(&after[..stable.len()], stable);
        let last = before.last().unwrap();
        assert_eq!(last["role"], json!("user"));
        assert!(last["content"].as_str().unwrap().ends_with("</panels>"));
    }
    let first = bodies[0]["messages"].as_array().unwrap();
    assert_eq!(
        first[1]["content"].as_str().unwrap(),
        "Fix the failing test in src/lib.rs\n\n<panels>\nconsole tail:\ntest ... FAILED\n</panels>",
        "a trailing user text takes the context in the same message"
    );
}
