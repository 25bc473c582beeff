//! End to end: `context-pilot run --agent codex` drives the REAL Codex CLI (installed by
//! `scripts/install-agents.sh` under `target/agents/`) against the scripted LLM server's
//! Responses API, with a smart restart measured from Codex's own session file (issue 25).
//!
//! As in `agent_cli`, the scripted conversation is a queue, and two kinds of request are
//! answered by content: the request Codex sends right after the tool that crossed the
//! threshold (it is interrupted there; the reply stalls), and the handoff turn of the resumed
//! thread.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::util::agent_run::{agent_command, text, wait_output};
use crate::util::agents::{agent_processes, agents_path, assert_no_agent_left};
use cp_e2e::{LlmServer, RecordedRequest, Reply, Turn, binary_path, git, git_repo, responses};
use serde_json::{Value, json};

/// How long a killed agent may take to disappear from `/proc`.
const GONE_LIMIT: Duration = Duration::from_secs(60);
/// The text of the handoff request (`cp_orchestrate::HANDOFF_REQUEST`).
const HANDOFF_MARK: &str = "Submit your handoff now via Checkpoint_handoff";
/// The call that crosses the context threshold.
const STOP_CALL: &str = "call_stop";
const TASK: &str = "PHASE-TASK: add src/a.sh, then src/b.sh.";
/// 85 % of the window Codex 0.169.0 and 0.171.0 report for `gpt-5.5` in its session file (258,400):
/// past the 80 % threshold, below Codex's own compaction (about 90 %).
const STOP_TOKENS: u64 = 219_640;
const HANDOFF_ARGS: &str = r#"{"reason": "threshold_critical",
    "completed": [{"file": "src/a.sh", "status": "done"}],
    "remaining": [{"file": "src/b.sh", "description": "HANDOFF-REMAINING write src/b.sh"}],
    "files_modified": ["src/a.sh"]}"#;

/// A committed project with a one-phase workflow whose checkpoint blocks once and runs no
/// tests, wired with `init codex`. Its `.codex/config.toml` also ships hooks of its own, as a
/// cloned repository might, which write `repo-hook-ran` beside the project if they ever run.
fn project() -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::write(root.join("app.sh"), "echo v1\n").unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}},
               "agent": {"stop_grace_secs": 20}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/wf.yaml"),
        format!("name: wf\nphases:\n  - id: build\n    prompt: \"{TASK}\"\n"),
    )
    .unwrap();
    // `init codex` wrote Context Pilot's own hooks there too (untrusted here; a run turns
    // these copies off either way, as it passes its own).
    let init = Command::new(binary_path())
        .args(["init", "codex"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let marker = repo_hook_marker(&root);
    let config = root.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    write!(
        text,
        "\n[[hooks.UserPromptSubmit]]\n[[hooks.UserPromptSubmit.hooks]]\ntype = \"command\"\n\
         command = \"touch {0}\"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\n\
         type = \"command\"\ncommand = \"touch {0}\"\n",
        marker.display()
    )
    .unwrap();
    std::fs::write(&config, text).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// Where the repository's own hook would leave its mark.
fn repo_hook_marker(root: &Path) -> PathBuf {
    root.with_extension("repo-hook-ran")
}

/// The person's `CODEX_HOME`: the scripted server as the provider (Responses API), and the
/// project trusted, so that Codex reads the project's `.codex/` (and sees its hook).
fn codex_home(server: &LlmServer, root: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}\"\n\
             env_key = \"CP_SCRIPTED_KEY\"\nwire_api = \"responses\"\n\n\
             [projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            server.openai_base_url(),
            root.display()
        ),
    )
    .unwrap();
    home
}

/// The input items of a Responses request.
fn inputs(request: &RecordedRequest) -> Vec<Value> {
    request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The last input item of a request is the output of call `call_id`.
fn last_is_output_of(request: &RecordedRequest, call_id: &str) -> bool {
    inputs(request).last().is_some_and(|item| {
        item["call_id"] == call_id
            && item["type"]
                .as_str()
                .is_some_and(|kind| kind.ends_with("call_output"))
    })
}

/// A scripted server: the handoff turn calls `Checkpoint_handoff` once, and the request after
/// the call that crossed the threshold stalls (Codex is being interrupted there).
fn server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        if request.raw_body.contains(HANDOFF_MARK) {
            return Some(if last_is_output_of(request, "call_handoff") {
                responses::text_turn("Handoff submitted.")
            } else {
                responses::items_turn(&[responses::Item::mcp_call(
                    "call_handoff",
                    "mcp__context_pilot",
                    "Checkpoint_handoff",
                    HANDOFF_ARGS,
                )])
            });
        }
        last_is_output_of(request, STOP_CALL).then(|| Reply::sse_chunks(Vec::new()).then_stall())
    });
    server
}

/// A reply adding `path` with `apply_patch` in call `call_id`, reporting `tokens` of prompt.
fn patch_turn(call_id: &str, file: &str, tokens: u64) -> Reply {
    let text = format!("*** Begin Patch\n*** Add File: {file}\n+echo hi\n*** End Patch\n");
    let usage = Turn::text("").with_usage(tokens, 0, 20);
    Reply::sse(&responses::sse_items(
        &[responses::Item::apply_patch(call_id, &text)],
        &usage,
    ))
}

/// `context-pilot run wf.yaml --headless --agent codex` with the person's `codex_home`.
fn run(root: &Path, codex_home: &Path) -> Output {
    let home = tempfile::tempdir().unwrap();
    let workflow = ["run", ".context-pilot/workflows/wf.yaml", "--headless"];
    let child = agent_command(root, home.path(), &workflow, "codex", &[])
        .env("CODEX_HOME", codex_home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .spawn()
        .unwrap();
    wait_output(child)
}

/// Every request body, for failure messages.
fn bodies(server: &LlmServer) -> String {
    let mut out = String::new();
    for (i, r) in server.requests().iter().enumerate() {
        let _ = writeln!(out, "--- request {i}\n{}", r.raw_body);
    }
    for r in server.side_requests() {
        let _ = writeln!(out, "--- side request\n{}", r.raw_body);
    }
    out
}

/// No context-pilot process (the MCP servers, the hooks) is left in `root` but the project's
/// console server.
fn assert_only_the_console_server_left(root: &Path) {
    let left = || -> Vec<String> {
        agent_processes(root, "context-pilot", None)
            .into_iter()
            .filter(|p| !p.contains("console-server"))
            .collect()
    };
    cp_e2e::eventually_with(
        "only the console server left",
        GONE_LIMIT,
        || left().is_empty(),
        || format!("left behind: {:?}", left()),
    );
}

/// The repository's hook is loaded and would have run had Codex been told to run every hook
/// (`--dangerously-bypass-hook-trust`, which runs never use): the check that it did not run
/// is real.
fn assert_the_repository_hook_loads(root: &Path, server: &LlmServer, codex_home: &Path) {
    server.push(responses::text_turn("Bypassed."));
    let bypassed = Command::new(crate::util::agents::agents_bin().join("codex"))
        .args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
        ])
        .arg("Say hi.")
        .current_dir(root)
        .env("CODEX_HOME", codex_home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        // `init codex`'s hooks run too, with the tests' own trust store.
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env_remove("CP_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(bypassed.status.success(), "{bypassed:?}");
    assert!(
        repo_hook_marker(root).exists(),
        "the repository's hook never loads"
    );
    std::fs::remove_file(repo_hook_marker(root)).unwrap();
}

#[test]
fn codex_restarts_at_the_measured_threshold_with_a_handoff_and_only_our_hooks_run() {
    let (_repo, root) = project();
    let server = server();
    let codex_home = codex_home(&server, &root);
    // Thread 1 adds src/a.sh at 85 % of its window.
    server.push(patch_turn(STOP_CALL, "src/a.sh", STOP_TOKENS));
    // Thread 2 adds src/b.sh and says it is done; the stop gate sends it back once.
    server.push(patch_turn("call_b", "src/b.sh", 3_000));
    server.push(responses::text_turn("Done."));
    server.push(responses::text_turn("Verified, done."));

    let out = run(&root, codex_home.path());
    let stdout = text(&out.stdout);
    let all = format!(
        "stdout:\n{stdout}\nstderr:\n{}\n{}",
        text(&out.stderr),
        bodies(&server)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{all}");
    // Context use per request, from the session file against Codex's own window.
    assert!(
        stdout.contains("context 85.0% (219640/258400 tokens)"),
        "{all}"
    );
    assert!(
        root.join("src/a.sh").exists() && root.join("src/b.sh").exists(),
        "{all}"
    );
    // The handoff turn resumed the thread (it carries the task and the patch) and was saved.
    let handoff = server
        .side_requests()
        .into_iter()
        .find(|r| r.raw_body.contains(HANDOFF_MARK))
        .unwrap_or_else(|| panic!("no handoff turn: {all}"));
    // Only Checkpoint_handoff of the MCP server, and none of Codex's shell tools.
    let offered = handoff.body["tools"].to_string();
    assert!(!offered.contains("exec_command"), "{offered}");
    assert!(handoff.raw_body.contains(TASK), "{all}");
    assert!(handoff.raw_body.contains(STOP_CALL), "{all}");
    assert!(stdout.contains("handoff received"), "{all}");
    // Committed, then a fresh thread with the handoff and the task, not the old thread.
    let log = git(&root, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase build"),
        "{log}"
    );
    assert!(log.contains("phase build completed"), "{log}");
    let fresh = &requests[1];
    assert!(fresh.raw_body.contains("HANDOFF-REMAINING"), "{all}");
    assert!(fresh.raw_body.contains(TASK), "{all}");
    assert!(!fresh.raw_body.contains(STOP_CALL), "{all}");
    let sessions: Vec<_> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("… session "))
        .collect();
    assert!(sessions.len() >= 3, "{all}");
    assert_ne!(sessions[0], sessions.last().copied().unwrap_or_default());
    // Our hooks ran (the stop gate reached the model and the person saw its verdict); the
    // repository's own hooks, never trusted, did not.
    assert!(requests[3].raw_body.contains("Stop gate: verify"), "{all}");
    assert!(
        stdout.contains("Stop hook: blocked: Stop gate: verify"),
        "{all}"
    );
    assert!(
        !repo_hook_marker(&root).exists(),
        "the repository's hook ran: {all}"
    );
    // Nothing was written into the project's or the person's Codex settings.
    assert_eq!(
        git(&root, &["status", "--porcelain", ".codex"]),
        "",
        "{all}"
    );
    let config = std::fs::read_to_string(codex_home.path().join("config.toml")).unwrap();
    assert!(!config.contains("context-pilot"), "{config}");
    assert_no_agent_left(&root, "codex", None, GONE_LIMIT);
    assert_only_the_console_server_left(&root);
    assert_the_repository_hook_loads(&root, &server, codex_home.path());
    crate::util::stop_console_server(&root);
}

#[test]
fn a_codex_run_whose_hooks_the_person_turned_off_stops_and_says_so() {
    let (_repo, root) = project();
    let server = server();
    let codex_home = codex_home(&server, &root);
    // The person's own config turns Codex's hooks off; a run does not override that.
    let config = codex_home.path().join("config.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.insert_str(0, "features.hooks = false\n");
    std::fs::write(&config, toml).unwrap();
    server.push(responses::text_turn("UNWIRED-ANSWER"));
    let out = run(&root, codex_home.path());
    let stdout = text(&out.stdout);
    let all = format!("stdout:\n{stdout}\nstderr:\n{}", text(&out.stderr));
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("Codex CLI started without Context Pilot's hooks (no hook ran"),
        "{all}"
    );
    assert!(!stdout.contains("UNWIRED-ANSWER"), "{all}");
    assert_no_agent_left(&root, "codex", None, GONE_LIMIT);
    crate::util::stop_console_server(&root);
}

/// Issue 26: a workflow with `depends_on` whose first phase names `agent: codex` while the
/// run's agent is the built-in one: the REAL Codex CLI runs that phase (alone, in the
/// project's tree), its work is committed and counts as merged, and the built-in phase that
/// depends on it runs after it and sees its file.
#[test]
fn a_graph_phase_with_agent_codex_runs_codex_and_its_dependent_the_builtin_agent() {
    let (_repo, root) = project();
    std::fs::write(
        root.join(".context-pilot/workflows/graph.yaml"),
        "name: mixed\nphases:\n  - id: shell\n    depends_on: []\n    agent: codex\n    \
         prompt: \"PHASE-codex: add src/a.sh.\"\n  - id: check\n    depends_on: [shell]\n    \
         prompt: \"PHASE-builtin: check src/a.sh.\"\n",
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "graph workflow"]);
    let server = LlmServer::start().unwrap();
    // Answered by content: Codex adds src/a.sh, then says it is done (every later turn,
    // the stop gate's included); the built-in agent reads src/a.sh, then is done.
    server.answer_side_requests(|request| {
        let answered = inputs(request).iter().any(|item| {
            item["type"]
                .as_str()
                .is_some_and(|kind| kind.ends_with("call_output"))
        });
        if request.raw_body.contains("PHASE-codex") {
            return Some(if answered {
                responses::text_turn("Done.")
            } else {
                patch_turn("call_a", "src/a.sh", 3_000)
            });
        }
        if request.raw_body.contains("PHASE-builtin") {
            return Some(if request.raw_body.contains("\"tool_result\"") {
                cp_e2e::anthropic::text_turn("Done.")
            } else {
                cp_e2e::anthropic::tool_use_turn(&[(
                    "read_a",
                    "File_read",
                    r#"{"file_path": "src/a.sh"}"#,
                )])
            });
        }
        None
    });
    let codex_home = codex_home(&server, &root);
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(binary_path())
        .args(["run", ".context-pilot/workflows/graph.yaml", "--headless"])
        .current_dir(&root)
        .env("PATH", agents_path())
        .env("HOME", home.path())
        .env("CODEX_HOME", codex_home.path())
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env_remove("CP_WORKER")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let all = format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr),
        bodies(&server)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    let runs = root.join(".context-pilot/runs");
    let run = std::fs::read_dir(runs).unwrap().flatten().next().unwrap();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(run.path().join("context.json")).unwrap())
            .unwrap();
    let phases = &record["phase_runs"];
    assert_eq!(phases["shell"]["agent"], "codex", "{record:#}");
    assert_eq!(phases["check"]["agent"], "builtin", "{record:#}");
    for phase in ["shell", "check"] {
        assert_eq!(phases[phase]["status"], "merged", "{record:#}");
    }
    // Codex's file is committed, and the built-in phase read it after Codex ended.
    assert!(root.join("src/a.sh").exists(), "{all}");
    assert_eq!(git(&root, &["status", "--porcelain", "src"]), "", "{all}");
    let sides = server.side_requests();
    let first_builtin = sides
        .iter()
        .position(|r| r.raw_body.contains("PHASE-builtin"))
        .unwrap_or_else(|| panic!("the built-in phase never asked: {all}"));
    let last_codex = sides
        .iter()
        .rposition(|r| r.raw_body.contains("PHASE-codex"))
        .unwrap_or_else(|| panic!("Codex never asked: {all}"));
    assert!(last_codex < first_builtin, "{all}");
    assert!(
        sides.last().unwrap().raw_body.contains("echo hi"),
        "the built-in phase did not see Codex's file: {all}"
    );
    assert_no_agent_left(&root, "codex", None, GONE_LIMIT);
    crate::util::stop_console_server(&root);
}
