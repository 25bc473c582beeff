//! Claude Code's newer hook events, end to end with the real CLI wired by `context-pilot init
//! claude` (issue 36): callbacks once per batch (`PostToolBatch`), subagents in worktrees of
//! their own, the stop gate at a subagent's end (`SubagentStop`), and the handoff put back
//! after Claude Code compacts (`SessionStart` with source `compact`).

use std::fmt::Write as _;

use super::*;

/// `claude -p "Do the task."` in `root`, as [`claude`] runs it, with `env` added.
fn claude_code(root: &Path, home: &Path, server: &LlmServer, env: &[(&str, &str)]) -> Output {
    claude_with(root, home, server, "Do the task.", env)
}

/// Every request body, numbered, for failure messages.
fn all_requests(server: &LlmServer) -> String {
    let mut out = String::new();
    for (i, r) in server.requests().iter().enumerate() {
        writeln!(out, "--- request {i}\n{}", r.raw_body).unwrap();
    }
    out
}

/// The text of every tool result and text block of the request's last message.
fn last_message_text(request: &cp_e2e::RecordedRequest) -> String {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    messages
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn claude_code_runs_a_once_per_batch_callback_once_for_two_writes_and_the_model_sees_it() {
    let project = python_project("claude", "*.txt");
    let root = project.root.clone();
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    let a = json!({"file_path": root.join("a.txt"), "content": "a\n"}).to_string();
    let b = json!({"file_path": root.join("b.txt"), "content": "b\n"}).to_string();
    server.push(anthropic::tool_use_turn(&[
        ("toolu_01WriteA", "Write", &a),
        ("toolu_01WriteB", "Write", &b),
    ]));
    for said in ["Done.", "Noted; done.", "Done again."] {
        server.push(anthropic::text_turn(said));
    }

    let out = claude_code(&root, home.path(), &server, &[]);
    let all = all_requests(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    // One run, with both files.
    let expected = format!("check saw: a.txt b.txt in {}", root.display());
    assert_eq!(project.runs(), std::slice::from_ref(&expected), "{all}");
    // Its result reached the model's next request, once, after the batch's last result.
    let after = last_message_text(&server.requests()[1]);
    assert_eq!(after.matches(&expected).count(), 1, "{all}");
    assert!(
        after.contains("PostToolBatch hook additional context"),
        "{all}"
    );
}

/// A `Write` call creating the failing `test_sub.py` in `dir`.
fn write_failing_test(id: &str, dir: &Path) -> cp_e2e::Reply {
    let write = json!({"file_path": dir.join("test_sub.py"), "content": FAILING_TEST}).to_string();
    anthropic::tool_use_turn(&[(id, "Write", &write)])
}

/// The subagent's turn writing the failing test in the directory its request works in (the
/// worktree Claude Code made for it).
fn subagent_writes_failing_test(request: &cp_e2e::RecordedRequest) -> cp_e2e::Reply {
    let dir = anthropic::working_directory(request).unwrap_or_default();
    write_failing_test("toolu_02SubWrite", &dir)
}

#[test]
fn a_subagent_in_a_worktree_gets_its_callback_there_and_is_held_once_while_its_tests_are_red() {
    let project = python_project("claude", "*.py");
    let root = project.root.clone();
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    let agent = json!({"description": "Change calc", "prompt": "Change calc.py.",
        "subagent_type": "general-purpose", "isolation": "worktree",
        "run_in_background": false})
    .to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_01Agent",
        "Agent",
        &agent,
    )]));
    server.push_with(subagent_writes_failing_test);
    server.push(anthropic::text_turn("Subagent: test_sub.py is written."));
    server.push(anthropic::text_turn("Subagent: still done."));
    for said in ["Done.", "Done, really.", "Done again."] {
        server.push(anthropic::text_turn(said));
    }

    let out = claude_code(&root, home.path(), &server, &[]);
    let stdout = text(&out.stdout);
    let all = all_requests(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    let requests = server.requests();
    let worktree = anthropic::working_directory(&requests[1]).expect("the subagent's directory");
    assert!(
        worktree.starts_with(root.join(".claude/worktrees")) && worktree != root,
        "{}",
        worktree.display()
    );
    assert!(worktree.join("test_sub.py").exists(), "{all}");
    assert!(!root.join("test_sub.py").exists(), "{all}");

    // The callback ran in the worktree (its root is CP_PROJECT_ROOT), once, and the subagent
    // saw its output in its next request.
    let expected = format!("check saw: test_sub.py in {}", worktree.display());
    assert_eq!(project.runs(), std::slice::from_ref(&expected), "{all}");
    assert!(last_message_text(&requests[2]).contains(&expected), "{all}");

    // Its stop was held once, with the failing test, in its own conversation; its second
    // stop went through (max_blocks 1) and the main session got the hand-back.
    let held = last_message_text(&requests[3]);
    assert!(held.contains("Stop gate"), "{all}");
    assert!(held.contains("FAILED"), "the verdict: {all}");
    assert!(
        held.contains("AssertionError"),
        "the failing test's output: {all}"
    );
    let main_after = last_message_text(&requests[4]);
    assert!(main_after.contains("toolu_01Agent"), "{all}");
    assert!(!main_after.contains("Stop gate"), "{all}");
    let subagent_blocks = requests
        .iter()
        .filter(|r| {
            anthropic::working_directory(r).as_deref() == Some(worktree.as_path())
                && last_message_text(r).contains("Stop gate")
        })
        .count();
    assert_eq!(subagent_blocks, 1, "held once: {all}");
    // The main session changed nothing itself: its stop passes at once, its gate never taking
    // the subagent's worktree (a folder under `.claude/worktrees/`) for the project's files.
    assert!(
        !requests.iter().any(|r| {
            anthropic::working_directory(r).as_deref() == Some(root.as_path())
                && last_message_text(r).contains("Stop gate")
        }),
        "{all}"
    );
    assert_eq!(requests.len(), 5, "the main session was not held: {all}");
    // A folder the person never saw gets no trust notice: it is trusted as the repository.
    assert!(!stdout.contains("not trusted"), "{stdout}");
    assert!(!all.contains("not trusted"), "{all}");
}

#[test]
fn a_read_only_subagent_is_not_held_though_the_tests_are_red() {
    let project = python_project("claude", "*.md");
    let root = project.root.clone();
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    server.push(write_failing_test("toolu_01Write", &root));
    let agent = json!({"description": "Review calc", "prompt": "Read calc.py and report.",
        "subagent_type": "general-purpose", "run_in_background": false})
    .to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_02Agent",
        "Agent",
        &agent,
    )]));
    let read = json!({"file_path": root.join("calc.py")}).to_string();
    server.push(anthropic::tool_use_turn(&[("toolu_03Read", "Read", &read)]));
    server.push(anthropic::text_turn("Reviewer: calc.py adds."));
    for said in ["Done.", "Done, really.", "Done again."] {
        server.push(anthropic::text_turn(said));
    }

    let out = claude_code(&root, home.path(), &server, &[]);
    let all = all_requests(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    let requests = server.requests();
    // Request 4 is the main session's, with the reviewer's report: no stop gate in between.
    let main_after = last_message_text(&requests[4]);
    assert!(main_after.contains("toolu_02Agent"), "{all}");
    assert!(main_after.contains("Reviewer: calc.py adds."), "{all}");
    for request in &requests[..5] {
        assert!(!last_message_text(request).contains("Stop gate"), "{all}");
    }
    // The main session itself is held for its red tests.
    assert!(
        last_message_text(&requests[5]).contains("Stop gate"),
        "{all}"
    );
}

#[test]
fn after_claude_code_compacts_the_next_request_carries_the_latest_handoff_and_open_items() {
    let project = python_project("claude", "*.md");
    let root = project.root.clone();
    let home = tempfile::tempdir().unwrap();

    // A first session adds a failing test and stops: held once for it, then let go.
    let server = claude_server();
    server.push(write_failing_test("toolu_01Write", &root));
    for said in ["Done.", "Done, really."] {
        server.push(anthropic::text_turn(said));
    }
    let out = claude_code(&root, home.path(), &server, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    save_handoff(&root);

    // A second session: its first response fills the context past Claude Code's threshold
    // (the window made small for the test), so it compacts before the next request.
    let server = claude_server();
    let call = json!({"command": "echo looked", "description": "Look"}).to_string();
    server.push(anthropic::reply(
        &cp_e2e::Turn::tool_calls(&[("toolu_04Bash", "Bash", &call)]).with_usage(190_000, 0, 50),
    ));
    server.push(anthropic::text_turn(
        "<summary>SUMMARY-MARK: looked at the project.</summary>",
    ));
    for said in ["Done.", "Done, really.", "Done again."] {
        server.push(anthropic::text_turn(said));
    }
    let out = claude_code(
        &root,
        home.path(),
        &server,
        &[("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")],
    );
    let stdout = text(&out.stdout);
    let all = all_requests(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    assert!(
        stdout.contains("compact_boundary"),
        "Claude Code compacted: {stdout}"
    );
    let requests = server.requests();
    // The compaction agent (request 1) was not held by the stop gate: the request after it is
    // the session's own, and carries the summary, the handoff and the gate's open items.
    let after = requests
        .iter()
        .position(|r| r.raw_body.contains("SUMMARY-MARK"))
        .expect("a request after the compaction");
    assert_eq!(after, 2, "{all}");
    for request in &requests[..after] {
        assert!(!request.raw_body.contains("Stop gate"), "{all}");
    }
    let body = &requests[after].raw_body;
    assert!(body.contains("HANDOFF-MARK restore addition"), "{all}");
    assert!(body.contains("keep calc.py free of imports"), "{all}");
    assert!(
        body.contains("tests failing: `python3 -m unittest -q`"),
        "{all}"
    );
}
