//! End to end: `context-pilot run --agent claude|gemini` drives the REAL Claude Code and
//! Gemini CLI (installed by `scripts/install-agents.sh` under `target/agents/`) against the
//! scripted LLM server, with smart restarts measured from the agent's own stream (issue 18),
//! and Claude Code in workflows with parallel phases (issue 26): phases at once in worktrees,
//! a dependent that sees both results, a conflict (exit 3), `--resume` after `SIGKILL`.
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

mod util;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cp_e2e::{
    LlmServer, RecordedRequest, Reply, Turn, anthropic, binary_path, gemini, git, git_repo,
};
use serde_json::{Value, json};
use util::agents::{agent_processes, agents_path, assert_no_agent_left};

/// Generous: every session starts node, loads the CLI and runs hooks that run git.
const RUN_LIMIT: Duration = Duration::from_secs(300);
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

/// `context-pilot FIRST… [--agent AGENT] EXTRA…` with the agents on `PATH`.
fn agent_command(root: &Path, home: &Path, first: &[&str], agent: &str, extra: &[&str]) -> Command {
    let path = agents_path();
    let mut command = Command::new(binary_path());
    command
        .args(first)
        .args(if agent.is_empty() {
            Vec::new()
        } else {
            vec!["--agent", agent]
        })
        .args(extra)
        .current_dir(root)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env_remove("CP_WORKER")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn wait_output(mut child: Child) -> Output {
    let deadline = Instant::now() + RUN_LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "context-pilot run took longer than {RUN_LIMIT:?}\nstdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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
    let child = run_command(root, home, "claude", extra)
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        .spawn()
        .unwrap();
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

/// A window of 20,000 tokens (from config), so 19,000 is 95 % and Claude Code's own
/// auto-compaction (it assumes 200,000) stays out of the way.
fn claude_config() -> Value {
    json!({"context_window": 20_000, "model": "claude-sonnet-4-5", "stop_grace_secs": 20})
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
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted");
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
    let child = run_command(root, home, "gemini", extra)
        .env("GEMINI_API_KEY", "scripted")
        // The run's private Gemini CLI home goes below the test's HOME.
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
        .spawn()
        .unwrap();
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
        let out = Command::new(util::agents::agents_bin().join("gemini"))
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
        &Command::new(util::agents::agents_bin().join("gemini"))
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

/// Issue 26 with the real Claude Code: two phases of a workflow with `depends_on: []` run at
/// once, each Claude Code in its own worktree (its MCP server rooted there), and both branches
/// are merged. The scripted model answers by phase (the prompts carry markers) and holds the
/// first request of `api` until `ui`'s first request has arrived: both were in flight at once.
#[test]
fn two_claude_code_phases_run_at_once_in_worktrees_and_both_merge() {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}, "agent": claude_config()})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/wf.yaml"),
        "name: wf\nphases:\n  - id: api\n    depends_on: []\n    prompt: \"PHASE-api-MARK write api.sh\"\n  - id: ui\n    depends_on: []\n    prompt: \"PHASE-ui-MARK write ui.sh\"\n",
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);

    let server = LlmServer::start().unwrap();
    let arrived = std::sync::Arc::new((
        std::sync::Mutex::new(Vec::<&'static str>::new()),
        std::sync::Condvar::new(),
    ));
    let overlapped = std::sync::Arc::new(std::sync::Mutex::new(None));
    {
        let (arrived, overlapped) = (arrived.clone(), overlapped.clone());
        server.answer_side_requests(move |request| {
            if let Some(reply) = anthropic::side_reply(request) {
                return Some(reply);
            }
            let phase = ["api", "ui"]
                .into_iter()
                .find(|p| request.raw_body.contains(&format!("PHASE-{p}-MARK")))?;
            let (seen, signal) = &*arrived;
            let first = {
                let mut seen = seen.lock().unwrap();
                let first = !seen.contains(&phase);
                seen.push(phase);
                signal.notify_all();
                first
            };
            if first && phase == "api" {
                let seen = seen.lock().unwrap();
                let (seen, _) = signal
                    .wait_timeout_while(seen, Duration::from_secs(120), |s| !s.contains(&"ui"))
                    .unwrap();
                *overlapped.lock().unwrap() = Some(seen.contains(&"ui"));
            }
            if request.raw_body.contains("\"tool_result\"") {
                return Some(anthropic::text_turn("Done."));
            }
            let args =
                json!({"file_path": format!("{phase}.sh"), "content": format!("echo {phase}\n")})
                    .to_string();
            Some(anthropic::tool_use_turn(&[(
                &format!("toolu_{phase}"),
                "mcp__context-pilot__File_write",
                &args,
            )]))
        });
    }
    let (out, _home) = claude_run(&root, &server, &[]);
    let all = format!(
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{all}");
    for phase in ["api", "ui"] {
        assert_eq!(
            std::fs::read_to_string(root.join(format!("{phase}.sh"))).unwrap(),
            format!("echo {phase}\n"),
            "{all}"
        );
        let log = git(&root, &["log", "--format=%s"]);
        assert!(log.contains(&format!("Merge phase {phase} ")), "{log}");
    }
    assert_eq!(
        git(&root, &["worktree", "list"]).lines().count(),
        1,
        "{all}"
    );
    assert_eq!(git(&root, &["branch", "--list", "cp/*"]), "", "{all}");
    assert_no_agent_left(&root, "claude", None, GONE_LIMIT);
}

/// What each phase's Claude Code does: the MCP tool calls of its first turn, then "Done.".
type PhaseScript = Vec<(&'static str, Vec<(&'static str, String)>)>;

/// A committed project with the workflow `yaml` (whose prompts carry `PHASE-<id>-MARK`), a
/// `shared.txt`, and a checkpoint that blocks once and runs no tests, driving Claude Code.
fn graph_project(yaml: &str) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}, "agent": claude_config()})
            .to_string(),
    )
    .unwrap();
    std::fs::write(root.join(".context-pilot/workflows/wf.yaml"), yaml).unwrap();
    std::fs::write(root.join("shared.txt"), "base\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// The phase a request belongs to: its conversation holds the phase's marker. The phases are
/// tried in the order given, so a dependent listed first wins over markers it may quote.
fn phase_of_request(request: &RecordedRequest, phases: &PhaseScript) -> Option<&'static str> {
    phases
        .iter()
        .map(|(phase, _)| *phase)
        .find(|phase| request.raw_body.contains(&format!("PHASE-{phase}-MARK")))
}

/// Answers Claude Code's requests by phase: the first turn's tool calls (Context Pilot's MCP
/// tools, paths relative to the phase's worktree), then "Done." — or, for the phase named in
/// `stall`, a reply that never ends once its tools have run.
fn serve_phases(server: &LlmServer, phases: PhaseScript, stall: Arc<Mutex<Option<&'static str>>>) {
    server.answer_side_requests(move |request| {
        if let Some(reply) = anthropic::side_reply(request) {
            return Some(reply);
        }
        let phase = phase_of_request(request, &phases)?;
        if !request.raw_body.contains("\"tool_result\"") {
            let calls = &phases.iter().find(|(p, _)| *p == phase).unwrap().1;
            let ids: Vec<String> = (0..calls.len())
                .map(|i| format!("toolu_{phase}{i}"))
                .collect();
            let calls: Vec<(&str, String, &str)> = calls
                .iter()
                .zip(&ids)
                .map(|((name, args), id)| {
                    (
                        id.as_str(),
                        format!("mcp__context-pilot__{name}"),
                        args.as_str(),
                    )
                })
                .collect();
            let calls: Vec<(&str, &str, &str)> = calls
                .iter()
                .map(|(id, name, args)| (*id, name.as_str(), *args))
                .collect();
            return Some(anthropic::tool_use_turn(&calls));
        }
        if *stall.lock().unwrap() == Some(phase) {
            return Some(Reply::sse("event: ping\ndata: {\"type\":\"ping\"}\n\n").then_stall());
        }
        Some(anthropic::text_turn("Done."))
    });
}

fn write_call(file: &str, content: &str) -> (&'static str, String) {
    (
        "File_write",
        json!({"file_path": file, "content": content}).to_string(),
    )
}

fn read_call(file: &str) -> (&'static str, String) {
    ("File_read", json!({"file_path": file}).to_string())
}

/// Output of a run, for failure messages.
fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The run's saved record (`.context-pilot/runs/<id>/context.json`), once it is readable.
fn run_record(root: &Path) -> Option<Value> {
    let run = std::fs::read_dir(root.join(".context-pilot/runs"))
        .ok()?
        .flatten()
        .next()?;
    let text = std::fs::read_to_string(run.path().join("context.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// `claude` processes whose working directory is `root` or below it (the phases' worktrees;
/// a removed worktree's directory reads as "… (deleted)").
fn claude_processes_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(cwd) = std::fs::read_link(entry.path().join("cwd")).ok() else {
            continue;
        };
        if !cwd.to_string_lossy().starts_with(&*root.to_string_lossy()) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if cmdline.contains("claude") && !zombie {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Waits until no `claude` process runs in `root` or one of its worktrees.
fn assert_no_claude_under(root: &Path) {
    let deadline = Instant::now() + GONE_LIMIT;
    loop {
        let left = claude_processes_under(root);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "claude processes left: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// No worktree or phase branch is left.
fn assert_no_phase_left(root: &Path, all: &str) {
    assert_eq!(git(root, &["worktree", "list"]).lines().count(), 1, "{all}");
    assert_eq!(git(root, &["branch", "--list", "cp/*"]), "", "{all}");
}

const FEATURE: &str = "\
name: wf
phases:
  - id: api
    depends_on: []
    prompt: PHASE-api-MARK Write api.txt.
  - id: ui
    depends_on: []
    prompt: PHASE-ui-MARK Write ui.txt.
  - id: integrate
    depends_on: [api, ui]
    prompt: PHASE-integrate-MARK Read api.txt and ui.txt.
";

fn feature_script() -> PhaseScript {
    vec![
        ("integrate", vec![read_call("api.txt"), read_call("ui.txt")]),
        ("api", vec![write_call("api.txt", "api was here\n")]),
        ("ui", vec![write_call("ui.txt", "ui was here\n")]),
    ]
}

/// Issue 26 with the real Claude Code: a phase that depends on two parallel phases starts
/// from the run's branch with both merged, and its agent's tool results carry both results.
#[test]
fn a_claude_code_phase_depending_on_two_parallel_phases_sees_both_results() {
    let (_repo, root) = graph_project(FEATURE);
    let server = LlmServer::start().unwrap();
    serve_phases(&server, feature_script(), Arc::default());
    let (out, _home) = claude_run(&root, &server, &[]);
    let all = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let record = run_record(&root).unwrap();
    for phase in ["api", "ui", "integrate"] {
        assert_eq!(
            record["phase_runs"][phase]["status"], "merged",
            "{record:#}"
        );
        assert_eq!(record["phase_runs"][phase]["agent"], "claude", "{record:#}");
    }
    // The scripted server's log: integrate's last request holds both files' contents, as the
    // results of its two reads.
    let phases = feature_script();
    let integrate: Vec<RecordedRequest> = server
        .side_requests()
        .into_iter()
        .filter(|r| phase_of_request(r, &phases) == Some("integrate"))
        .collect();
    let last = integrate.last().expect("integrate never asked the model");
    assert!(
        last_has_tool_result(last, "toolu_integrate"),
        "{}",
        last.raw_body
    );
    let results = last.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(ToString::to_string)
                .collect::<String>()
        })
        .unwrap_or_default();
    assert!(
        results.contains("api was here") && results.contains("ui was here"),
        "{}",
        last.raw_body
    );
    assert_no_phase_left(&root, &all);
    assert_no_claude_under(&root);
}

/// Issue 26 with the real Claude Code: two parallel phases rewrite the same file; the second
/// merge conflicts, the headless run exits 3 naming the file and both phases, the project's
/// tree is clean (no merge in progress), and the conflicting phase's branch is kept.
#[test]
fn a_conflict_between_claude_code_phases_exits_3_and_leaves_the_tree_clean() {
    let (_repo, root) = graph_project(
        "name: wf\nphases:\n  - id: left\n    depends_on: []\n    prompt: PHASE-left-MARK Rewrite shared.txt.\n  - id: right\n    depends_on: []\n    prompt: PHASE-right-MARK Rewrite shared.txt.\n",
    );
    let server = LlmServer::start().unwrap();
    serve_phases(
        &server,
        vec![
            ("left", vec![write_call("shared.txt", "from left\n")]),
            ("right", vec![write_call("shared.txt", "from right\n")]),
        ],
        Arc::default(),
    );
    let (out, _home) = claude_run(&root, &server, &[]);
    let all = shown(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(
        all.contains("merging phase 'right'")
            && all.contains("phase 'left'")
            && all.contains("shared.txt"),
        "{all}"
    );
    // Clean: no change but the run's own record, no merge in progress, left's work merged.
    // (The run's own record is the one untracked entry, as in every run.)
    let status = git(&root, &["status", "--porcelain"]);
    assert!(
        status.lines().all(|l| l == "?? .context-pilot/runs/"),
        "{status}\n{all}"
    );
    assert!(!root.join(".git/MERGE_HEAD").exists(), "{all}");
    assert_eq!(
        std::fs::read_to_string(root.join("shared.txt")).unwrap(),
        "from left\n"
    );
    assert!(
        git(&root, &["branch", "--list", "cp/*"]).contains("/right"),
        "{all}"
    );
    assert_no_claude_under(&root);
}

/// Issue 26 with the real Claude Code: the run is killed (`SIGKILL`) mid-wave (api merged, ui's Claude
/// Code waiting on the model), then `run --resume` finishes it: api's commit is kept, ui and
/// integrate are merged, and no Claude Code process is left.
#[test]
#[ignore = "failed once in about 40 runs with the cause unknown (its output now goes to a file \
            and into the failure message); run it with --ignored until that is found"]
fn resume_after_sigkill_of_a_claude_code_run_mid_wave_keeps_every_commit() {
    let (_repo, root) = graph_project(FEATURE);
    let server = LlmServer::start().unwrap();
    // ui's agent hangs after its write: the run is killed with api merged and ui running.
    let stall = Arc::new(Mutex::new(Some("ui")));
    serve_phases(&server, feature_script(), Arc::clone(&stall));
    let home = tempfile::tempdir().unwrap();
    let mut command = run_command(&root, home.path(), "claude", &[]);
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted");
    // The killed run's progress and errors, for a failure's message.
    let first_log = home.path().join("first-run.log");
    let log = std::fs::File::create(&first_log).unwrap();
    command.stdout(log.try_clone().unwrap()).stderr(log);
    let first = || std::fs::read_to_string(&first_log).unwrap_or_default();
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + RUN_LIMIT;
    let record = loop {
        if let Some(record) = run_record(&root)
            && record["phase_runs"]["api"]["status"] == "merged"
            && record["phase_runs"]["ui"]["status"] == "running"
            && !git(&root, &["branch", "--list", "cp/*"]).contains("/api")
            && server.side_requests().iter().any(|r| {
                r.raw_body.contains("PHASE-ui-MARK") && last_has_tool_result(r, "toolu_ui")
            })
        {
            break record;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the awaited state\n{}",
            first()
        );
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the run record\n{}",
            first()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let run_id = record["run_id"].as_str().unwrap().to_owned();
    let merge = record["phase_runs"]["api"]["merge_commit"]
        .as_str()
        .unwrap()
        .to_owned();
    let api_commit = git(&root, &["rev-parse", &format!("{merge}^2")])
        .trim()
        .to_owned();
    let group = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling the process group this test started.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    child.wait().unwrap();
    assert_no_claude_under(&root);

    *stall.lock().unwrap() = None;
    let resume = ["run", "--resume", &run_id, "--headless"];
    let resumed = agent_command(&root, home.path(), &resume, "claude", &[])
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        .spawn()
        .unwrap();
    let out = wait_output(resumed);
    let all = format!("killed run:\n{}\nresumed run: {}", first(), shown(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    let kept = Command::new("git")
        .args(["merge-base", "--is-ancestor", &api_commit, "HEAD"])
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(kept.success(), "{api_commit} lost\n{all}");
    for (file, content) in [("api.txt", "api was here\n"), ("ui.txt", "ui was here\n")] {
        assert_eq!(
            std::fs::read_to_string(root.join(file)).unwrap(),
            content,
            "{all}"
        );
    }
    let record = run_record(&root).unwrap();
    for phase in ["api", "ui", "integrate"] {
        assert_eq!(
            record["phase_runs"][phase]["status"], "merged",
            "{record:#}"
        );
    }
    assert_no_phase_left(&root, &all);
    assert_no_claude_under(&root);
}
