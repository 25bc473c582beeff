//! End-to-end test support for Context Pilot.
//!
//! - [`TuiSession`]: the real `context-pilot` binary in a real PTY, with its screen parsed by
//!   a VT100 emulator, so tests type keys and read what a person would see.
//! - [`binary_path`]: where `cargo test` put the binary.
//! - [`git_repo`]: a fresh git repository in a temp dir.
//! - [`saved_session`], [`wait_saved_session`] and [`TuiSession::wait_turn_end`]: durable facts
//!   to wait on (the session the TUI saves when a turn ends), never screen text that can scroll
//!   away before the test looks.
//! - [`eventually`], [`eventually_with`] (which adds what the test can tell at the timeout to
//!   the failure) and [`within`] (for a wait whose end is no failure of its own): the one
//!   polling loop of the workspace's tests, which every crate's wait helpers are built on.
//! - [`config_home`] and [`trust`]: the isolated per-user config (trust store) of the tests.
//! - [`TestHost`]: a host of the test's own (a network namespace running sshd as an
//!   ordinary user), reached with real OpenSSH, torn down even when the test is killed.
//! - [`LlmServer`]: the only stand-in these tests allow, for the remote LLM service: a real
//!   local HTTP server that speaks the Anthropic and OpenAI wire formats from a script.
//!
//! The scripted server and a repository are cheap to make:
//!
//! ```
//! let server = cp_e2e::LlmServer::start().unwrap();
//! server.push(cp_e2e::anthropic::text_turn("Done."));
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! assert!(server.requests().is_empty());
//! let repo = cp_e2e::git_repo();
//! assert!(repo.path().join(".git").is_dir());
//! ```
//!
//! A TUI turn against it (the binary must be built):
//!
//! ```no_run
//! use std::time::Duration;
//! use cp_e2e::{LlmServer, anthropic};
//! let server = LlmServer::start().unwrap();
//! server.push(anthropic::text_turn("Done."));
//! let repo = cp_e2e::git_repo();
//! let url = server.url();
//! let env = [("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "test")];
//! let mut tui = cp_e2e::TuiSession::start(repo.path(), &[], &env).unwrap();
//! tui.wait_for("Conversation", Duration::from_secs(10)).unwrap();
//! tui.send(b"\x03"); // Ctrl-C
//! tui.wait_exit(Duration::from_secs(5)).unwrap();
//! ```

mod eventually;
mod frames;
pub mod hosts;
pub mod llm_server;
mod pty;
mod repo;
mod saved;

pub use eventually::{
    eventually, eventually_some, eventually_some_with, eventually_with, within, within_every,
};
pub use hosts::TestHost;
pub use llm_server::{
    ListedModel, LlmServer, RecordedRequest, Reply, Turn, anthropic, gemini, openai, responses,
};
pub use pty::{TuiSession, binary_path};
pub use repo::{TempRepo, git, git_repo, pytest_wheels};
pub use saved::{
    DEFAULT_WORKER, last_assistant_message, saved_conversation, saved_session, session_path,
    wait_saved_session,
};

/// The user config directory every test's `context-pilot` gets as `XDG_CONFIG_HOME`
/// (`target/<profile>/cp-test-config`, or `CP_TEST_CONFIG_HOME` when set): trust records land there, never in the real
/// `~/.config`. Records are keyed by project path, and each test's project is a fresh temp
/// dir, so tests share it safely.
pub fn config_home() -> std::path::PathBuf {
    // The real-agent tests run as another user than the build when `scripts/test.sh` runs as
    // root; that user cannot write below target/ and names a directory of its own.
    if let Some(dir) = std::env::var_os("CP_TEST_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return dir.into();
    }
    binary_path()
        .parent()
        .map_or_else(std::env::temp_dir, std::path::Path::to_path_buf)
        .join("cp-test-config")
}

/// Runs `context-pilot trust` for `project` with the tests' [`config_home`], as a person
/// reviewing a cloned repository would.
///
/// # Panics
///
/// When the command cannot run or fails (with its output).
pub fn trust(project: &std::path::Path) {
    let out = std::process::Command::new(binary_path())
        .args(["trust", "--project"])
        .arg(project)
        .env("XDG_CONFIG_HOME", config_home())
        .output()
        .unwrap_or_else(|e| panic!("run context-pilot trust: {e}"));
    assert!(
        out.status.success(),
        "context-pilot trust failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
