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

use crate::util::agents::{agent_processes, agents_path, assert_no_agent_left, sh_checked_project};
use crate::util::{assert_all_shown, canonical, create_callback, stop_console_server};
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
    sh_checked_project(&json!({
        "context_window": window, "model": "claude-sonnet-4-5", "stop_grace_secs": 20
    }))
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

mod claude_code;
mod gemini_cli;
mod no_model;
