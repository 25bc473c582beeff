//! End to end: the TUI with `--agent claude` and `--agent gemini` (issue 18), for the person's
//! turns and for a workflow (`context-pilot run WF --agent claude`). The REAL Claude Code and
//! Gemini CLI (installed by `scripts/install-agents.sh` under `target/agents/`) run the turns
//! against the scripted LLM server; the TUI runs in a PTY.
//!
//! Only durable facts are waited on: the session the TUI saves when a turn ends, the server's
//! request log, `/proc`. The stop gate's block is answered by content (the request
//! whose last message carries it), since how often it blocks is the checkpoint's business.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::agents::{agent_processes, agents_path, assert_no_agent_left};
use crate::util::{assert_all_shown, canonical, create_callback, stop_console_server, trust};
use cp_e2e::{
    LlmServer, RecordedRequest, Reply, TuiSession, Turn, anthropic, gemini, git, git_repo,
    saved_conversation, wait_saved_session,
};
use serde_json::json;

/// Generous: every turn starts node, loads Claude Code and runs hooks that run git.
const WAIT: Duration = Duration::from_secs(180);

/// A committed, trusted project whose checkpoint blocks at most once and runs no tests, with
/// a blocking callback on `*.sh` that prints the files it checked; the model's window is
/// `window` tokens.
fn project(window: u64) -> (tempfile::TempDir, PathBuf) {
    project_with_agent(&json!({
        "context_window": window, "model": "claude-sonnet-4-5", "stop_grace_secs": 20
    }))
}

/// [`project`] with `agent` as the config's agent section.
fn project_with_agent(agent: &serde_json::Value) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({
            "checkpoint": {"max_blocks": 1, "tests": {"command": ""}},
            "agent": agent,
        })
        .to_string(),
    )
    .unwrap();
    trust(&root);
    create_callback(
        &root,
        &json!({
            "action": "create", "name": "sh-check", "pattern": ["*.sh"],
            "script_content": "echo \"checked $CP_CHANGED_FILES\"",
            "blocking": true, "timeout": 60
        }),
    );
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// The text of the handoff request (`cp_orchestrate::HANDOFF_REQUEST`).
const HANDOFF_MARK: &str = "Submit your handoff now via Checkpoint_handoff";
const HANDOFF_ARGS: &str = r#"{"reason": "threshold_critical",
    "completed": [{"file": "src/a.sh", "status": "done"}],
    "remaining": [{"file": "src/b.sh", "description": "HANDOFF-REMAINING write src/b.sh"}],
    "files_modified": ["src/a.sh"]}"#;

/// The last message of a request, as JSON text.
fn last_message(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// A scripted server: side requests answered, the stop gate's block answered with
/// "Verified." whenever it comes; the handoff turn calls `Checkpoint_handoff`; the request
/// after a tool call `toolu_stop…` (the agent is being stopped there) stalls.
fn server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        if let Some(reply) = anthropic::side_reply(request) {
            return Some(reply);
        }
        let last = last_message(request);
        if request.raw_body.contains(HANDOFF_MARK) {
            return Some(if last.contains("toolu_handoff") {
                anthropic::text_turn("Handoff submitted.")
            } else {
                anthropic::tool_use_turn(&[(
                    "toolu_handoff1",
                    "mcp__context-pilot__Checkpoint_handoff",
                    HANDOFF_ARGS,
                )])
            });
        }
        if last.contains("toolu_stop") && last.contains("tool_result") {
            return Some(Reply::sse_chunks(Vec::new()).then_stall());
        }
        last_message(request)
            .contains("Stop gate:")
            .then(|| anthropic::text_turn("Verified."))
    });
    server
}

/// `context-pilot --agent claude` in a PTY, with Claude Code on `PATH` and the scripted
/// server as its Anthropic endpoint.
fn start_tui(root: &Path, home: &Path, server: &LlmServer) -> TuiSession {
    start_tui_with(root, home, server, &["--agent", "claude"])
}

/// `context-pilot ARGS` in a PTY, as [`start_tui`].
fn start_tui_with(root: &Path, home: &Path, server: &LlmServer, args: &[&str]) -> TuiSession {
    let path = agents_path();
    let url = server.url();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-scripted"),
        ("OPENAI_API_KEY", ""),
        ("CP_WORKER", "main"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ];
    let tui = TuiSession::start(root, args, &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

/// Checks that no Claude Code process is left, quits the TUI and stops the console server.
fn end_cleanly(mut tui: TuiSession, root: &Path) {
    let pid = tui.pid();
    assert_no_claude_left(root, pid);
    tui.quit(WAIT).unwrap();
    stop_console_server(root);
}

/// Commits `yaml` as the project's `.context-pilot/workflows/wf.yaml`.
fn add_workflow(root: &Path, yaml: &str) {
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(root.join(".context-pilot/workflows/wf.yaml"), yaml).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "workflow"]);
}

/// `context-pilot run .context-pilot/workflows/wf.yaml --agent claude` in a PTY.
fn start_workflow_tui(root: &Path, home: &Path, server: &LlmServer) -> TuiSession {
    start_tui_with(
        root,
        home,
        server,
        &[
            "run",
            ".context-pilot/workflows/wf.yaml",
            "--agent",
            "claude",
        ],
    )
}

/// Waits until the workflow run recorded under `root` has `status`.
fn wait_run_status(root: &Path, status: &str) {
    let statuses = || -> Vec<String> {
        std::fs::read_dir(root.join(".context-pilot/runs"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|run| std::fs::read_to_string(run.path().join("context.json")).ok())
            .filter_map(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .map(|run| run["status"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    cp_e2e::eventually_with(
        &format!("a run {status:?}"),
        WAIT,
        || statuses().iter().any(|s| s == status),
        || format!("the runs: {:?}", statuses()),
    );
}

/// Processes other than `except` running in `root` whose command line names `claude`.
fn claude_processes(root: &Path, except: Option<u32>) -> Vec<String> {
    agent_processes(root, "claude", except)
}

fn assert_no_claude_left(root: &Path, tui: Option<u32>) {
    assert_no_agent_left(root, "claude", tui, WAIT);
}

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

// ---------------------------------------------------------------------------------------
// Gemini CLI

/// The text of a Gemini request's last content.
fn gemini_last_content(request: &RecordedRequest) -> String {
    request.body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The TUI with `--agent gemini` against `server`, the person's home being `home`.
fn start_gemini_tui(root: &Path, home: &Path, server: &LlmServer) -> TuiSession {
    let path = agents_path();
    let url = server.url();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("GEMINI_API_KEY", "scripted"),
        ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
        // The run's private Gemini CLI home goes below the test's HOME.
        ("XDG_RUNTIME_DIR", ""),
        ("XDG_CACHE_HOME", ""),
        ("GEMINI_CLI_HOME", ""),
        ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_API_KEY", ""),
        ("CP_WORKER", "main"),
    ];
    let tui = TuiSession::start(root, &["--agent", "gemini"], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

#[test]
fn a_gemini_turn_without_its_hooks_stops_and_the_conversation_says_why() {
    let (_repo, root) = project_with_agent(&json!({"stop_grace_secs": 20}));
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(gemini::side_reply);
    server.push(gemini::text_turn("UNWIRED-ANSWER"));
    let home = tempfile::tempdir().unwrap();
    // The person's own settings turn Gemini CLI's hooks off.
    let settings = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"hooksConfig": {"enabled": false}}).to_string(),
    )
    .unwrap();
    let mut tui = start_gemini_tui(&root, home.path(), &server);
    tui.type_text("Do something.");
    tui.send(b"\r");
    let session = wait_saved_session(&root, "the turn failed", WAIT, |s| {
        saved_conversation(s).contains("started without")
    })
    .unwrap();
    let conversation = saved_conversation(&session);
    assert!(
        conversation.contains("Gemini CLI started without Context Pilot's hooks (no hook ran"),
        "{conversation}"
    );
    assert!(!conversation.contains("UNWIRED-ANSWER"), "{conversation}");
    let pid = tui.pid();
    tui.quit(WAIT).unwrap();
    assert!(
        agent_processes(&root, "gemini", pid).is_empty(),
        "gemini processes left behind"
    );
    stop_console_server(&root);
}

#[test]
fn two_gemini_turns_show_the_callback_and_the_checkpoint_in_the_conversation() {
    let (_repo, root) = project_with_agent(&json!({"stop_grace_secs": 20}));
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        gemini::side_reply(request).or_else(|| {
            gemini_last_content(request)
                .contains("Stop gate:")
                .then(|| gemini::text_turn("Verified."))
        })
    });
    let args = json!({"file_path": root.join("src/a.sh"), "content": "echo hi\n"}).to_string();
    // Turn 1: Gemini CLI writes src/a.sh (the callback fires), then says so; the stop
    // checkpoint sends it back once.
    server.push(gemini::tool_call_turn(&[("write_file", &args)]));
    server.push(gemini::text_turn("GEMINI-WROTE src/a.sh."));
    // Turn 2: an answer in the same session.
    server.push(gemini::text_turn("GEMINI-SECOND"));
    let home = tempfile::tempdir().unwrap();
    let mut tui = start_gemini_tui(&root, home.path(), &server);

    tui.type_text("GEMINI-FIRST: write src/a.sh");
    tui.send(b"\r");
    let session = tui.wait_turn_end(&root, "Verified.", WAIT).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("src/a.sh")).unwrap(),
        "echo hi\n"
    );
    let conversation = saved_conversation(&session);
    assert_all_shown(
        &conversation,
        &[
            "\"name\":\"write_file\"",
            "GEMINI-WROTE src/a.sh.",
            // Gemini CLI does not echo its hooks: these came from the hooks' own reports.
            "AfterTool hook: Callback 'sh-check' passed",
            "checked src/a.sh",
            "AfterAgent hook: blocked: Stop gate: verify",
        ],
    );

    tui.type_text("GEMINI-TURN-TWO: anything else?");
    tui.send(b"\r");
    tui.wait_turn_end(&root, "GEMINI-SECOND", WAIT).unwrap();
    // The second turn continued the first one's conversation: its request carries the first
    // turn. Gemini CLI 0.61's `--resume` would send the write's result twice, which the API
    // refuses; a fresh session is given the conversation instead.
    let requests = server.requests();
    let second = &requests.last().unwrap().raw_body;
    assert!(second.contains("GEMINI-TURN-TWO"), "{second}");
    assert!(
        second.contains("GEMINI-FIRST") && second.contains("GEMINI-WROTE src/a.sh."),
        "the second turn did not continue the conversation: {second}"
    );
    let refused = server.refused_requests();
    assert!(
        refused.is_empty(),
        "refused as the API would: {:?}",
        refused.iter().map(|r| &r.raw_body).collect::<Vec<_>>()
    );
    // Gemini CLI was offered Context Pilot's tools.
    assert!(
        requests[0].raw_body.contains("File_edit"),
        "no MCP tools offered"
    );
    let pid = tui.pid();
    tui.quit(WAIT).unwrap();
    assert!(
        agent_processes(&root, "gemini", pid).is_empty(),
        "gemini processes left behind"
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

// ---------------------------------------------------------------------------------------
// The no-model screen (issue 29): no provider configured, agent CLIs on PATH.

/// A `bin` directory of stand-ins: `claude` runs the real Claude Code with the scripted
/// server's key (which the TUI itself never sees, so it has no provider), `gemini` reports a
/// version too old to use.
fn stand_in_agents(server: &LlmServer) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let real = crate::util::agents::agents_bin().join("claude");
    let scripts = [
        (
            "claude",
            format!(
                "#!/bin/sh\nANTHROPIC_API_KEY=sk-ant-scripted ANTHROPIC_BASE_URL='{}' exec '{}' \"$@\"\n",
                server.url(),
                real.display()
            ),
        ),
        ("gemini", "#!/bin/sh\necho 0.1.0\n".to_owned()),
    ];
    for (name, text) in scripts {
        let path = bin.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    bin
}

/// `context-pilot` (no `--agent`, no provider) in a PTY with the stand-ins first on `PATH`
/// and `config` as the user's config directory.
fn start_no_model_tui(root: &Path, home: &Path, bin: &Path, config: &Path) -> TuiSession {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ("ANTHROPIC_API_KEY", ""),
        ("OPENAI_API_KEY", ""),
        ("OPENAI_BASE_URL", ""),
        ("CP_PROVIDER", ""),
        ("CP_WORKER", "main"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
    ];
    let tui = TuiSession::start(root, &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui
}

#[test]
fn the_no_model_screen_offers_claude_code_and_f6_runs_the_turns_with_it_and_remembers_it() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    let server = server();
    let bin = stand_in_agents(&server);
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());

    // The offer: Claude Code with its version and the keys; the old Gemini CLI marked.
    let screen = tui.wait_for("F5 runs your messages with it", WAIT).unwrap();
    assert!(screen.contains("Claude Code 2.1."), "{screen}");
    assert!(screen.contains("Gemini CLI 0.1.0"), "{screen}");
    assert!(screen.contains("too old"), "{screen}");

    // F6: Claude Code runs the turns (the saved conversation says so), and the choice is in
    // the user's config.
    tui.send(b"\x1b[17~");
    wait_saved_session(&root, "Claude Code runs the turns", WAIT, |s| {
        saved_conversation(s).contains("runs your messages now")
    })
    .unwrap();
    let file = config.path().join("context-pilot/config.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["agent"]["kind"], "claude", "{saved}");
    assert!(!root.join(".context-pilot/config.json").exists());

    server.push(anthropic::text_turn("NO-MODEL-ANSWER"));
    tui.type_text("NO-MODEL-TURN: hello");
    tui.send(b"\r");
    wait_saved_session(&root, "Claude Code answered", WAIT, |s| {
        saved_conversation(s).contains("NO-MODEL-ANSWER")
    })
    .unwrap();
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains("NO-MODEL-TURN")),
        "Claude Code never asked the scripted server"
    );
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();

    // The next start, still without a provider or --agent, uses the remembered agent.
    server.push(anthropic::text_turn("REMEMBERED-ANSWER"));
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());
    tui.type_text("REMEMBERED-TURN: still there?");
    tui.send(b"\r");
    wait_saved_session(&root, "the remembered agent answered", WAIT, |s| {
        saved_conversation(s).contains("REMEMBERED-ANSWER")
    })
    .unwrap();
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.raw_body.contains("REMEMBERED-TURN")),
        "the remembered agent never asked the scripted server"
    );
    let pid = tui.pid();
    assert_no_claude_left(&root, pid);
    tui.quit(WAIT).unwrap();
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

#[test]
fn on_the_no_model_screen_alt_down_picks_codex_cli_and_f6_starts_and_remembers_it() {
    let repo = git_repo();
    let root = canonical(repo.path());
    // Stand-ins that only tell their versions: Claude Code (listed first, so picked first) and
    // Codex CLI, which runs the TUI's turns too.
    let bin = tempfile::tempdir().unwrap();
    for (name, version) in [
        ("claude", "2.1.330 (Claude Code)"),
        ("codex", "codex-cli 0.169.0"),
    ] {
        let path = bin.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut tui = start_no_model_tui(&root, home.path(), bin.path(), config.path());
    let screen = tui.wait_for("F5 runs your messages with it", WAIT).unwrap();
    assert!(screen.contains("Codex CLI 0.169.0"), "{screen}");
    assert!(!screen.contains("cannot run"), "{screen}");

    // Alt-↓ picks the next usable agent, Codex CLI; F6 starts it and remembers it.
    tui.send(b"\x1b[1;3B");
    tui.wait_for("F5 starts Codex CLI", WAIT).unwrap();
    tui.send(b"\x1b[17~");
    wait_saved_session(&root, "Codex CLI runs the turns", WAIT, |s| {
        saved_conversation(s).contains("Codex CLI 0.169.0 runs your messages now")
    })
    .unwrap();
    let file = config.path().join("context-pilot/config.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["agent"]["kind"], "codex", "{saved}");
    tui.quit(WAIT).unwrap();
    stop_console_server(&root);
}
