//! Running a workflow of phases at once from a test: the project it runs in (a git repository
//! with the workflow committed), `context-pilot run` headless or in the TUI with the built-in
//! agent talking to the scripted model server, and how long to wait for a durable fact.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, git, git_repo};

/// How long a test waits for a durable fact before failing (a busy machine is slow).
pub const PATIENCE: Duration = Duration::from_secs(120);

/// A git repository with `yaml` committed as `.context-pilot/workflows/graph.yaml`, beside a
/// `README.md` and a `shared.txt`.
pub fn prepare(yaml: &str) -> tempfile::TempDir {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(dir.join(".context-pilot/workflows/graph.yaml"), yaml).unwrap();
    std::fs::write(dir.join("README.md"), "# demo\n").unwrap();
    std::fs::write(dir.join("shared.txt"), "base\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    repo
}

/// `context-pilot run EXTRA… --headless` in `dir` against `server`, smart restarts off.
pub fn command(dir: &Path, server: &LlmServer, extra: &[&str]) -> Command {
    let mut cmd = command_with_restarts(dir, server, extra);
    cmd.args(["--max-restarts", "0"]);
    cmd
}

/// [`command`], smart restarts left on.
pub fn command_with_restarts(dir: &Path, server: &LlmServer, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_context-pilot"));
    cmd.arg("run")
        .args(extra)
        .arg("--headless")
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null());
    cmd
}

/// [`command`], run to its end.
pub fn run(dir: &Path, server: &LlmServer, extra: &[&str]) -> Output {
    command(dir, server, extra).output().unwrap()
}

/// `context-pilot ARGS…` in the TUI in `dir`, the built-in agent talking to `server`.
pub fn start_tui(dir: &Path, server: &LlmServer, args: &[&str]) -> TuiSession {
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    TuiSession::start(dir, args, &env).unwrap()
}

/// `context-pilot run` of the project's workflow in the TUI, smart restarts off, the built-in
/// agent talking to `server`.
pub fn start_run_tui(dir: &Path, server: &LlmServer) -> TuiSession {
    start_tui(
        dir,
        server,
        &[
            "run",
            ".context-pilot/workflows/graph.yaml",
            "--max-restarts",
            "0",
        ],
    )
}
