//! Provider tests over real HTTP against the scripted server from `cp-e2e`: streaming,
//! decoding, retries, errors and cancelling here; the requests on the wire, prompt caching and
//! the model list in their own files.

mod caching;
mod models;
mod wire;

use cp_e2e::{LlmServer, Reply, Turn, anthropic as wire_a, openai as wire_o};
use serde_json::json;

use super::test_support::{anthropic_config, openai_config};
use super::*;

/// Which wire format a test runs against.
#[derive(Clone, Copy, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
}

const BOTH: [Wire; 2] = [Wire::Anthropic, Wire::OpenAi];

impl Wire {
    fn provider(self, server: &LlmServer) -> Box<dyn Provider> {
        connect(match self {
            Self::Anthropic => anthropic_config(&server.url()),
            Self::OpenAi => openai_config(&server.openai_base_url()),
        })
    }

    fn sse(self, turn: &Turn) -> String {
        match self {
            Self::Anthropic => wire_a::sse(turn),
            Self::OpenAi => wire_o::sse(turn),
        }
    }

    fn decode(self, chunks: &[&[u8]]) -> Result<Response, LlmError> {
        match self {
            Self::Anthropic => anthropic::decode_chunks(chunks, &mut |_| {}),
            Self::OpenAi => openai::decode_chunks(chunks, &mut |_| {}),
        }
    }

    fn error(self, status: u16, message: &str) -> Reply {
        match self {
            Self::Anthropic => wire_a::error(status, "authentication_error", message),
            Self::OpenAi => wire_o::error(status, message),
        }
    }
}

fn read_file_tool() -> ToolDefinition {
    ToolDefinition {
        name: "File_read".into(),
        description: "Read a file. Example: {\"path\": \"src/main.rs\"}".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn simple_request(provider: &dyn Provider) -> Request {
    provider.config().request(
        "You are terse.",
        vec![Message::user_text("hi")],
        vec![read_file_tool()],
    )
}

fn run(
    provider: &dyn Provider,
    request: &Request,
) -> (Result<Response, LlmError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let result = provider.stream(request, &CancelToken::new(), &mut |event| {
        events.push(event);
    });
    (result, events)
}

/// A realistic turn: multi-byte text, then two tool calls with nested, escaped arguments.
fn rich_turn() -> Turn {
    Turn::tool_calls(&[
        (
            "call_01",
            "File_read",
            r#"{"path":"src/ünïcode 文件.rs","range":[1,20]}"#,
        ),
        (
            "call_02",
            "File_edit",
            r#"{"path":"a.rs","old_string":"x = \"1\"\n","new_string":"x = \"2\"\n"}"#,
        ),
    ])
    .with_text("Let me read both files — café ☕ then edit. 😀")
    .with_usage(1200, 300, 88)
}

fn assert_rich(response: &Response) {
    assert_eq!(
        response.text(),
        "Let me read both files — café ☕ then edit. 😀"
    );
    let calls: Vec<&ToolUse> = response.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_01", "File_read")
    );
    assert_eq!(
        calls[0].input,
        ToolInput::Valid(json!({"path": "src/ünïcode 文件.rs", "range": [1, 20]}))
    );
    assert_eq!(
        calls[1].input,
        ToolInput::Valid(
            json!({"path": "a.rs", "old_string": "x = \"1\"\n", "new_string": "x = \"2\"\n"})
        )
    );
    assert_eq!(response.finish_reason, FinishReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 1200,
            output_tokens: 88,
            cache_read_tokens: 300,
            cache_creation_tokens: 0
        }
    );
}

#[test]
fn streams_text_and_tool_calls_over_http() {
    for wire in BOTH {
        let server = LlmServer::start().unwrap();
        server.push(Reply::sse_split_every(&wire.sse(&rich_turn()), 5));
        let provider = wire.provider(&server);
        let (result, events) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        let response = result.unwrap_or_else(|err| panic!("{wire:?}: {err}"));
        assert_rich(&response);
        let streamed: String = events
            .iter()
            .filter_map(|e| {
                if let StreamEvent::TextDelta(t) = e {
                    Some(t.as_str())
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(streamed, response.text(), "{wire:?}");
        let started: Vec<&StreamEvent> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallStarted { .. }))
            .collect();
        assert_eq!(
            started,
            [
                &StreamEvent::ToolCallStarted {
                    id: "call_01".into(),
                    name: "File_read".into()
                },
                &StreamEvent::ToolCallStarted {
                    id: "call_02".into(),
                    name: "File_edit".into()
                },
            ],
            "{wire:?}"
        );
        let fragments: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { id, fragment } if id == "call_02" => {
                    Some(fragment.as_str())
                }
                _ => None,
            })
            .collect();
        assert!(
            fragments.contains(r#""old_string":"x = \"1\"\n""#),
            "{wire:?}: {fragments}"
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Usage(response.usage)),
            "{wire:?}"
        );
    }
}

#[test]
fn every_split_position_decodes_the_same() {
    for wire in BOTH {
        let stream = wire.sse(&rich_turn());
        let bytes = stream.as_bytes();
        assert_rich(&wire.decode(&[bytes]).unwrap());
        for at in 0..=bytes.len() {
            let response = wire.decode(&[&bytes[..at], &bytes[at..]]);
            match response {
                Ok(response) => assert_rich(&response),
                Err(err) => panic!("{wire:?} split at byte {at}: {err}"),
            }
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_rich(&wire.decode(&bytewise).unwrap());
        // Three pieces, with the second cut moving through a window of the stream.
        for a in (0..bytes.len()).step_by(97) {
            for b in a..(a + 40).min(bytes.len()) {
                assert_rich(
                    &wire
                        .decode(&[&bytes[..a], &bytes[a..b], &bytes[b..]])
                        .unwrap(),
                );
            }
        }
    }
}

#[test]
fn crlf_streams_split_between_cr_and_lf_decode() {
    for wire in BOTH {
        let stream = wire.sse(&rich_turn()).replace('\n', "\r\n");
        let server = LlmServer::start().unwrap();
        let cr_positions: Vec<usize> = stream
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\r')
            .map(|(i, _)| i + 1)
            .collect();
        server.push(Reply::sse_split_at(&stream, &cr_positions));
        let provider = wire.provider(&server);
        let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        assert_rich(&result.unwrap_or_else(|err| panic!("{wire:?}: {err}")));
    }
}

#[test]
fn stream_cut_midway_is_a_clear_error_and_not_retried() {
    for wire in BOTH {
        let server = LlmServer::start().unwrap();
        let stream = wire.sse(&rich_turn());
        server.push(Reply::sse_split_every(&stream, 64).cut_after(stream.len() / 2));
        server.push(Reply::sse(&stream));
        let provider = wire.provider(&server);
        let (result, events) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        let err = result.expect_err("a cut stream must fail");
        assert!(
            matches!(err, LlmError::StreamCut { .. }),
            "{wire:?}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("cut before the reply was complete"), "{text}");
        assert!(text.starts_with(&provider.config().label()), "{text}");
        assert!(err.is_transient());
        assert!(
            events
                .iter()
                .any(|e| matches!(e, StreamEvent::TextDelta(_))),
            "{wire:?}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{wire:?}: a half-shown reply must not be retried"
        );
    }
}

#[test]
fn stream_cut_at_an_event_boundary_is_detected() {
    // The server closes cleanly right after a complete event: only the missing final events
    // (message_stop / finish_reason) tell the reply is incomplete.
    for wire in BOTH {
        let stream = wire.sse(&Turn::text("All good here."));
        let cut = stream
            .match_indices("\n\n")
            .nth(2)
            .map(|(i, _)| i + 2)
            .unwrap();
        let server = LlmServer::start().unwrap();
        server.push(Reply::sse(&stream[..cut]));
        let provider = wire.provider(&server);
        let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        assert!(
            matches!(result, Err(LlmError::StreamCut { .. })),
            "{wire:?}: {result:?}"
        );
    }
}

#[test]
fn rate_limit_then_success_is_retried() {
    for wire in BOTH {
        let server = LlmServer::start().unwrap();
        let limited = match wire {
            Wire::Anthropic => wire_a::rate_limited(30),
            Wire::OpenAi => {
                wire_o::error(429, "Rate limit reached for gpt-4o").with_header("retry-after", "30")
            }
        };
        server.push(limited);
        server.push(match wire {
            Wire::Anthropic => wire_a::text_turn("Hello after waiting."),
            Wire::OpenAi => wire_o::text_turn("Hello after waiting."),
        });
        let provider = wire.provider(&server);
        let (result, events) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        let response = result.unwrap_or_else(|err| panic!("{wire:?}: {err}"));
        assert_eq!(response.text(), "Hello after waiting.");
        // retry-after: 30 is honoured but capped by the test policy's max_retry_after (5 ms).
        let StreamEvent::Retrying {
            attempt,
            delay,
            reason,
        } = &events[0]
        else {
            panic!("{wire:?}: first event should announce the retry: {events:?}");
        };
        assert_eq!(*attempt, 2);
        assert_eq!(delay.as_millis(), 5);
        assert!(reason.starts_with("HTTP 429: "), "{reason}");
        assert_eq!(server.requests().len(), 2);
    }
}

#[test]
fn overload_and_server_errors_exhaust_retries() {
    let server = LlmServer::start().unwrap();
    server.push(wire_a::overloaded());
    server.push(Reply::text(503, "upstream unavailable"));
    server.push(wire_a::overloaded());
    server.push(wire_a::text_turn("never reached"));
    let provider = Wire::Anthropic.provider(&server);
    let (result, events) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    let err = result.expect_err("three failures with max_attempts 3");
    assert!(
        matches!(
            &err,
            LlmError::Unavailable {
                attempts: 3,
                status: Some(529),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("HTTP 529: Overloaded"), "{err}");
    let retries: Vec<u32> = events
        .iter()
        .filter_map(|e| {
            if let StreamEvent::Retrying { attempt, .. } = e {
                Some(*attempt)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(retries, [2, 3]);
    assert_eq!(server.pending_replies(), 1);
}

#[test]
fn network_errors_are_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let provider = connect(openai_config(&format!("http://127.0.0.1:{port}/v1")));
    let (result, events) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    let err = result.expect_err("nothing listens on the port");
    assert!(
        matches!(
            &err,
            LlmError::Unavailable {
                attempts: 3,
                status: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with(&format!(
            "OpenAI-compatible endpoint http://127.0.0.1:{port}/v1"
        )),
        "{err}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
            .count(),
        2
    );
}

#[test]
fn unauthorized_is_a_clear_error_without_retry() {
    for (wire, message, hint) in [
        (Wire::Anthropic, "invalid x-api-key", "ANTHROPIC_API_KEY"),
        (
            Wire::OpenAi,
            "Incorrect API key provided: sk-abc***xyz.",
            "OPENAI_API_KEY",
        ),
    ] {
        let server = LlmServer::start().unwrap();
        server.push(wire.error(401, message));
        let provider = wire.provider(&server);
        let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        let err = result.expect_err("401 must fail");
        assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.starts_with(&provider.config().label()), "{text}");
        assert!(text.contains(message) && text.contains(hint), "{text}");
        assert!(
            !text.contains("test-key-123"),
            "the key must never appear: {text}"
        );
        assert_eq!(server.requests().len(), 1, "{wire:?}");
    }
}

#[test]
fn bad_request_carries_the_provider_message() {
    let server = LlmServer::start().unwrap();
    server.push(wire_a::error(
        400,
        "invalid_request_error",
        "messages.0.content: text content blocks must be non-empty",
    ));
    let provider = Wire::Anthropic.provider(&server);
    let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    let err = result.expect_err("400 must fail");
    assert!(
        matches!(err, LlmError::Rejected { status: 400, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Anthropic (".to_owned()
            + &server.url()
            + "): request rejected (HTTP 400): messages.0.content: text content blocks must be non-empty"
    );
}

#[test]
fn not_found_points_at_the_url_and_model() {
    let server = LlmServer::start().unwrap();
    server.push(Reply::json(
        404,
        &json!({"error": "model \"qwen9\" not found, try pulling it first"}),
    ));
    let provider = Wire::OpenAi.provider(&server);
    let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    let text = result.expect_err("404 must fail").to_string();
    assert!(
        text.contains("(HTTP 404): model \"qwen9\" not found"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "POST {}/chat/completions",
            server.openai_base_url()
        )),
        "{text}"
    );
}

#[test]
fn invalid_tool_arguments_are_flagged_not_fatal() {
    for wire in BOTH {
        let server = LlmServer::start().unwrap();
        let turn = Turn::tool_calls(&[
            ("call_bad", "File_read", r#"{"path": "src/main.rs", "#),
            ("call_ok", "File_read", r#"{"path": "b.rs"}"#),
        ]);
        server.push(Reply::sse_split_every(&wire.sse(&turn), 9));
        let provider = wire.provider(&server);
        let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
        let response = result.unwrap_or_else(|err| panic!("{wire:?}: {err}"));
        let calls: Vec<&ToolUse> = response.tool_calls().collect();
        let ToolInput::Invalid { raw, error } = &calls[0].input else {
            panic!(
                "{wire:?}: truncated arguments must be flagged: {:?}",
                calls[0]
            );
        };
        assert_eq!(raw, r#"{"path": "src/main.rs", "#);
        assert!(error.contains("EOF"), "{error}");
        assert_eq!(calls[1].input, ToolInput::Valid(json!({"path": "b.rs"})));
        assert_eq!(response.finish_reason, FinishReason::ToolUse);
    }
}

#[test]
fn cancel_during_a_stalled_stream_returns_promptly() {
    for wire in BOTH {
        let server = LlmServer::start().unwrap();
        let stream = wire.sse(&Turn::text("First words, then the server goes quiet."));
        // Deliver through the first text delta, then hold the connection open and silent.
        let first_delta = stream.find("First").unwrap();
        let end_of_event = first_delta + stream[first_delta..].find("\n\n").unwrap() + 2;
        server.push(Reply::sse(&stream[..end_of_event]).then_stall());
        let provider = wire.provider(&server);
        let cancel = CancelToken::new();
        let mut saw_text = false;
        let result = provider.stream(&simple_request(provider.as_ref()), &cancel, &mut |event| {
            if matches!(event, StreamEvent::TextDelta(_)) && !saw_text {
                saw_text = true;
                // Esc pressed a little later, while the provider waits on the silent stream.
                // Without cancel polling the idle timeout (20 s in tests) would end the wait
                // with StreamCut instead of Cancelled.
                let cancel = cancel.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(150));
                    cancel.cancel();
                });
            }
        });
        assert!(saw_text, "{wire:?}");
        assert!(
            matches!(result, Err(LlmError::Cancelled)),
            "{wire:?}: {result:?}"
        );
    }
}

#[test]
fn cancel_before_sending_sends_nothing() {
    let server = LlmServer::start().unwrap();
    let provider = Wire::Anthropic.provider(&server);
    let cancel = CancelToken::new();
    cancel.cancel();
    let result = provider.stream(&simple_request(provider.as_ref()), &cancel, &mut |_| {});
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn json_instead_of_a_stream_is_a_protocol_error() {
    let server = LlmServer::start().unwrap();
    server.push(Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "choices": []}),
    ));
    let provider = Wire::OpenAi.provider(&server);
    let (result, _) = run(provider.as_ref(), &simple_request(provider.as_ref()));
    let err = result.expect_err("non-stream reply");
    assert!(
        err.to_string().contains("expected an event stream"),
        "{err}"
    );
}
