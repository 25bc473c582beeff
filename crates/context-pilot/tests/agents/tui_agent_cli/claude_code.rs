//! The TUI with `--agent claude`: two turns in one Claude Code session, Esc and quitting
//! mid-turn (no process left), a missing CLI, a full context handed off to a fresh session, a
//! workflow run, a background failure that wakes the idle session, and review comments from
//! the Changes panel that start the next turn.

use super::*;

#[test]
fn two_turns_run_in_one_claude_session_and_the_callback_result_shows() {
    let (_repo, root) = project(200_000);
    let server = server();
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    // Turn 1: Claude Code writes src/a.sh (the callback fires), then says so.
    server.push(anthropic::reply(&Turn::tool_calls(&[(
        "toolu_w1", "Write", &args,
    )])));
    server.push(anthropic::text_turn("Wrote src/a.sh."));
    // Turn 2: an answer in the same session.
    server.push(anthropic::text_turn("SECOND-ANSWER"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_tui(&root, home.path(), &server);

    tui.type_text("FIRST-TURN: write src/a.sh");
    tui.send(b"\r");
    let session = tui.wait_turn_end(&root, "Verified.", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.sh")).unwrap(),
        "echo hi\n"
    );
    let conversation = saved_conversation(&session);
    // The agent's tool call, with its result, in the Conversation panel.
    assert!(
        conversation.contains("\"name\":\"Write\""),
        "{conversation}"
    );
    // The callback fired on the agent's edit (once for its batch, at Claude Code's
    // PostToolBatch), and its result is in the Conversation panel.
    assert!(
        conversation.contains("PostToolBatch hook: Callback 'sh-check' passed"),
        "{conversation}"
    );
    // The stop gate's verdict reached the person too.
    assert!(
        conversation.contains("Stop hook: blocked: Stop gate: verify"),
        "{conversation}"
    );

    tui.type_text("SECOND-TURN: anything else?");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "SECOND-ANSWER", WAIT).unwrap();
    // The second turn resumed the first one's session: its request carries the first turn.
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let second = &requests[2].raw_body;
    assert!(second.contains("SECOND-TURN"), "{second}");
    assert!(
        second.contains("FIRST-TURN") && second.contains("toolu_w1"),
        "the second turn did not resume the session: {second}"
    );
    // Claude Code was offered Context Pilot's tools.
    assert!(
        requests[0]
            .raw_body
            .contains("mcp__context-pilot__File_edit"),
        "no Context Pilot MCP tools offered"
    );
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();

    // A new TUI restores the conversation and continues the same Claude Code session.
    server.push(anthropic::text_turn("THIRD-ANSWER"));
    let mut tui = start_tui(&root, home.path(), &server);
    tui.type_text("THIRD-TURN: still there?");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "THIRD-ANSWER", WAIT).unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let third = &requests[3].raw_body;
    assert!(
        third.contains("THIRD-TURN") && third.contains("SECOND-TURN"),
        "the new TUI did not resume the session: {third}"
    );
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}

/// Starts a Claude Code turn in the TUI whose model never answers, and waits until Claude
/// Code asked it: the turn runs until the person interrupts it.
fn start_a_turn_that_never_ends(root: &Path, home: &Path) -> (LlmServer, TuiSession) {
    let server = server();
    server.push(Reply::sse_chunks(Vec::new()).then_stall());
    let mut tui = start_tui(root, home, &server);
    tui.type_text("take your time");
    tui.send(b"\r");
    assert_eq!(
        server.wait_for_requests(1, WAIT).len(),
        1,
        "Claude Code never asked the model"
    );
    assert!(!claude_processes(root, tui.pid()).is_empty());
    (server, tui)
}

#[test]
fn esc_interrupts_a_claude_turn_and_leaves_no_claude_process() {
    let (_repo, root) = project(200_000);
    let home = tempfile::tempdir().unwrap();
    let (_server, mut tui) = start_a_turn_that_never_ends(&root, home.path());
    let pid = tui.pid();
    tui.send(b"\x1b");
    wait_saved_session(&root, "the turn was cancelled", WAIT, |s| {
        saved_conversation(s).contains("Turn cancelled.")
    })
    .unwrap();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}

#[test]
fn the_tui_with_an_agent_that_is_not_installed_is_a_clear_error() {
    let (_repo, root) = project(200_000);
    let out = crate::util::context_pilot(&root)
        .args(["--agent", "claude"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("Claude Code was not found"), "{stderr}");
    assert!(
        stderr.contains("npm install -g @anthropic-ai/claude-code"),
        "{stderr}"
    );
}

#[test]
fn a_full_context_restarts_the_turn_in_a_fresh_claude_session_with_the_handoff() {
    let (_repo, root) = project(20_000);
    let server = server();
    // Session 1 writes src/a.sh at 95 % of the window: it is stopped after the write.
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    server.push(anthropic::reply(
        &Turn::tool_calls(&[("toolu_stop1", "Write", &args)])
            .with_usage(1_900, 9_500, 20)
            .with_cache_creation(7_600),
    ));
    // The fresh session finishes.
    server.push(anthropic::text_turn("FRESH-DONE"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_tui(&root, home.path(), &server);
    tui.type_text("RESTART-TASK: write src/a.sh and src/b.sh");
    tui.send(b"\r");
    let session = tui.wait_turn_end(&root, "FRESH-DONE", WAIT).unwrap();
    assert!(root.join("src/a.sh").exists());
    // The handoff was taken, the work committed, and a fresh session got the handoff and
    // the person's message, without the old conversation.
    let log = git(&root, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase chat"),
        "{log}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let fresh = &requests[1].raw_body;
    assert!(
        fresh.contains("HANDOFF-REMAINING"),
        "handoff missing: {fresh}"
    );
    assert!(fresh.contains("RESTART-TASK"), "task missing: {fresh}");
    assert!(
        !fresh.contains("toolu_stop1"),
        "the fresh session carries the old conversation"
    );
    // The person saw the restart in the Conversation panel.
    let conversation = saved_conversation(&session);
    assert!(conversation.contains("↻"), "{conversation}");
    end_cleanly(tui, &root);
}

#[test]
fn a_workflow_run_with_claude_code_streams_into_the_tui_and_waits_at_its_checkpoint() {
    let (_repo, root) = project(200_000);
    add_workflow(
        &root,
        "name: wf\nphases:\n  - id: build\n    prompt: \"WF-TASK: write src/a.sh\"\n    \
         approval:\n      approval_required: true\n",
    );
    let server = server();
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    server.push(anthropic::reply(&Turn::tool_calls(&[(
        "toolu_w1", "Write", &args,
    )])));
    server.push(anthropic::text_turn("WF-WROTE src/a.sh."));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_workflow_tui(&root, home.path(), &server);

    // The phase ran in Claude Code; the person's checkpoint waits on screen (a modal that
    // stays until answered).
    tui.wait_for("Approval gate · phase build", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.sh")).unwrap(),
        "echo hi\n"
    );
    let requests = server.requests();
    assert!(
        requests[0].raw_body.contains("WF-TASK"),
        "{:?}",
        requests[0].raw_body
    );
    assert!(
        requests[0]
            .raw_body
            .contains("mcp__context-pilot__File_edit"),
        "no Context Pilot MCP tools offered"
    );
    tui.send(b"\r"); // Continue
    wait_run_status(&root, "completed");
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    // The run is saved as completed a moment before the TUI hears of its end; a quit before
    // that would be asked about and end with 1, so the test waits for the TUI's notice.
    tui.wait_for("Workflow finished.", WAIT).unwrap();
    assert_eq!(tui.quit(WAIT).unwrap(), 0, "the run's exit code");

    // What the Conversation panel showed, as saved when the TUI quit: the phase, Claude
    // Code's tool call and text, and the callback that fired on its edit.
    let session = cp_e2e::saved_session(&root).expect("a saved session");
    let conversation = saved_conversation(&session);
    assert_all_shown(
        &conversation,
        &[
            "workflow: ",
            "\"name\":\"Write\"",
            "WF-WROTE src/a.sh.",
            "PostToolBatch hook: Callback 'sh-check' passed",
            // The callback's report in full: its output ends it.
            "checked src/a.sh",
            "Workflow finished",
        ],
    );
    stop_console_server(&root);
}

/// The file whose existence lets the background callback's script finish.
const RELEASE: &str = ".context-pilot/run/release-slow-check";

#[test]
fn a_background_failure_after_the_turn_wakes_the_idle_claude_session() {
    let (_repo, root) = project(200_000);
    // A background callback on `*.bg` that fails once the test releases it.
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "slow-check", "pattern": ["*.bg"],
            "script_content": format!("n=0; while [ ! -e \"$CP_PROJECT_ROOT/{RELEASE}\" ] && [ $n -lt 2400 ]; do sleep 0.05; n=$((n+1)); done\necho \"slow output for $CP_CHANGED_FILES\"\nexit 3"),
            "blocking": false
        }),
    );
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "background callback"]);
    let server = server();
    let args = json!({"file_path": root.join("src/a.bg"), "content": "data\n"}).to_string();
    // Turn 1 writes src/a.bg (the callback starts in the background) and ends.
    server.push(anthropic::reply(&Turn::tool_calls(&[(
        "toolu_bg1",
        "Write",
        &args,
    )])));
    server.push(anthropic::text_turn("Wrote src/a.bg."));
    // The turn the failure wakes.
    server.push(anthropic::text_turn("WOKEN-BY-THE-FAILURE"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_tui(&root, home.path(), &server);
    tui.type_text("BG-TURN: write src/a.bg");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "Verified.", WAIT).unwrap();
    assert!(
        root.join(".context-pilot/state/main/hook-modules.json")
            .exists(),
        "the run in flight is carried for the agent's next hook"
    );

    // The run fails while the agent is idle: the TUI collects it, shows it, and wakes the
    // agent with it.
    std::fs::write(root.join(RELEASE), "").unwrap();
    let session = tui
        .wait_turn_end(&root, "WOKEN-BY-THE-FAILURE", WAIT)
        .unwrap();
    let conversation = saved_conversation(&session);
    assert!(
        conversation.contains("Callback 'slow-check' FAILED"),
        "{conversation}"
    );
    let woken = server
        .requests()
        .into_iter()
        .find(|r| {
            r.raw_body
                .contains("Background notifications since your last turn")
        })
        .expect("no request carried the background result");
    assert!(
        woken.raw_body.contains("slow-check") && woken.raw_body.contains("slow output for"),
        "{}",
        woken.raw_body
    );
    // Reported once: the agent's hooks do not report it again.
    assert!(
        !root
            .join(".context-pilot/state/main/hook-modules.json")
            .exists()
    );
    end_cleanly(tui, &root);
}

#[test]
fn quitting_the_tui_during_a_claude_turn_leaves_no_claude_process() {
    let (_repo, root) = project(200_000);
    let home = tempfile::tempdir().unwrap();
    // The turn is still running when the person quits.
    let (_server, mut tui) = start_a_turn_that_never_ends(&root, home.path());
    // Ctrl-C asks first while work runs; `quit` confirms.
    assert_eq!(tui.quit(WAIT).unwrap(), 0);
    assert_no_claude_left(&root, None);
    // The turn's session id was saved on the way out: a new TUI continues it.
    assert!(
        root.join(".context-pilot/state/main/agent-session.json")
            .exists()
    );
    stop_console_server(&root);
}

#[test]
fn quitting_a_workflow_run_in_the_tui_leaves_no_claude_process() {
    let (_repo, root) = project(200_000);
    add_workflow(
        &root,
        "name: wf\nphases:\n  - id: build\n    prompt: \"take your time\"\n",
    );
    let server = server();
    server.push(Reply::sse_chunks(Vec::new()).then_stall());
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_workflow_tui(&root, home.path(), &server);
    assert_eq!(
        server.wait_for_requests(1, WAIT).len(),
        1,
        "Claude Code never asked the model"
    );
    // The run did not finish: a non-zero exit, and nothing left behind.
    assert_ne!(tui.quit(WAIT).unwrap(), 0);
    assert_no_claude_left(&root, None);
    stop_console_server(&root);
}

/// The sidebar number of the Changes panel, read off the screen.
fn changes_digit(screen: &str) -> u8 {
    for line in screen.lines() {
        let chars: Vec<char> = line.chars().collect();
        for window in chars.windows(9) {
            let text: String = window[2..].iter().collect();
            if window[0].is_ascii_digit() && window[1] == ' ' && text == "Changes" {
                return u8::try_from(window[0]).unwrap();
            }
        }
    }
    panic!("no Changes row in the sidebar:\n{screen}");
}

#[test]
fn review_comments_from_the_changes_panel_start_the_next_claude_turn() {
    let (_repo, root) = project(200_000);
    let server = server();
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    server.push(anthropic::reply(&Turn::tool_calls(&[(
        "toolu_w1", "Write", &args,
    )])));
    server.push(anthropic::text_turn("Wrote src/a.sh."));
    server.push(anthropic::text_turn("REVIEW-ANSWER"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_tui(&root, home.path(), &server);
    tui.type_text("write src/a.sh");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "Verified.", WAIT).unwrap();

    // The Changes panel shows the new file; a comment on its line goes with S.
    let screen = tui.wait_for("Changes", WAIT).unwrap();
    let digit = changes_digit(&screen);
    tui.send(b"\t");
    tui.send(&[digit]);
    tui.send(b"\r"); // Enter gives the panel the keys
    tui.wait_for("+echo hi", WAIT).unwrap();
    tui.type_text("/echo hi");
    tui.send(b"\r");
    tui.type_text("c");
    tui.type_text("REVIEW-NOTE use printf");
    tui.send(b"\r");
    tui.type_text("S");
    // Claude Code's next turn carries the comment with its location: the request log says so.
    let request = cp_e2e::eventually_some("a request carrying the comment", WAIT, || {
        server
            .requests()
            .into_iter()
            .find(|r| r.raw_body.contains("REVIEW-NOTE use printf"))
    });
    assert!(
        request.raw_body.contains("src/a.sh:1"),
        "location missing: {}",
        request.raw_body
    );
    tui.wait_until("the turn ends", WAIT, |s| !s.contains("agent working"))
        .unwrap();
    end_cleanly(tui, &root);
}
