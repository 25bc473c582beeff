//! The real agent CLIs in the end-to-end tests: where `scripts/install-agents.sh` put them,
//! and which of their processes are still running in a project.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// `target/agents/node_modules/.bin`, holding `claude` and `gemini` (fails the test with how
/// to install them when they are missing).
pub fn agents_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/agents/node_modules/.bin");
    assert!(
        bin.join("claude").exists() && bin.join("gemini").exists(),
        "{} is missing the agent CLIs: run scripts/install-agents.sh",
        bin.display()
    );
    bin
}

/// `PATH` with the agent CLIs first.
pub fn agents_path() -> String {
    format!(
        "{}:{}",
        agents_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Processes other than `except` running in `root` whose command line names `name` (zombies
/// are gone already: only their parent has not reaped them).
pub fn agent_processes(root: &Path, name: &str, except: Option<u32>) -> Vec<String> {
    processes(name, except, |cwd| cwd == root)
}

/// Processes whose command line names `name` running in `root` or below it (a phase's
/// worktree; a removed directory reads as "… (deleted)", still below `root`).
pub fn processes_under(root: &Path, name: &str) -> Vec<String> {
    processes(name, None, |cwd| cwd.starts_with(root))
}

/// Console servers (`context-pilot console-server --project P`) of a project at `dir` or
/// below it, wherever they run.
pub fn console_servers_under(dir: &Path) -> Vec<String> {
    let named = format!("console-server --project {}", dir.display());
    processes(&named, None, |_| true)
}

/// Processes other than `except`, not zombies, whose command line names `name` and whose
/// working directory passes `place`, as "pid: command line".
fn processes(name: &str, except: Option<u32>, place: impl Fn(&Path) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid.parse().ok() == except {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if !place(&cwd) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if cmdline.contains(name) && !zombie {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

/// Waits up to `limit` until no `name` process other than `except` runs in `root`.
pub fn assert_no_agent_left(root: &Path, name: &str, except: Option<u32>, limit: Duration) {
    cp_e2e::eventually_with(
        &format!("the {name} processes to end"),
        limit,
        || agent_processes(root, name, except).is_empty(),
        || format!("left behind: {:?}", agent_processes(root, name, except)),
    );
}

/// Waits up to `limit` until no `name` process runs in `root` or below it.
pub fn assert_none_under(root: &Path, name: &str, limit: Duration) {
    cp_e2e::eventually_with(
        &format!("the {name} processes in {} or below to end", root.display()),
        limit,
        || processes_under(root, name).is_empty(),
        || format!("left: {:?}", processes_under(root, name)),
    );
}

/// A committed, trusted project for the agent-CLI TUI tests: its checkpoint blocks at most
/// once and runs no tests, a blocking callback on `*.sh` prints the files it checked, and
/// `agent` is the config's agent section.
pub fn sh_checked_project(agent: &serde_json::Value) -> (tempfile::TempDir, PathBuf) {
    let repo = cp_e2e::git_repo();
    let root = super::canonical(repo.path());
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        serde_json::json!({
            "checkpoint": {"max_blocks": 1, "tests": {"command": ""}},
            "agent": agent,
        })
        .to_string(),
    )
    .unwrap();
    super::trust(&root);
    super::create_callback(
        &root,
        &serde_json::json!({
            "action": "create", "name": "sh-check", "pattern": ["*.sh"],
            "script_content": "echo \"checked $CP_CHANGED_FILES\"",
            "blocking": true, "timeout": 60
        }),
    );
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}
