//! The requests each provider sends: a tool round trip as Anthropic and OpenAI expect it, and
//! no `authorization` header for a local server without a key.

use serde_json::json;

use super::*;

fn tool_round_trip_request(provider: &dyn Provider) -> Request {
    let messages = vec![
        Message::user_text("Read a.rs"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Text {
                    text: "Reading it.".into(),
                },
                ContentBlock::ToolUse(ToolUse {
                    id: "call_9".into(),
                    name: "File_read".into(),
                    input: ToolInput::Valid(json!({"path": "a.rs"})),
                }),
            ],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_9".into(),
                text: "No such file: a.rs".into(),
                is_error: true,
            }],
        },
    ];
    provider
        .config()
        .request("Project root is /tmp/p.", messages, vec![read_file_tool()])
}

#[test]
fn anthropic_request_on_the_wire() {
    let server = LlmServer::start().unwrap();
    server.push(wire_a::text_turn("ok"));
    let provider = Wire::Anthropic.provider(&server);
    run(
        provider.as_ref(),
        &tool_round_trip_request(provider.as_ref()),
    )
    .0
    .unwrap();
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("x-api-key"), Some("test-key-123"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let body = &request.body;
    assert_eq!(body["model"], json!("claude-sonnet-4-5"));
    assert_eq!(body["max_tokens"], json!(1024));
    assert_eq!(body["stream"], json!(true));
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Project root is /tmp/p.",
            "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["tools"][0]["name"], json!("File_read"));
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
    assert_eq!(
        body["messages"][1]["content"][1],
        json!({"type": "tool_use", "id": "call_9", "name": "File_read", "input": {"path": "a.rs"}})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_9",
            "content": "No such file: a.rs", "is_error": true,
            "cache_control": {"type": "ephemeral"}}]})
    );
}

#[test]
fn openai_request_on_the_wire() {
    let server = LlmServer::start().unwrap();
    server.push(wire_o::text_turn("ok"));
    let provider = Wire::OpenAi.provider(&server);
    run(
        provider.as_ref(),
        &tool_round_trip_request(provider.as_ref()),
    )
    .0
    .unwrap();
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("authorization"), Some("Bearer test-key-123"));
    assert_eq!(request.header("x-api-key"), None);
    let body = &request.body;
    assert_eq!(body["model"], json!("gpt-4o"));
    assert_eq!(
        body["max_tokens"],
        json!(1024),
        "compatible servers get max_tokens"
    );
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Project root is /tmp/p."})
    );
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        json!("{\"path\":\"a.rs\"}")
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_9", "content": "Error: No such file: a.rs"})
    );
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
}

#[test]
fn local_server_without_key_sends_no_authorization() {
    let server = LlmServer::start().unwrap();
    server.push(wire_o::text_turn("local reply"));
    let config = ProviderConfig {
        api_key: None,
        ..openai_config(&server.openai_base_url())
    };
    let provider = connect(config);
    let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    assert_eq!(result.unwrap().text(), "local reply");
    assert_eq!(server.requests()[0].header("authorization"), None);
}
