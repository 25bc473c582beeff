//! End to end: `context-pilot run --headless` with auto-commit in a project whose git has no
//! identity (no `user.name` / `user.email` anywhere, no `GIT_AUTHOR_*` / `GIT_COMMITTER_*`)
//! says what to set before any agent starts, and with `restart.commit_as_context_pilot`
//! commits as Context Pilot.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use cp_e2e::{LlmServer, anthropic, git, git_repo};
use serde_json::{Value, json};

/// A committed project with a one-phase workflow and `restart` as its restart section; the
/// repository's own identity is removed afterwards.
fn project(restart: &Value) -> tempfile::TempDir {
    let repo = git_repo();
    let root = repo.path();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1, "tests": {"command": ""}}, "restart": restart})
            .to_string(),
    )
    .unwrap();
    std::fs::write(
        root.join(".context-pilot/workflows/wf.yaml"),
        "name: wf\nphases:\n  - id: build\n    prompt: \"Write notes.txt.\"\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "init"]);
    git(root, &["config", "--unset", "user.name"]);
    git(root, &["config", "--unset", "user.email"]);
    repo
}

/// `context-pilot run wf.yaml --headless` with a git that has no identity: a global config
/// that forbids guessing one from the host name, no system config, and none of the
/// environment variables that would give one.
fn run_without_identity(root: &Path, server: &LlmServer) -> Output {
    let home = tempfile::tempdir().unwrap();
    let global = home.path().join("gitconfig");
    std::fs::write(&global, "[user]\n\tuseConfigOnly = true\n").unwrap();
    Command::new(env!("CARGO_BIN_EXE_context-pilot"))
        .args(["run", ".context-pilot/workflows/wf.yaml", "--headless"])
        .current_dir(root)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("GIT_CONFIG_GLOBAL", &global)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("EMAIL")
        .env_remove("CP_WORKER")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn all(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_run_whose_git_has_no_identity_says_what_to_set_before_any_agent_starts() {
    let repo = project(&json!({}));
    let server = LlmServer::start().unwrap();
    server.push(anthropic::text_turn("Done."));
    let out = run_without_identity(repo.path(), &server);
    let all = all(&out);
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("auto-commit needs a git identity"), "{all}");
    assert!(
        all.contains("git config --global user.name")
            && all.contains("git config --global user.email"),
        "{all}"
    );
    assert!(all.contains("commit_as_context_pilot"), "{all}");
    // Said on one line, not git's paragraph.
    let line = all
        .lines()
        .find(|l| l.contains("auto-commit needs a git identity"))
        .unwrap();
    assert!(line.contains("user.email you@example.com"), "{line}");
    assert!(server.requests().is_empty(), "an agent started: {all}");
}

#[test]
fn with_commit_as_context_pilot_the_run_commits_as_context_pilot() {
    let repo = project(&json!({"commit_as_context_pilot": true}));
    let root = repo.path();
    let server = LlmServer::start().unwrap();
    let write = r#"{"file_path": "notes.txt", "content": "notes\n"}"#;
    server.push(anthropic::tool_use_turn(&[("w1", "File_write", write)]));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("Verified."));
    let out = run_without_identity(root, &server);
    let all = all(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(root.join("notes.txt").exists(), "{all}");
    let last = git(root, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"]);
    assert_eq!(
        last.trim(),
        "Context Pilot <context-pilot@localhost>|Context Pilot <context-pilot@localhost>|\
         context-pilot: phase build completed",
        "{all}"
    );
}
