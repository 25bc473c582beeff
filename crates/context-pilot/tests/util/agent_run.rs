//! `context-pilot …` driving the real agent CLIs (Claude Code, Gemini CLI) against the
//! scripted model server: the command (the agents first on `PATH`, the test's `HOME`, none of
//! the person's keys or endpoints), each agent's endpoint, and the run's end.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use cp_e2e::{LlmServer, binary_path};
use serde_json::{Value, json};

use super::agents::agents_path;

/// Generous: every session starts node, loads the CLI and runs hooks that run git.
pub const RUN_LIMIT: Duration = Duration::from_secs(300);

/// `context-pilot FIRST… [--agent AGENT] EXTRA…` in `root` with the agents on `PATH` and
/// `home` as `HOME`; its output is piped.
pub fn agent_command(
    root: &Path,
    home: &Path,
    first: &[&str],
    agent: &str,
    extra: &[&str],
) -> Command {
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
        .env("PATH", agents_path())
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

/// Claude Code (and the built-in agent) talk to `server`.
pub fn claude_endpoint<'a>(command: &'a mut Command, server: &LlmServer) -> &'a mut Command {
    command
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
}

/// Gemini CLI talks to `server`, its private home below the test's `HOME`.
pub fn gemini_endpoint<'a>(command: &'a mut Command, server: &LlmServer) -> &'a mut Command {
    command
        .env("GEMINI_API_KEY", "scripted")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
}

/// A window of 20,000 tokens (from config), so 19,000 is 95 % and Claude Code's own
/// auto-compaction (it assumes 200,000) stays out of the way.
pub fn claude_config() -> Value {
    json!({"context_window": 20_000, "model": "claude-sonnet-4-5", "stop_grace_secs": 20})
}

/// Waits for `child` to end (at most [`RUN_LIMIT`], then kills it and fails with its output).
pub fn wait_output(mut child: Child) -> Output {
    if cp_e2e::within(RUN_LIMIT, || child.try_wait().unwrap()).is_none() {
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!(
            "context-pilot took longer than {RUN_LIMIT:?}\nstdout:\n{}\nstderr:\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    child.wait_with_output().unwrap()
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A run's exit code and output, for failure messages.
pub fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}
