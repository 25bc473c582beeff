//! End to end: `context-pilot run --headless` drives the sample workflow against the scripted
//! LLM server, with one smart restart and checkpoints answered from an answers file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use cp_e2e::{LlmServer, Turn, anthropic, git, git_repo};

const SAMPLE: &str = include_str!("../../../../.context-pilot/workflows/feature.yaml");

fn prepare_repo() -> tempfile::TempDir {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(dir.join(".context-pilot/workflows/feature.yaml"), SAMPLE).unwrap();
    std::fs::write(dir.join("README.md"), "# demo\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    repo
}

/// `context-pilot run <args>` in `dir` against `server`, the person's config in `config_home`.
fn headless(dir: &Path, server: &LlmServer, config_home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_context-pilot"));
    command
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", config_home)
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null());
    command
}

fn run(dir: &Path, server: &LlmServer, answers: &Path, extra: &[&str]) -> Output {
    let args = [
        ".context-pilot/workflows/feature.yaml",
        "--headless",
        "--answers",
    ];
    headless(dir, server, &cp_e2e::config_home(), &args)
        .arg(answers)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_sample_workflow_runs_headless_with_a_restart_and_an_answers_file() {
    let repo = prepare_repo();
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    // Phase "plan", session 1: writes the plan while the context is 75% full (threshold 50%):
    // the batch finishes, then the session stops for a restart.
    let plan =
        r#"{"file_path": "docs/features/the-feature/plan.md", "content": "1. add the stack\n"}"#;
    server.push(anthropic::reply(
        &Turn::tool_calls(&[("p1", "File_write", plan)]).with_usage(150_000, 0, 50),
    ));
    // Asked for a handoff, it records one.
    let handoff = r#"{"reason": "threshold_critical",
        "completed": [{"file": "docs/features/the-feature/plan.md", "status": "partial"}],
        "remaining": [{"file": "docs/features/the-feature/plan.md", "description": "add the risks section"}],
        "decisions": ["keep the stack in memory"], "files_modified": ["docs/features/the-feature/plan.md"]}"#;
    server.push(anthropic::tool_use_turn(&[(
        "h1",
        "Checkpoint_handoff",
        handoff,
    )]));
    server.push(anthropic::text_turn("Handoff recorded."));
    // Session 2 (after the restart) finishes the plan.
    server.push(anthropic::text_turn("Plan complete."));
    // Phase "implement": writes code; the checkpoint asks to verify once.
    let code = r#"{"file_path": "src/stack.txt", "content": "push pop\n"}"#;
    server.push(anthropic::tool_use_turn(&[("i1", "File_write", code)]));
    server.push(anthropic::text_turn("Implemented."));
    server.push(anthropic::text_turn("Verified."));
    // Phase "review".
    server.push(anthropic::text_turn("Reviewed, all good."));

    let answers = dir
        .parent()
        .unwrap()
        .join(format!("answers-{}.yaml", std::process::id()));
    std::fs::write(
        &answers,
        "- phase: plan\n  option: Continue\n- phase: review\n  option: Done\n",
    )
    .unwrap();
    let out = run(dir, &server, &answers, &["--context-threshold", "50"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = server.requests();
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}\nrequests: {}",
        requests.len()
    );

    // One restart, with the handoff and the original task in the new session's prompt.
    let log = git(dir, &["log", "--format=%s"]);
    assert!(
        log.contains("auto-commit before restart 1 of phase plan"),
        "{log}"
    );
    let restart_prompt = &requests[3].raw_body;
    assert!(
        restart_prompt.contains("add the risks section"),
        "handoff missing: {restart_prompt}"
    );
    assert!(
        restart_prompt.contains("Plan the feature"),
        "original prompt missing"
    );
    // Both checkpoints were answered from the file and recorded.
    let runs = dir.join(".context-pilot/runs");
    let run_dir = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let context = std::fs::read_to_string(run_dir.join("context.json")).unwrap();
    assert!(
        context.contains("\"phase\": \"plan\"") || context.contains("\"phase\":\"plan\""),
        "{context}"
    );
    assert!(context.contains("review"), "{context}");
    assert!(std::fs::read_to_string(dir.join("src/stack.txt")).is_ok());
    std::fs::remove_file(answers).ok();
}

#[test]
fn aborting_at_a_checkpoint_exits_with_code_2() {
    let repo = prepare_repo();
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    server.push(anthropic::text_turn("Nothing to plan."));
    let answers = dir
        .parent()
        .unwrap()
        .join(format!("abort-{}.yaml", std::process::id()));
    std::fs::write(&answers, "- phase: plan\n  option: Abort\n").unwrap();
    let out = run(dir, &server, &answers, &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_file(answers).ok();
}

/// A trusted repository with `src/build.sh` (`echo v1`) and the one-phase workflow
/// `one.yaml` committed, whose stop gate runs `command` (a configured test command runs only in
/// a trusted project) and blocks at most `max_blocks` times in a row.
fn one_phase_project(max_blocks: u32, command: &str) -> tempfile::TempDir {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/one.yaml"),
        "name: one\nphases:\n  - id: build\n    prompt: Build it.\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/build.sh"), "echo v1\n").unwrap();
    std::fs::write(
        dir.join(".context-pilot/config.json"),
        serde_json::json!({"checkpoint": {"max_blocks": max_blocks, "tests": {"command": command}}})
            .to_string(),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    cp_e2e::trust(dir);
    repo
}

/// Issue 15: in a headless run, red tests hold a phase's stop too (the run commits the work
/// itself, so there is no commit gate), and when `max_blocks` lets the agent stop anyway the
/// person reads what is left on stderr.
#[test]
fn headless_red_tests_rerun_and_the_limit_is_told_on_stderr() {
    let suite = tempfile::tempdir().unwrap();
    let runs = suite.path().join("runs");
    let command = format!(
        "echo run >> '{}'; echo 'FAILED tests/test_x.py::test_build - assert 1 == 2'; echo '==== 1 failed, 2 passed in 0.05s ===='; exit 1",
        runs.display()
    );
    let repo = one_phase_project(2, &command);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let write = r#"{"file_path": "src/build.sh", "content": "echo build\n"}"#;
    server.push(anthropic::tool_use_turn(&[("w1", "File_write", write)]));
    for said in ["Built.", "All tests pass.", "Done, really."] {
        server.push(anthropic::text_turn(said));
    }
    let args = [
        ".context-pilot/workflows/one.yaml",
        "--headless",
        "--no-auto-commit",
    ];
    let out = headless(dir, &server, &cp_e2e::config_home(), &args)
        .args(["--max-restarts", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(server.requests().len(), 4, "{stdout}\n{stderr}");
    let count = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(count, 3, "red tests run again on each stop:\n{stdout}");
    assert!(
        stderr.contains("the agent stopped with work left"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stderr.contains("Tests FAILED (exit code 1)"), "{stderr}");
}

/// Issue 36: a phase's stop gate checks what the phase committed since it began, not only
/// what is uncommitted: a model that commits red work with its shell is held by the tests.
#[test]
fn a_phase_that_commits_red_work_is_held_by_the_tests() {
    let command =
        "grep -q v1 src/build.sh || { echo 'FAILED tests/test_x.py::test_build'; exit 1; }";
    let repo = one_phase_project(1, command);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let commit = serde_json::json!({"command":
        "printf 'echo v2\\n' > src/build.sh && git add -A && git commit -qm 'build v2'"})
    .to_string();
    server.push(anthropic::tool_use_turn(&[(
        "b1",
        "console_easy_bash",
        &commit,
    )]));
    for said in ["Built.", "Done, really."] {
        server.push(anthropic::text_turn(said));
    }
    let args = [".context-pilot/workflows/one.yaml", "--headless"];
    let out = headless(dir, &server, &cp_e2e::config_home(), &args)
        .args(["--max-restarts", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{stdout}\n{stderr}");
    assert!(git(dir, &["log", "--format=%s"]).contains("build v2"));
    let held = &requests[2].raw_body;
    assert!(held.contains("Tests FAILED"), "{held}");
    assert!(held.contains("Committed in this session"), "{held}");
    assert!(held.contains("modified src/build.sh"), "{held}");
    assert!(
        stderr.contains("the agent stopped with work left"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// Issue 19: a headless run asks the model list before the first request, as the TUI does: with
/// no model configured the newest listed general-purpose model is used, and a configured name
/// the endpoint does not list is told on stderr with the closest names.
#[test]
fn headless_runs_check_the_model_list() {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/one.yaml"),
        "name: one\nphases:\n  - id: say\n    prompt: Say hi.\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    let server = LlmServer::start().unwrap();
    server.set_models(
        vec![
            cp_e2e::ListedModel::new("claude-sonnet-4-5-20250929", 1_759_104_000),
            cp_e2e::ListedModel::new("claude-sonnet-9-0-20261101", 1_793_000_000),
        ],
        10,
    );
    let run = |model: Option<&str>| {
        server.push(anthropic::text_turn("Hi."));
        let args = [
            ".context-pilot/workflows/one.yaml",
            "--headless",
            "--no-auto-commit",
        ];
        let mut cmd = headless(dir, &server, &cp_e2e::config_home(), &args);
        cmd.args(["--max-restarts", "0"]).env_remove("CP_MODEL");
        if let Some(model) = model {
            cmd.env("CP_MODEL", model);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(server.model_requests().len(), 1, "{stderr}");
    let body = server.requests().last().unwrap().body.clone();
    assert_eq!(body["model"], "claude-sonnet-9-0-20261101", "{stderr}");

    let out = run(Some("claude-sonet-9-0-20261101"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("model `claude-sonet-9-0-20261101` is not listed")
            && stderr.contains("closest: claude-sonnet-9-0-20261101"),
        "{stderr}"
    );
}

#[test]
fn a_malformed_notify_section_in_the_user_config_stops_the_run_before_it_starts() {
    let repo = prepare_repo();
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("context-pilot/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, r#"{"notify": {"comand": "ntfy publish me"}}"#).unwrap();
    let args = [".context-pilot/workflows/feature.yaml", "--headless"];
    let out = headless(dir, &server, home.path(), &args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: notify: unknown field `comand`",
            config.display()
        )),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "the run started: {stderr}");
    let runs = dir.join(".context-pilot/runs");
    assert!(
        !runs.exists() || std::fs::read_dir(&runs).unwrap().next().is_none(),
        "{stderr}"
    );
}
