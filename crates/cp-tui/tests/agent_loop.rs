//! End to end: the real binary in a PTY, talking to the scripted LLM server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic, git_repo, openai};

const WAIT: Duration = Duration::from_secs(20);

/// The model writes a file, then ends its turn; the checkpoint (docs only: capture-only) blocks
/// once, and the model's second stop passes.
fn script_write_then_stop(server: &LlmServer, turn_text: &str, openai_format: bool) {
    let args = r#"{"file_path": "notes/plan.txt", "content": "step one\n"}"#;
    if openai_format {
        server.push(openai::tool_call_turn(&[("call_1", "File_write", args)]));
        server.push(openai::text_turn(turn_text));
        server.push(openai::text_turn("Noted."));
    } else {
        server.push(anthropic::tool_use_turn(&[("toolu_1", "File_write", args)]));
        server.push(anthropic::text_turn(turn_text));
        server.push(anthropic::text_turn("Noted."));
    }
}

fn run(openai_format: bool) {
    let server = LlmServer::start().unwrap();
    script_write_then_stop(&server, "I wrote the plan.", openai_format);
    let repo = git_repo();
    let url = if openai_format {
        server.openai_base_url()
    } else {
        server.url()
    };
    let env: Vec<(&str, &str)> = if openai_format {
        vec![
            ("OPENAI_BASE_URL", url.as_str()),
            ("OPENAI_API_KEY", "test-key"),
            ("ANTHROPIC_API_KEY", ""),
        ]
    } else {
        vec![
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "test-key"),
            ("OPENAI_API_KEY", ""),
        ]
    };
    let mut tui = TuiSession::start(repo.path(), &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("please write the plan");
    tui.send(b"\r");
    tui.wait_for("I wrote the plan.", WAIT).unwrap();
    tui.wait_for("Noted.", WAIT).unwrap();
    tui.wait_until("the turn ends", WAIT, |s| {
        !s.contains("agent working") && !s.contains("checkpoint…")
    })
    .unwrap();
    let requests = server.wait_for_requests(3, WAIT);
    assert_eq!(requests.len(), 3, "exactly three model requests");
    let second = &requests[1].raw_body;
    assert!(
        second.contains("Created notes/plan.txt"),
        "tool result missing: {second}"
    );
    let third = &requests[2].raw_body;
    assert!(
        third.contains("system-reminder"),
        "checkpoint message missing: {third}"
    );
    assert!(
        third.contains("notes/plan.txt"),
        "changed file missing from checkpoint: {third}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("notes/plan.txt")).unwrap(),
        "step one\n"
    );
    // The system prompt carries the panels' context.
    assert!(
        requests[0].raw_body.contains("Checkpoint"),
        "panel context missing from system prompt"
    );

    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn anthropic_agent_writes_a_file_and_the_checkpoint_runs() {
    run(false);
}

#[test]
fn openai_compatible_agent_writes_a_file_and_the_checkpoint_runs() {
    run(true);
}
