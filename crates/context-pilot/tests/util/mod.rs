//! Shared helpers for the integration tests of the `context-pilot` binary: the real binary,
//! hook payload fixtures, callbacks created through the real CLI.

#![allow(
    dead_code,
    reason = "each test file uses a different subset of the helpers"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub mod agent_run;
pub mod agents;
pub mod long_session;
pub mod merge_queue;
pub mod phase_runs;
pub mod phases;
pub mod processes;
pub mod warm;

/// The `context-pilot` binary cargo built for these tests.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_context-pilot"))
}

/// A command running the binary in `dir` for the default worker, whatever the environment,
/// with the tests' isolated user config (trust store), never the real `~/.config`.
pub fn context_pilot(dir: &Path) -> Command {
    let mut cmd = Command::new(binary());
    cmd.current_dir(dir)
        .env_remove("CP_WORKER")
        .env("XDG_CONFIG_HOME", cp_e2e::config_home());
    cmd
}

/// `context-pilot trust` for `project`, in the tests' isolated user config.
pub fn trust(project: &Path) {
    cp_e2e::trust(project);
}

/// The canonical path of a temp dir (`/tmp` may be a symlink).
pub fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).expect("canonical temp dir")
}

/// A fixture payload with `{{ROOT}}` and `{{CWD}}` filled in.
pub fn fixture(name: &str, root: &Path, cwd: &Path) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .replace("{{ROOT}}", &root.display().to_string())
        .replace("{{CWD}}", &cwd.display().to_string())
}

/// What a hook process did.
#[derive(Debug)]
pub struct HookRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl HookRun {
    /// The stdout as JSON (panics with the output when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

/// Runs `context-pilot hook <event>` in `cwd` with `payload` on stdin.
pub fn hook(event: &str, cwd: &Path, payload: &str) -> HookRun {
    hook_with_env(event, cwd, payload, &[])
}

/// [`hook`] with extra environment, as the agent that runs the hook passes on.
pub fn hook_with_env(event: &str, cwd: &Path, payload: &str, env: &[(&str, &Path)]) -> HookRun {
    let mut child = context_pilot(cwd)
        .args(["hook", event])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes())
        .expect("write the payload");
    let out: Output = child.wait_with_output().expect("hook output");
    HookRun {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Creates a callback with the real `Callback_upsert` tool, for the default worker.
pub fn create_callback(root: &Path, args: &Value) {
    let out = context_pilot(root)
        .args(["tool", "Callback_upsert", &args.to_string()])
        .output()
        .expect("run Callback_upsert");
    assert!(
        out.status.success(),
        "Callback_upsert failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stops the project's console server, which the hooks started on demand.
pub fn stop_console_server(root: &Path) {
    if let Ok(client) = cp_mod_console::ConsoleClient::for_project(root) {
        let _ = client.shutdown_server();
    }
}

/// Fails naming the first of `expected` that `conversation` (a saved session's text) lacks.
pub fn assert_all_shown(conversation: &str, expected: &[&str]) {
    for shown in expected {
        assert!(
            conversation.contains(shown),
            "{shown:?} not in {conversation}"
        );
    }
}
