//! Codex CLI's newer hook events, end to end with the real CLI wired by `context-pilot init
//! codex` (issue 36): the stop gate at a subagent's end (`SubagentStop`, with the
//! `multi_agent_v2` feature that gives the model `spawn_agent`), and the handoff put back after
//! Codex compacts (`SessionStart` with source `compact`). Codex CLI has no batch event and no
//! worktrees of its own: its subagents work in the session's tree.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::*;

/// Whether a Responses request is a subagent's: its conversation opens with the task the
/// parent sent (`Message Type: NEW_TASK`).
fn is_subagent(request: &cp_e2e::RecordedRequest) -> bool {
    request.raw_body.contains("Message Type: NEW_TASK")
}

/// The scripted answers of the parent and of its subagent, each taken in its own order
/// whatever order their requests arrive in (Codex runs a subagent beside its parent).
#[derive(Default)]
struct Conversations {
    parent: VecDeque<cp_e2e::Reply>,
    subagent: VecDeque<cp_e2e::Reply>,
}

/// Queues on `server` one router per expected request, each answering from `conversations`.
fn route(server: &LlmServer, conversations: &Arc<Mutex<Conversations>>, requests: usize) {
    for _ in 0..requests {
        let conversations = Arc::clone(conversations);
        server.push_with(move |request| {
            let mut queues = conversations.lock().unwrap();
            let queue = if is_subagent(request) {
                &mut queues.subagent
            } else {
                &mut queues.parent
            };
            queue
                .pop_front()
                .unwrap_or_else(|| responses::text_turn("Nothing more scripted."))
        });
    }
}

#[test]
fn a_codex_subagent_that_wrote_a_failing_test_is_held_once_with_the_verdict() {
    let project = python_project("codex", "*.md");
    let root = project.root.clone();
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    let spawn = json!({"task_name": "tester", "message": "Add a test of add.",
        "fork_turns": "none"})
    .to_string();
    let wait = json!({"timeout_ms": 60_000}).to_string();
    let added: String = FAILING_TEST.lines().flat_map(|l| ["+", l, "\n"]).collect();
    let patch = format!("*** Begin Patch\n*** Add File: test_sub.py\n{added}*** End Patch\n");
    let conversations = Arc::new(Mutex::new(Conversations {
        parent: [
            responses::items_turn(&[responses::Item::mcp_call(
                "call_spawn",
                "collaboration",
                "spawn_agent",
                &spawn,
            )]),
            responses::items_turn(&[responses::Item::mcp_call(
                "call_wait",
                "collaboration",
                "wait_agent",
                &wait,
            )]),
            responses::text_turn("Done."),
            responses::text_turn("Done, really."),
            responses::text_turn("Done again."),
        ]
        .into(),
        subagent: [
            responses::items_turn(&[responses::Item::apply_patch("call_sub_patch", &patch)]),
            responses::text_turn("Subagent: test_sub.py is written."),
            responses::text_turn("Subagent: still done."),
        ]
        .into(),
    }));
    route(&server, &conversations, 12);

    let out = codex_with(
        &root,
        home.path(),
        &["-c", "features.multi_agent_v2=true"],
        "Do the task.",
    );
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    assert!(root.join("test_sub.py").exists(), "{all}");
    let requests = server.requests();
    let subagent: Vec<_> = requests.iter().filter(|r| is_subagent(r)).collect();
    // Its stop was held once, in its own conversation, with the failing test; its second
    // stop went through (max_blocks 1).
    let held: Vec<_> = subagent
        .iter()
        .filter(|r| r.raw_body.contains("Stop gate"))
        .collect();
    assert_eq!(held.len(), 1, "held once: {all}");
    assert!(
        held[0].raw_body.contains("AssertionError"),
        "the verdict: {all}"
    );
    assert_eq!(subagent.len(), 3, "{all}");
    let finals = conversations.lock().unwrap().subagent.len();
    assert_eq!(finals, 0, "{all}");
}

#[test]
fn after_codex_compacts_the_next_request_carries_the_latest_handoff() {
    let repo = project("codex");
    let root = canonical(repo.path());
    save_handoff(&root);
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    // The first response fills the context past Codex's own compaction (about 90 % of the
    // 258,400 tokens it gives `gpt-5.5`), so it compacts before its next request.
    let full = cp_e2e::Turn::text("").with_usage(250_000, 0, 50);
    server.push(cp_e2e::Reply::sse(&responses::sse_items(
        &[responses::Item::shell("call_look", "echo looked")],
        &full,
    )));
    server.push(responses::text_turn("SUMMARY-MARK: looked at the project."));
    for said in ["Done.", "Done, really.", "Done again."] {
        server.push(responses::text_turn(said));
    }

    let out = codex(&root, home.path(), "Do the task.");
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    let requests = server.requests();
    let after = requests
        .iter()
        .position(|r| r.raw_body.contains("SUMMARY-MARK"))
        .expect("a request after the compaction");
    let body = &requests[after].raw_body;
    assert!(body.contains("HANDOFF-MARK restore addition"), "{all}");
    assert!(body.contains("keep calc.py free of imports"), "{all}");
    // Before the compaction the handoff was not given (it comes back because of it).
    for request in &requests[..after] {
        assert!(!request.raw_body.contains("HANDOFF-MARK"), "{all}");
    }
}
