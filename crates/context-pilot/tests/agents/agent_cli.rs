//! End to end: `context-pilot run --agent claude|gemini` drives the REAL Claude Code and
//! Gemini CLI (installed by `scripts/install-agents.sh` under `target/agents/`) against the
//! scripted LLM server, with smart restarts measured from the agent's own stream (issue 18).
//! Workflows whose phases run at once (issue 26) are in `agent_cli_parallel.rs`.
//!
//! The scripted conversation is mostly a queue. Two kinds of request are answered by content
//! instead, because their timing is not the test's to choose: the request the agent may send
//! right after the tool that crossed the threshold (it is interrupted there; the reply stalls
//! so nothing is consumed), and the handoff turn of the resumed session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::util::agent_run::{
    RUN_LIMIT, agent_command, claude_config, claude_endpoint, gemini_endpoint, text, wait_output,
};
use crate::util::agents::{agent_processes, assert_no_agent_left};
use cp_e2e::{LlmServer, RecordedRequest, Reply, Turn, anthropic, gemini, git, git_repo};
use serde_json::{Value, json};

/// How long a killed agent may take to disappear from `/proc`.
const GONE_LIMIT: Duration = Duration::from_secs(60);
/// The text of the handoff request (`cp_orchestrate::HANDOFF_REQUEST`).
const HANDOFF_MARK: &str = "Submit your handoff now via Checkpoint_handoff";
/// Tool ids of the calls that cross a threshold.
const STOP_TOOL: &str = "toolu_stop";
const TASK: &str = "PHASE-TASK: add src/a.sh, then src/b.sh.";

/// A committed project with a one-phase workflow; the checkpoint blocks once and runs no
/// tests; the agent section is `agent`.
fn project(agent: &Value) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::write(root.join("app.sh"), "echo v1\n").unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}, "agent": agent})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/wf.yaml"),
        format!("name: wf\nphases:\n  - id: build\n    prompt: \"{TASK}\"\n"),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// `context-pilot run wf.yaml --headless [--agent AGENT] EXTRA…` with the agents on `PATH`.
fn run_command(root: &Path, home: &Path, agent: &str, extra: &[&str]) -> Command {
    agent_command(
        root,
        home,
        &["run", ".context-pilot/workflows/wf.yaml", "--headless"],
        agent,
        extra,
    )
}

/// The last message of an Anthropic request holds a tool result for an id starting with
/// `prefix`.
fn last_has_tool_result(request: &RecordedRequest, prefix: &str) -> bool {
    request.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| {
            blocks.iter().any(|b| {
                b["type"] == "tool_result"
                    && b["tool_use_id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with(prefix))
            })
        })
}

/// What the scripted model does in the handoff turn.
#[derive(Clone, Copy)]
enum HandoffTurn {
    /// Calls `Checkpoint_handoff`.
    Gives,
    /// Only answers in text.
    Refuses,
}

const HANDOFF_ARGS: &str = r#"{"reason": "threshold_critical",
    "completed": [{"file": "src/a.sh", "status": "done"}],
    "remaining": [{"file": "src/b.sh", "description": "HANDOFF-REMAINING write src/b.sh"}],
    "files_modified": ["src/a.sh"]}"#;

fn claude_server(handoff: HandoffTurn) -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(move |request| {
        if let Some(reply) = anthropic::side_reply(request) {
            return Some(reply);
        }
        if request.raw_body.contains(HANDOFF_MARK) {
            if last_has_tool_result(request, "toolu_handoff") {
                return Some(anthropic::text_turn("Handoff submitted."));
            }
            return Some(match handoff {
                HandoffTurn::Gives => anthropic::tool_use_turn(&[(
                    "toolu_handoff1",
                    "mcp__context-pilot__Checkpoint_handoff",
                    HANDOFF_ARGS,
                )]),
                HandoffTurn::Refuses => anthropic::text_turn("I would rather not."),
            });
        }
        // The agent is being interrupted after the tool that crossed the threshold.
        last_has_tool_result(request, STOP_TOOL).then(|| Reply::sse_chunks(Vec::new()).then_stall())
    });
    server
}

/// A scripted turn that writes `path` while reporting `tokens` prompt tokens (split over
/// input, cache creation and cache read, as Claude Code's requests are).
fn write_turn(root: &Path, id: &str, path: &str, tokens: u64) -> Reply {
    let args = json!({"file_path": root.join(path), "content": "echo hi\n"}).to_string();
    anthropic::reply(
        &Turn::tool_calls(&[(id, "Write", &args)])
            .with_usage(tokens / 10, tokens / 2, 20)
            .with_cache_creation(tokens - tokens / 10 - tokens / 2),
    )
}

fn claude_run(root: &Path, server: &LlmServer, extra: &[&str]) -> (Output, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    (claude_run_in(root, home.path(), server, extra), home)
}

/// [`claude_run`] with the person's `home` (their `~/.claude` in it).
fn claude_run_in(root: &Path, home: &Path, server: &LlmServer, extra: &[&str]) -> Output {
    let mut command = run_command(root, home, "claude", extra);
    let child = claude_endpoint(&mut command, server).spawn().unwrap();
    wait_output(child)
}

#[test]
fn a_claude_run_whose_hooks_are_turned_off_stops_and_says_so() {
    let (_repo, root) = project(&claude_config());
    let home = tempfile::tempdir().unwrap();
    // The person's own settings turn every hook off.
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, json!({"disableAllHooks": true}).to_string()).unwrap();
    let server = claude_server(HandoffTurn::Gives);
    server.push(anthropic::text_turn("UNWIRED-ANSWER"));
    let out = claude_run_in(&root, home.path(), &server, &[]);
    let stdout = text(&out.stdout);
    let all = format!("stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("Claude Code started without Context Pilot's hooks (no hook ran"),
        "{all}"
    );
    assert!(
        !stdout.contains("UNWIRED-ANSWER"),
        "the unwired answer was shown: {all}"
    );
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

#[test]
fn claude_code_restarts_after_the_write_with_a_handoff_and_finishes_the_phase() {
    let (_repo, root) = project(&claude_config());
    let server = claude_server(HandoffTurn::Gives);
    // Session 1: writes src/a.sh at 95 % of the window.
    server.push(write_turn(&root, "toolu_stop1", "src/a.sh", 19_000));
    // Session 2: writes src/b.sh, says done, is blocked once by the stop gate, done.
    server.push(write_turn(&root, "toolu_b", "src/b.sh", 3_000));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Verified and done."));

    let (out, _home) = claude_run(&root, &server, &[]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "stdout:\n{stdout}");

    // Claude Code offered Context Pilot's MCP tools to the model.
    assert!(
        requests[0]
            .raw_body
            .contains("mcp__context-pilot__File_edit"),
        "no Context Pilot MCP tools offered"
    );
    // Context use per request, and the stop after the write.
    assert!(
        stdout.contains("context 95.0% (19000/20000 tokens)"),
        "{stdout}"
    );
    assert!(std::fs::read_to_string(root.join("src/a.sh")).is_ok());
    // The handoff was taken in the resumed session and saved by `context-pilot mcp`.
    let handoff_turns: Vec<_> = server
        .side_requests()
        .into_iter()
        .filter(|r| r.raw_body.contains(HANDOFF_MARK))
        .collect();
    assert!(!handoff_turns.is_empty(), "no handoff turn");
    assert!(
        handoff_turns[0].raw_body.contains(TASK),
        "the handoff turn did not resume the session"
    );
    assert!(stdout.contains("handoff received"), "{stdout}");
    // Committed, and a fresh session with the handoff and the task.
    let log = git(&root, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase build"),
        "{log}"
    );
    assert!(log.contains("phase build completed"), "{log}");
    let fresh = &requests[1];
    assert!(
        fresh.raw_body.contains("HANDOFF-REMAINING"),
        "handoff missing"
    );
    assert!(fresh.raw_body.contains(TASK), "task missing");
    assert!(
        !fresh.raw_body.contains("toolu_stop1"),
        "the fresh session carries the old conversation"
    );
    let sessions: Vec<_> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("… session "))
        .collect();
    assert!(sessions.len() >= 3, "{stdout}");
    assert_ne!(sessions[0], sessions.last().copied().unwrap_or_default());
    // The stop hook's checkpoint reached the model, and the person saw its verdict.
    assert!(
        stdout.contains("Stop hook: blocked: Stop gate: verify"),
        "{stdout}"
    );
    assert!(
        requests[3].raw_body.contains("Stop gate: verify"),
        "{}",
        requests[3].raw_body
    );
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

#[test]
fn claude_code_without_a_handoff_falls_back_to_one_from_git() {
    let (_repo, root) = project(&claude_config());
    let server = claude_server(HandoffTurn::Refuses);
    server.push(write_turn(&root, "toolu_stop1", "src/a.sh", 19_000));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Done, really."));

    let (out, _home) = claude_run(&root, &server, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("no handoff from the agent"), "{stdout}");
    let fresh = &server.requests()[1];
    assert!(
        fresh.raw_body.contains("src/a.sh"),
        "the fallback names the written file"
    );
    assert!(fresh.raw_body.contains(TASK));
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

#[test]
fn claude_code_past_max_restarts_fails_with_a_clear_error() {
    let (_repo, root) = project(&claude_config());
    let server = claude_server(HandoffTurn::Gives);
    server.push(write_turn(&root, "toolu_stop1", "src/a.sh", 19_000));
    server.push(write_turn(&root, "toolu_stop2", "src/b.sh", 19_500));

    let (out, _home) = claude_run(&root, &server, &["--max-restarts", "1"]);
    let stdout = text(&out.stdout);
    let all = format!("{stdout}\n{}", text(&out.stderr));
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("hit the context limit 2 times"), "{all}");
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

/// Starts `context-pilot run --agent claude` whose model never answers, waits until Claude
/// Code is running, signals the run's process group with `signal`, and checks that no
/// `claude` process survives.
fn signal_run_while_claude_works(signal: i32) {
    let (_repo, root) = project(&claude_config());
    let server = claude_server(HandoffTurn::Gives);
    server.push(Reply::sse_chunks(Vec::new()).then_stall());
    let home = tempfile::tempdir().unwrap();
    let mut command = run_command(&root, home.path(), "claude", &[]);
    claude_endpoint(&mut command, &server);
    // Its own process group, as a shell gives a foreground job; Ctrl-C signals that group.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // And SIGINT at its default, as for a foreground job, whatever this test inherited (a
    // test run started in the background of a script ignores SIGINT, and so would the run).
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    let started = server.wait_for_requests(1, RUN_LIMIT);
    assert_eq!(started.len(), 1, "Claude Code never asked the model");
    assert!(!agent_processes(&root, "claude", None).is_empty());
    let group = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling a process group we started.
    unsafe {
        libc::kill(-group, signal);
    }
    let out = wait_output(child);
    assert_ne!(out.status.code(), Some(0));
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

#[test]
fn ctrl_c_of_run_leaves_no_claude_process() {
    signal_run_while_claude_works(libc::SIGINT);
}

#[test]
fn a_crashed_run_leaves_no_claude_process() {
    // SIGKILL: the host gets no chance to clean up; the agent dies with it.
    signal_run_while_claude_works(libc::SIGKILL);
}

// ---------------------------------------------------------------------------------------
// Gemini CLI

/// How Gemini CLI names Context Pilot's handoff tool (`mcp_<server>_<tool>`).
const GEMINI_HANDOFF_TOOL: &str = "mcp_context-pilot_Checkpoint_handoff";

/// The last content of a Gemini request answers a call of `tool`.
fn gemini_last_answers(request: &RecordedRequest, tool: &str) -> bool {
    gemini_last_parts(request)
        .is_some_and(|parts| parts.iter().any(|p| p["functionResponse"]["name"] == tool))
}

fn gemini_last_parts(request: &RecordedRequest) -> Option<&Vec<Value>> {
    request.body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|c| c["parts"].as_array())
}

#[test]
fn gemini_cli_restarts_at_the_tool_call_threshold_and_finishes_the_phase() {
    let (_repo, root) = project(&json!({"stop_grace_secs": 20}));
    // Interrupted after the write that reaches the threshold (src/c.sh).
    let server = gemini_server("c.sh");
    let write =
        |path: &str| json!({"file_path": root.join(path), "content": "echo hi\n"}).to_string();
    // Session 1: the second write reaches the threshold of 2 tool calls.
    server.push(gemini::tool_call_turn(&[(
        "write_file",
        &write("src/a.sh"),
    )]));
    server.push(gemini::tool_call_turn(&[(
        "write_file",
        &write("src/c.sh"),
    )]));
    // Session 2 writes src/b.sh and says it is done; the stop gate (Gemini CLI's
    // AfterAgent hook) sends it back once to verify; then it is done.
    server.push(gemini::tool_call_turn(&[(
        "write_file",
        &write("src/b.sh"),
    )]));
    server.push(gemini::text_turn("Done."));
    server.push(gemini::text_turn("Verified, done."));
    let out = gemini_run(&root, &server, &["--tool-call-threshold", "2"]);
    let stdout = text(&out.stdout);
    let all = format!("stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(root.join("src/a.sh").exists(), "{all}");
    assert!(stdout.contains("2 tool calls (threshold 2)"), "{all}");
    assert!(root.join("src/b.sh").exists(), "{all}");
    // The stop gate reached the model, and the phase's end was committed.
    let requests = server.requests();
    assert_eq!(requests.len(), 5, "{all}");
    assert!(requests[4].raw_body.contains("Stop gate: verify"), "{all}");
    assert!(git(&root, &["log", "--format=%s"]).contains("phase build completed"));
    // Gemini CLI offered Context Pilot's MCP tools.
    assert!(
        server.requests()[0].raw_body.contains("File_edit"),
        "no MCP tools offered"
    );
    assert!(stdout.contains("handoff received"), "{all}");
    let log = git(&root, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase build"),
        "{log}"
    );
    let fresh = &requests[2];
    assert!(
        fresh.raw_body.contains("HANDOFF-REMAINING"),
        "handoff missing: {all}"
    );
    assert!(fresh.raw_body.contains(TASK), "task missing");
    assert_handoff_without_resume(&server, &all);
    assert_no_agent_left(&root, "gemini", None, GONE_LIMIT);
}

/// The handoff turn ran in a fresh session (Gemini CLI 0.61's `--resume` sends each tool
/// result twice, which the API refuses) told the stopped session's conversation, and the
/// server refused nothing.
fn assert_handoff_without_resume(server: &LlmServer, all: &str) {
    let refused = server.refused_requests();
    assert!(
        refused.is_empty(),
        "refused as the API would: {:?}\n{all}",
        refused.iter().map(|r| &r.raw_body).collect::<Vec<_>>()
    );
    let handoff = server
        .side_requests()
        .into_iter()
        .find(|r| r.raw_body.contains(HANDOFF_MARK))
        .expect("no handoff turn");
    // A fresh conversation: its user turn carries the stopped session's transcript, and no
    // turn of the stopped session (its write_file call) is replayed.
    let contents = handoff.body["contents"].as_array().expect("contents");
    let told = contents
        .iter()
        .map(Value::to_string)
        .find(|c| c.contains("Handoff for a stopped session"))
        .unwrap_or_else(|| {
            panic!(
                "the handoff session was not told the stopped one's conversation: {}",
                handoff.raw_body
            )
        });
    assert!(told.contains(TASK) && told.contains("write_file"), "{told}");
    let replayed = contents.iter().any(|c| {
        c["parts"].as_array().is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p["functionCall"]["name"] == "write_file")
        })
    });
    assert!(
        !replayed,
        "the stopped session was resumed: {}",
        handoff.raw_body
    );
}

/// A scripted Gemini server: side calls answered, the handoff turn calls the handoff tool
/// once, and the request after the write of `stop_file` (the agent is being interrupted
/// there) stalls, so nothing is consumed.
fn gemini_server(stop_file: &'static str) -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(move |request| {
        if let Some(reply) = gemini::side_reply(request) {
            return Some(reply);
        }
        if request.raw_body.contains(HANDOFF_MARK) {
            return Some(if gemini_last_answers(request, GEMINI_HANDOFF_TOOL) {
                gemini::text_turn("Handoff submitted.")
            } else {
                gemini::tool_call_turn(&[(GEMINI_HANDOFF_TOOL, HANDOFF_ARGS)])
            });
        }
        let after_stop_write = gemini_last_answers(request, "write_file")
            && gemini_last_parts(request)
                .is_some_and(|p| Value::from(p.clone()).to_string().contains(stop_file));
        after_stop_write.then(|| Reply::sse_chunks(Vec::new()).then_stall())
    });
    server
}

/// `context-pilot run --agent gemini EXTRA…` against `server`, to its end.
fn gemini_run(root: &Path, server: &LlmServer, extra: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    gemini_run_in(root, home.path(), server, extra)
}

/// [`gemini_run`] with the person's `home` (their `~/.gemini` in it).
fn gemini_run_in(root: &Path, home: &Path, server: &LlmServer, extra: &[&str]) -> Output {
    let mut command = run_command(root, home, "gemini", extra);
    let child = gemini_endpoint(&mut command, server).spawn().unwrap();
    wait_output(child)
}

#[test]
fn gemini_cli_keeps_the_persons_settings_and_files_and_writes_none_of_them() {
    let (_repo, root) = project(&json!({}));
    let home = tempfile::tempdir().unwrap();
    let gemini = home.path().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    // The person's own settings, with a comment, as Gemini CLI allows; and a global memory
    // file, which Gemini CLI reads from its home and sends to the model.
    let theirs = "{\n  // mine\n  \"ui\": {\"theme\": \"Dracula\"}\n}\n";
    std::fs::write(gemini.join("settings.json"), theirs).unwrap();
    std::fs::write(gemini.join("GEMINI.md"), "PERSONS-GLOBAL-MEMORY\n").unwrap();
    let server = gemini_server("never");
    server.push(gemini::text_turn("Done."));
    server.push(gemini::text_turn("Verified, done."));
    let out = gemini_run_in(&root, home.path(), &server, &[]);
    let all = format!(
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    let first = &server.requests()[0].raw_body;
    assert!(
        first.contains("PERSONS-GLOBAL-MEMORY"),
        "the person's ~/.gemini was not seen: {all}"
    );
    assert!(first.contains("File_edit"), "no MCP tools offered: {all}");
    // Their settings are untouched, nothing was added to the project, and the session was
    // stored in their own ~/.gemini/tmp.
    assert_eq!(
        std::fs::read_to_string(gemini.join("settings.json")).unwrap(),
        theirs
    );
    assert!(!root.join(".gemini").exists(), "{all}");
    let sessions = walk(&gemini.join("tmp"));
    assert!(sessions.iter().any(|p| p.contains("chats")), "{sessions:?}");
}

/// Every path below `dir`.
fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        found.push(entry.path().display().to_string());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(walk(&entry.path()));
        }
    }
    found
}

#[test]
fn a_gemini_run_whose_hooks_and_mcp_server_are_turned_off_stops_and_says_so() {
    let (_repo, root) = project(&json!({}));
    let home = tempfile::tempdir().unwrap();
    let gemini = home.path().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    // The person's own settings turn hooks off and exclude Context Pilot's MCP server.
    std::fs::write(
        gemini.join("settings.json"),
        json!({"hooksConfig": {"enabled": false}, "mcp": {"excluded": ["context-pilot"]}})
            .to_string(),
    )
    .unwrap();
    let server = gemini_server("never");
    server.push(gemini::text_turn("I did it all without your tools."));
    let out = gemini_run_in(&root, home.path(), &server, &[]);
    let stdout = text(&out.stdout);
    let all = format!("stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("Gemini CLI started without Context Pilot's hooks and MCP server"),
        "{all}"
    );
    assert!(
        !stdout.contains("I did it all"),
        "the unwired answer was shown: {all}"
    );
    assert!(
        !git(&root, &["log", "--format=%s"]).contains("phase build completed"),
        "{all}"
    );
    assert_no_agent_left(&root, "gemini", None, GONE_LIMIT);
}

#[test]
fn gemini_cli_restarts_at_the_context_threshold_measured_by_its_after_model_hook() {
    // A window of 20,000 tokens: a response whose request had 19,000 is at 95 %.
    let (_repo, root) = project(&json!({"context_window": 20_000, "stop_grace_secs": 20}));
    let server = gemini_server("a.sh");
    let write =
        |path: &str| json!({"file_path": root.join(path), "content": "echo hi\n"}).to_string();
    // Session 1 writes src/a.sh at 95 %: stopped after the write.
    server.push(gemini::reply(
        &Turn::tool_calls(&[("call_0", "write_file", &write("src/a.sh"))])
            .with_usage(19_000, 0, 20),
    ));
    // Session 2 writes src/b.sh, is sent back once by the stop gate, and is done.
    server.push(gemini::tool_call_turn(&[(
        "write_file",
        &write("src/b.sh"),
    )]));
    server.push(gemini::text_turn("Done."));
    server.push(gemini::text_turn("Verified, done."));
    let out = gemini_run(&root, &server, &[]);
    let stdout = text(&out.stdout);
    let all = format!("stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{all}");
    // Measured per request, from the hook (the stream says nothing until the end).
    assert!(
        stdout.contains("context 95.0% (19000/20000 tokens)"),
        "{all}"
    );
    assert!(
        root.join("src/a.sh").exists() && root.join("src/b.sh").exists(),
        "{all}"
    );
    assert!(stdout.contains("handoff received"), "{all}");
    let log = git(&root, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase build"),
        "{log}"
    );
    let fresh = &server.requests()[1];
    assert!(
        fresh.raw_body.contains("HANDOFF-REMAINING"),
        "handoff missing: {all}"
    );
    assert!(fresh.raw_body.contains(TASK), "task missing");
    assert_handoff_without_resume(&server, &all);
    assert_no_agent_left(&root, "gemini", None, GONE_LIMIT);
}

/// Pins why Gemini CLI is not resumed (Gemini CLI's `AgentSpec::resume_since` is `None`): the
/// pinned 0.61.0, resuming a session that made one tool call, sends its result twice and the
/// API (here the scripted server, which enforces the same rule) refuses it. When an upgrade
/// makes this test fail, set `resume_since` to that release.
#[test]
fn the_pinned_gemini_cli_resumes_a_session_with_each_tool_result_twice() {
    let (_repo, root) = project(&json!({}));
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(gemini::side_reply);
    let write = json!({"file_path": root.join("a.txt"), "content": "a\n"}).to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &write)]));
    server.push(gemini::text_turn("Wrote it."));
    server.push(gemini::text_turn("Resumed."));
    // Gemini CLI's own settings in a home of the test's: user settings need no root-owned
    // file, so this runs as any user.
    let home = tempfile::tempdir().unwrap();
    let session = "6f0b7a52-3c1e-4b8e-9f1a-2d4c5e6f7a8b";
    let gemini = |args: &[&str]| {
        let out = Command::new(crate::util::agents::agents_bin().join("gemini"))
            .args(args)
            .args(["--output-format", "stream-json", "--approval-mode", "yolo"])
            .current_dir(&root)
            .env("HOME", home.path())
            .env("GEMINI_CLI_HOME", home.path())
            .env("GEMINI_API_KEY", "scripted")
            .env("GOOGLE_GEMINI_BASE_URL", server.url())
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .env_remove("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    };
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        json!({"security": {"folderTrust": {"enabled": false},
                            "auth": {"selectedType": "gemini-api-key"}}})
        .to_string(),
    )
    .unwrap();
    let first = gemini(&["-p", "Write a.txt.", "--session-id", session]);
    assert!(root.join("a.txt").exists(), "{first}");
    assert!(server.refused_requests().is_empty(), "{first}");
    let version = text(
        &Command::new(crate::util::agents::agents_bin().join("gemini"))
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    );
    let resumed = gemini(&["-p", "Go on.", "--resume", session]);
    let refused = server.refused_requests();
    assert!(
        !refused.is_empty(),
        "Gemini CLI {version} resumed with paired tool results: set its resume_since to \
         this release\n{resumed}"
    );
    assert!(
        refused[0].raw_body.contains("functionResponse"),
        "{}",
        refused[0].raw_body
    );
    let gemini = "gemini".parse::<cp_agent_cli::AgentKind>().unwrap();
    assert!(!gemini.cli().unwrap().spec().resume_works(version.trim()));
}

#[test]
fn an_agent_named_by_the_workflow_but_not_installed_is_a_clear_error() {
    let (_repo, root) = project(&json!({}));
    std::fs::write(
        root.join(".context-pilot/workflows/wf.yaml"),
        format!("name: wf\nagent: claude\nphases:\n  - id: build\n    prompt: \"{TASK}\"\n"),
    )
    .unwrap();
    git(&root, &["commit", "-qam", "use claude"]);
    let home = tempfile::tempdir().unwrap();
    // No --agent: the workflow's `agent: claude` decides; PATH has no `claude`.
    let mut command = run_command(&root, home.path(), "", &[]);
    command.env("PATH", "/usr/bin:/bin");
    let out = command.output().unwrap();
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("Claude Code was not found"), "{stderr}");
    assert!(
        stderr.contains("npm install -g @anthropic-ai/claude-code"),
        "{stderr}"
    );
}
