//! `context-pilot models` against the scripted server's model list (issue 19).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use crate::util::context_pilot;
use cp_e2e::{ListedModel, LlmServer, TuiSession, anthropic, git_repo};
use serde_json::json;

fn models(root: &Path, server: &LlmServer, model: Option<&str>) -> (i32, String, String) {
    let mut cmd = context_pilot(root);
    cmd.arg("models")
        .env("CP_PROVIDER", "anthropic")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env_remove("CP_MODEL");
    if let Some(model) = model {
        cmd.env("CP_MODEL", model);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.set_models(
        vec![
            ListedModel::new("claude-opus-4-1-20250805", 1_754_352_000),
            ListedModel::new("claude-sonnet-4-5-20250929", 1_759_104_000)
                .with("max_input_tokens", json!(1_000_000)),
            ListedModel::new("claude-haiku-4-5-20251001", 1_759_276_800),
        ],
        2,
    );
    server
}

#[test]
fn models_lists_newest_first_and_marks_the_default_pick() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    let (code, out, err) = models(dir.path(), &server, None);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("3 models at Anthropic"), "{out}");
    assert!(lines[1].starts_with("  claude-haiku-4-5-20251001"), "{out}");
    assert!(
        lines[2].starts_with("* claude-sonnet-4-5-20250929  2025-09-29  window 1000000"),
        "{out}"
    );
    assert!(
        out.contains("in use: claude-sonnet-4-5-20250929 (context window 1000000 tokens)"),
        "{out}"
    );
}

#[test]
fn models_with_a_wrong_name_names_the_closest_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let server = server();
    let (code, out, err) = models(dir.path(), &server, Some("claude-opus-4-1-2025085"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("model `claude-opus-4-1-2025085` is not listed")
            && err.contains("closest: claude-opus-4-1-20250805"),
        "{err}"
    );
}

const WAIT: Duration = Duration::from_secs(60);

fn tui_env(url: &str) -> Vec<(&str, &str)> {
    vec![
        ("ANTHROPIC_BASE_URL", url),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
        ("CP_MODEL", ""),
    ]
}

#[test]
fn the_tui_uses_the_newest_listed_model_when_none_is_configured() {
    let server = server();
    server.push(anthropic::text_turn("Hello."));
    let repo = git_repo();
    let url = server.url();
    let mut tui = TuiSession::start_sized(repo.path(), &[], &tui_env(&url), 140, 30).unwrap();
    // The status bar shows the model in use; it stays on screen.
    tui.wait_for("claude-sonnet-4-5-20250929", WAIT).unwrap();
    tui.type_text("hi");
    tui.send(b"\r");
    tui.wait_turn_end(repo.path(), "Hello.", WAIT).unwrap();
    let requests = server.requests();
    assert_eq!(
        requests[0].body["model"],
        json!("claude-sonnet-4-5-20250929")
    );
    assert!(!server.model_requests().is_empty());
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn the_tui_warns_about_a_configured_model_that_is_not_listed() {
    let server = server();
    let repo = git_repo();
    let url = server.url();
    let mut env = tui_env(&url);
    env.retain(|(k, _)| *k != "CP_MODEL");
    env.push(("CP_MODEL", "claude-sonet-4-5"));
    let mut tui = TuiSession::start_sized(repo.path(), &[], &env, 140, 30).unwrap();
    // The conversation is empty at start, so the warning cannot scroll away.
    tui.wait_for("is not listed by Anthropic", WAIT).unwrap();
    tui.wait_for("claude-sonnet-4-5-20250929, claude-opus-4-1", WAIT)
        .unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}
