//! End to end: the real binary in a PTY, talking to the scripted LLM server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic, git_repo, openai};

const WAIT: Duration = Duration::from_secs(60);

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

/// The environment that points the binary at the scripted server in one provider's format.
fn provider_env(openai_format: bool, url: &str) -> Vec<(&str, &str)> {
    if openai_format {
        vec![
            ("OPENAI_BASE_URL", url),
            ("OPENAI_API_KEY", "k"),
            ("ANTHROPIC_API_KEY", ""),
        ]
    } else {
        vec![
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_API_KEY", ""),
        ]
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
    let env = provider_env(openai_format, &url);
    let mut tui = TuiSession::start(repo.path(), &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("please write the plan");
    tui.send(b"\r");
    // Durable facts only: the turn's last reply in the saved session, then the request log.
    tui.wait_turn_end(repo.path(), "Noted.", WAIT).unwrap();
    let requests = server.requests();
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
    // The panels' context travels at the end of the latest message, after the cached
    // prefix (issue 19), not in the system prompt.
    let latest = requests[0].body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        latest.contains("</panels>"),
        "panel context missing from the latest message: {latest}"
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

/// The issue-5 acceptance: the model creates a callback, toggles it off and on, and writes a
/// matching file; the Callbacks panel shows it active, and the callback's output is inside the
/// tool result the model receives.
fn callbacks_driven_by_the_model(openai_format: bool) {
    let server = LlmServer::start().unwrap();
    let create = r#"{"action": "create", "name": "todo-check", "description": "echo the changed files",
        "pattern": "*.txt", "script_content": "echo \"callback saw: $CP_CHANGED_FILES\"",
        "blocking": true, "timeout": 20}"#;
    let steps: [(&str, &str, &str); 4] = [
        ("c1", "Callback_upsert", create),
        ("c2", "Callback_toggle", r#"{"id": "CB1", "active": false}"#),
        ("c3", "Callback_toggle", r#"{"id": "CB1", "active": true}"#),
        (
            "c4",
            "File_write",
            r#"{"file_path": "notes/todo.txt", "content": "ship it\n"}"#,
        ),
    ];
    for (id, name, args) in steps {
        server.push(if openai_format {
            openai::tool_call_turn(&[(id, name, args)])
        } else {
            anthropic::tool_use_turn(&[(id, name, args)])
        });
    }
    // The end of the turn: the checkpoint says once what changed (the callback is Context
    // Pilot's own config and the note is docs: neither is code, nothing to commit), then the
    // agent may stop.
    for text in ["Callback in place.", "Stopping."] {
        server.push(if openai_format {
            openai::text_turn(text)
        } else {
            anthropic::text_turn(text)
        });
    }
    let repo = git_repo();
    let url = if openai_format {
        server.openai_base_url()
    } else {
        server.url()
    };
    let env = provider_env(openai_format, &url);
    let mut tui = TuiSession::start(repo.path(), &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("set up a callback for txt files, then write the todo");
    tui.send(b"\r");
    // The turn ends after the gate's last block; by then every request is in the server's log.
    // (Waiting for "Callback in place." on screen raced the product: the rest of the turn
    // scrolled it off the panel before the test looked.)
    tui.wait_turn_end(repo.path(), "Stopping.", WAIT).unwrap();
    let requests = server.requests();
    assert!(requests.len() >= 5, "{} requests", requests.len());

    // Toggle results went back to the model, and the write's result carries the callback run.
    let after_toggle_off = &requests[2].raw_body;
    assert!(after_toggle_off.contains("CB1"), "{after_toggle_off}");
    let after_write = &requests[4].raw_body;
    assert!(
        after_write.contains("callback saw: notes/todo.txt"),
        "callback output missing from the tool result: {after_write}"
    );
    assert!(after_write.contains("todo-check"), "{after_write}");

    // The Callbacks panel lists it, active for this worker.
    tui.send(b"\t");
    tui.send(b"2");
    let screen = tui.wait_for("┌ Callbacks ", WAIT).unwrap();
    let row = screen
        .lines()
        .find(|l| l.contains("CB1") && l.contains("todo-check"))
        .unwrap();
    assert!(
        row.contains("CB1")
            && row
                .trim_end()
                .trim_end_matches('│')
                .trim_end()
                .ends_with("yes"),
        "{row}"
    );
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn anthropic_model_drives_callbacks() {
    callbacks_driven_by_the_model(false);
}

#[test]
fn openai_model_drives_callbacks() {
    callbacks_driven_by_the_model(true);
}

fn anthropic_env(url: &str) -> Vec<(&str, &str)> {
    vec![
        ("ANTHROPIC_BASE_URL", url),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ]
}

/// A reply cut midway is a clear error; the conversation keeps what came before, and the next
/// message works with the history intact.
#[test]
fn a_stream_cut_midway_is_a_clear_error_and_loses_nothing() {
    let server = LlmServer::start().unwrap();
    server.push(anthropic::text_turn("First answer, complete."));
    let long = "This reply will be cut off somewhere in the middle of its text. ".repeat(4);
    server.push(anthropic::reply(&cp_e2e::Turn::text(&long)).cut_after(400));
    server.push(anthropic::text_turn("Third answer."));
    let repo = git_repo();
    let url = server.url();
    let mut tui = TuiSession::start(repo.path(), &[], &anthropic_env(&url)).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("one");
    tui.send(b"\r");
    tui.wait_turn_end(repo.path(), "First answer, complete.", WAIT)
        .unwrap();
    tui.type_text("two");
    tui.send(b"\r");
    let screen = tui.wait_for("cut", WAIT).unwrap();
    assert!(
        screen.to_lowercase().contains("stream"),
        "no clear error:\n{screen}"
    );
    tui.wait_until("idle", WAIT, |s| !s.contains("agent working"))
        .unwrap();
    tui.type_text("three");
    tui.send(b"\r");
    tui.wait_turn_end(repo.path(), "Third answer.", WAIT)
        .unwrap();
    let requests = server.requests();
    let third = &requests[2].raw_body;
    assert!(
        third.contains("First answer, complete."),
        "history lost: {third}"
    );
    assert!(
        !third.contains("cut off somewhere"),
        "a partial reply was kept: {third}"
    );
    assert!(
        third.contains("\"two\"") && third.contains("\"three\""),
        "{third}"
    );
}

/// Tool arguments that are not JSON get an error result back to the model, with no panic.
#[test]
fn invalid_tool_arguments_get_an_error_result() {
    let server = LlmServer::start().unwrap();
    server.push(anthropic::tool_use_turn(&[(
        "bad1",
        "File_write",
        r#"{"file_path": "a.txt", "content": "#,
    )]));
    server.push(anthropic::text_turn("I will fix my call."));
    let repo = git_repo();
    let url = server.url();
    let mut tui = TuiSession::start(repo.path(), &[], &anthropic_env(&url)).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("write a.txt");
    tui.send(b"\r");
    tui.wait_turn_end(repo.path(), "I will fix my call.", WAIT)
        .unwrap();
    let requests = server.requests();
    let second = &requests[1].raw_body;
    assert!(second.contains("not valid JSON"), "{second}");
    assert!(second.contains("\"is_error\":true"), "{second}");
    assert!(!repo.path().join("a.txt").exists());
    assert!(tui.pid().is_some());
}

/// A background callback that fails after the turn ended wakes the idle agent with the news.
#[test]
fn a_failed_background_callback_wakes_the_idle_agent() {
    let server = LlmServer::start().unwrap();
    let create = r#"{"action": "create", "name": "slow-lint", "pattern": "*.txt",
        "script_content": "sleep 6; echo lint-broke-here; exit 3", "blocking": false}"#;
    server.push(anthropic::tool_use_turn(&[(
        "c1",
        "Callback_upsert",
        create,
    )]));
    server.push(anthropic::tool_use_turn(&[(
        "c2",
        "File_write",
        r#"{"file_path": "notes/x.txt", "content": "x\n"}"#,
    )]));
    // The stop gate says once what changed (config and notes, no code), then the agent stops.
    for text in ["Done.", "Ok."] {
        server.push(anthropic::text_turn(text));
    }
    server.push(anthropic::text_turn("I see the lint failure."));
    let repo = git_repo();
    let url = server.url();
    let mut tui = TuiSession::start(repo.path(), &[], &anthropic_env(&url)).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("add a lint callback and write notes/x.txt");
    tui.send(b"\r");
    // The failure wakes the agent with a fifth request; that turn ends with its reply.
    tui.wait_turn_end(repo.path(), "I see the lint failure.", WAIT)
        .unwrap();
    let requests = server.requests();
    let delivered: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].raw_body.contains("Background notifications"))
        .collect();
    assert_eq!(
        requests.len(),
        5,
        "notifications were delivered in requests {delivered:?}"
    );
    let woke = &requests[4].raw_body;
    assert!(woke.contains("Background notifications"), "{woke}");
    assert!(woke.contains("slow-lint"), "{woke}");
    let write_result = &requests[2].raw_body;
    assert!(
        write_result.contains("started in background"),
        "{write_result}"
    );
}

/// An interactive turn whose context fills up past 80%: the batch finishes, the agent hands
/// off, the work is committed, and a fresh session continues with the handoff and the
/// person's request. The restart shows as a marker in the conversation.
#[test]
fn a_full_context_restarts_the_session_with_a_handoff() {
    let server = LlmServer::start().unwrap();
    let write = r#"{"file_path": "notes/step1.txt", "content": "done\n"}"#;
    server.push(anthropic::reply(
        &cp_e2e::Turn::tool_calls(&[("w1", "File_write", write)]).with_usage(170_000, 0, 40),
    ));
    let handoff = r#"{"reason": "threshold_critical", "remaining": [{"file": "notes/step2.txt", "description": "write step two"}], "files_modified": ["notes/step1.txt"]}"#;
    server.push(anthropic::tool_use_turn(&[(
        "h1",
        "Checkpoint_handoff",
        handoff,
    )]));
    server.push(anthropic::text_turn("Handoff saved."));
    server.push(anthropic::text_turn("Fresh session: step two is next."));
    let repo = git_repo();
    let url = server.url();
    let mut tui = TuiSession::start(repo.path(), &[], &anthropic_env(&url)).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("do steps one and two");
    tui.send(b"\r");
    // The fresh session's turn ends (its work was auto-committed, so the checkpoint lets it
    // stop); the saved conversation holds the restart markers, which scroll away on screen.
    let session = tui
        .wait_turn_end(repo.path(), "Fresh session: step two is next.", WAIT)
        .unwrap();
    let conversation = cp_e2e::saved_conversation(&session);
    assert!(
        conversation.contains('↻') && conversation.contains("restart"),
        "no restart marker: {conversation}"
    );
    let requests = server.requests();
    let fresh = &requests[3].raw_body;
    assert!(
        fresh.contains("write step two"),
        "handoff missing from the new session: {fresh}"
    );
    assert!(
        fresh.contains("do steps one and two"),
        "original request missing: {fresh}"
    );
    assert!(
        !fresh.contains("\"tool_use_id\":\"w1\""),
        "the old session leaked into the new one"
    );
    assert_eq!(
        requests.len(),
        4,
        "no request after the fresh session's reply"
    );
    let log = cp_e2e::git(repo.path(), &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase chat"),
        "{log}"
    );
}

/// A trusted repository with `src/app.sh` (`echo v1`) committed, whose stop gate runs
/// `command` (a configured test command runs only in a trusted project) and blocks at most
/// `max_blocks` times in a row.
fn app_with_tests(max_blocks: u32, command: &str) -> tempfile::TempDir {
    let repo = git_repo();
    let config = serde_json::json!({"checkpoint": {"max_blocks": max_blocks,
        "tests": {"command": command}}});
    std::fs::create_dir_all(repo.path().join(".context-pilot")).unwrap();
    std::fs::write(
        repo.path().join(".context-pilot/config.json"),
        config.to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(repo.path().join("src")).unwrap();
    std::fs::write(repo.path().join("src/app.sh"), "echo v1\n").unwrap();
    cp_e2e::git(repo.path(), &["add", "."]);
    cp_e2e::git(repo.path(), &["commit", "-qm", "init"]);
    cp_e2e::trust(repo.path());
    repo
}

/// The TUI on `repo` against `server`, asked to "change the app".
fn change_the_app(repo: &tempfile::TempDir, server: &LlmServer) -> TuiSession {
    let url = server.url();
    let mut tui = TuiSession::start(repo.path(), &[], &anthropic_env(&url)).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("change the app");
    tui.send(b"\r");
    tui
}

/// Issue 15: red tests are not forgotten. The model writes code, then keeps saying it is
/// done: every stop runs the (failing) tests again, and after `max_blocks` blocks the turn
/// ends with the Checkpoint panel marked failed (✗) and the failure saved for it.
#[test]
fn red_tests_run_again_on_every_stop_until_the_limit_marks_the_checkpoint_failed() {
    let server = LlmServer::start().unwrap();
    let write = r#"{"file_path": "src/app.sh", "content": "echo v2\n"}"#;
    server.push(anthropic::tool_use_turn(&[("w1", "File_write", write)]));
    for text in ["Done.", "All good, the tests are fine.", "Really done."] {
        server.push(anthropic::text_turn(text));
    }
    let suite = tempfile::tempdir().unwrap();
    let runs = suite.path().join("runs");
    let command = format!(
        "echo run >> '{}'; echo 'FAILED tests/test_app.py::test_v2 - assert 1 == 2'; echo '==== 1 failed, 2 passed in 0.05s ===='; exit 1",
        runs.display()
    );
    let repo = app_with_tests(2, &command);
    let tui = change_the_app(&repo, &server);
    let requests = server.wait_for_requests(4, WAIT);
    assert_eq!(requests.len(), 4);
    let state_path = repo
        .path()
        .join(".context-pilot/state/main/checkpoint.json");
    let state = || -> serde_json::Value {
        std::fs::read_to_string(&state_path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    };
    let notice = cp_e2e::eventually_some_with(
        "the stop gate to give up",
        WAIT,
        || {
            state()["last_report"]["gave_up"]
                .as_str()
                .map(str::to_owned)
        },
        || format!("the limit was not reached: {}", state()),
    );
    assert!(
        notice.contains("Uncommitted files (1): src/app.sh"),
        "{notice}"
    );
    assert!(notice.contains("Tests FAILED (exit code 1)"), "{notice}");
    // The second and third stops ran the red suite again: the agent's word is not enough.
    let count = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(count, 3, "the failed run must run again on each later stop");
    // The second request carries the failure; the third (after "Done.") again.
    assert!(requests[2].raw_body.contains("Tests FAILED"));
    assert!(requests[3].raw_body.contains("Tests FAILED"));
    // The panel's badge (in the sidebar, always on screen) shows the failure.
    tui.wait_until("the Checkpoint panel shows ✗", WAIT, |screen| {
        screen
            .lines()
            .any(|line| line.contains("Checkpoint") && line.contains('✗'))
    })
    .unwrap();
    // The status bar says so until the next turn.
    tui.wait_for("stop gate ✗ work left", WAIT).unwrap();
    // Nothing more was asked of the model.
    assert_eq!(server.requests().len(), 4);
}

/// Issue 36: the built-in agent's stop gate checks what the turn committed as well as what it
/// did not. The model changes the app and commits it with its shell, then says it is done:
/// the red tests hold it, and the message lists the commit, not a file to commit.
#[test]
fn red_work_the_builtin_agent_commits_is_held_with_the_failing_test() {
    let server = LlmServer::start().unwrap();
    let commit = serde_json::json!({"command":
        "printf 'echo v2\\n' > src/app.sh && git add -A && git commit -qm 'app v2'"})
    .to_string();
    server.push(anthropic::tool_use_turn(&[(
        "b1",
        "console_easy_bash",
        &commit,
    )]));
    for text in ["Done.", "Really done."] {
        server.push(anthropic::text_turn(text));
    }
    let repo = app_with_tests(
        1,
        "grep -q v1 src/app.sh || { echo 'FAILED tests/test_app.py::test_v1'; exit 1; }",
    );
    let tui = change_the_app(&repo, &server);
    let requests = server.wait_for_requests(3, WAIT);
    let log = cp_e2e::git(repo.path(), &["log", "--format=%s"]);
    assert!(log.contains("app v2"), "the agent committed: {log}");
    let held = &requests[2].raw_body;
    assert!(held.contains("Tests FAILED"), "{held}");
    assert!(held.contains("Committed in this session"), "{held}");
    assert!(held.contains("modified src/app.sh"), "{held}");
    assert!(!held.contains("Then commit your changes"), "{held}");
    tui.wait_for("stop gate ✗ work left", WAIT).unwrap();
    assert_eq!(server.requests().len(), 3);
}
