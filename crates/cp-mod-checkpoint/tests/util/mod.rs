//! Shared helpers: real git repositories in temp dirs and fake test suites as shell scripts.

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]
#![allow(
    dead_code,
    reason = "shared by several test binaries; each uses a part of it"
)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use cp_base::{Project, WorkerId};
use cp_e2e::TempRepo;
use cp_git::Head;
use cp_mod_checkpoint::{
    ConsoleTestRunner, StopGate, StopGateConfig, StopOutcome, StopRule, TestConfig,
};
use cp_mod_console::{ClientConfig, ConsoleClient};
use cp_orchestrate::StopInput;

pub const RESTART: &str = "Restart the daemon: run `make restart`";
pub const SIGUSR2: &str = "Reload the TUI: send it SIGUSR2 (`pkill -USR2 -f app-tui`)";

/// The console server binary, built once per test process.
pub fn server_exe() -> PathBuf {
    cp_mod_console::server_exe_for_tests().unwrap()
}

/// A client of the test console server for the project at `root`.
pub fn console_client(root: &Path) -> ConsoleClient {
    let mut cfg = ClientConfig::new(root);
    cfg.server_exe = Some(server_exe());
    cfg.server_env
        .insert("CP_CONSOLE_KILL_GRACE_MS".into(), "300".into());
    cfg.server_env
        .insert("CP_CONSOLE_IDLE_TIMEOUT_MS".into(), "10000".into());
    ConsoleClient::new(cfg).unwrap()
}

/// A git repository in a temp dir. Console servers started through
/// [`Repo::checkpoint`] are shut down when it is dropped.
pub struct Repo {
    base: TempRepo,
    consoles: RefCell<Vec<ConsoleClient>>,
}

impl Drop for Repo {
    fn drop(&mut self) {
        for client in self.consoles.borrow().iter() {
            let _ = client.shutdown_server();
        }
    }
}

impl std::ops::Deref for Repo {
    type Target = TempRepo;

    fn deref(&self) -> &TempRepo {
        &self.base
    }
}

impl Repo {
    /// `git init` with an identity, and nothing committed.
    pub fn empty() -> Self {
        Self::around(TempRepo::empty())
    }

    /// A repository with `files` committed.
    pub fn with_commit(files: &[(&str, &str)]) -> Self {
        Self::around(TempRepo::with_commit(files))
    }

    fn around(base: TempRepo) -> Self {
        Self {
            base,
            consoles: RefCell::new(Vec::new()),
        }
    }

    /// Where HEAD is now, as a session beginning now records it.
    pub fn head(&self) -> Head {
        cp_git::Git { path_env: None }
            .head_state(&self.root())
            .unwrap()
    }

    pub fn project(&self) -> Project {
        Project::at(self.root())
    }

    /// The checkpoint for `config`, running tests as consoles of `project`'s
    /// console server (the test build), as `StopGate::for_project` does.
    pub fn checkpoint(&self, project: &Project, config: StopGateConfig) -> StopGate {
        let client = console_client(project.root());
        self.consoles.borrow_mut().push(client.clone());
        StopGate::new(config)
            .unwrap()
            .with_runner(Arc::new(ConsoleTestRunner::new(client)))
    }
}

/// A fake test suite: a script outside the repository that counts its runs and prints
/// runner-like output.
pub struct Suite {
    pub dir: tempfile::TempDir,
}

impl Suite {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes the script with `body` after a line that records the run; returns the command.
    pub fn script(&self, body: &str) -> String {
        let path = self.dir.path().join("suite.sh");
        let runs = self.dir.path().join("runs");
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho run >> '{}'\n{body}\n", runs.display()),
        )
        .unwrap();
        format!("sh '{}'", path.display())
    }

    /// pytest-like passing output.
    pub fn passing(&self) -> String {
        self.script("echo '.....'\necho '5 passed in 0.12s'\nexit 0")
    }

    /// pytest-like failing output with more than 30 lines.
    pub fn failing(&self) -> String {
        self.script(
            "i=1; while [ $i -le 40 ]; do echo \"noise line $i\"; i=$((i+1)); done\n\
             echo 'E   assert add(2, 2) == 5'\n\
             echo 'FAILED tests/unit/test_math.py::test_add - assert 4 == 5'\n\
             echo '==== 1 failed, 4 passed in 0.20s ===='\nexit 1",
        )
    }

    /// How many times the suite ran.
    pub fn runs(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("runs")).map_or(0, |s| s.lines().count())
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A suite that passes while `repo/status.txt` says `green` and fails otherwise
/// (pytest-like output naming `test_run`).
pub fn status_suite(suite: &Suite, repo: &Repo) -> String {
    suite.script(&format!(
        "if grep -q green '{}/status.txt'; then echo '3 passed in 0.01s'; exit 0; fi\n\
         echo 'FAILED tests/test_core.py::test_run - assert 1 == 2'\n\
         echo '1 failed, 2 passed in 0.01s'\nexit 1",
        repo.root().display()
    ))
}

/// A generic preset: service code → restart, TUI code → SIGUSR2,
/// tests gated, docs neither; any `.py` change runs `command`.
pub fn preset(command: &str, timeout_secs: u64) -> StopGateConfig {
    let rule =
        |name: &str, include: &[&str], exclude: &[&str], instruction: Option<&str>, gated| {
            StopRule {
                name: name.into(),
                include: include.iter().map(|s| (*s).to_owned()).collect(),
                exclude: exclude.iter().map(|s| (*s).to_owned()).collect(),
                instruction: instruction.map(str::to_owned),
                gated,
            }
        };
    StopGateConfig {
        rules: vec![
            rule(
                "service code",
                &["src/**/*.py"],
                &["src/tui/"],
                Some(RESTART),
                true,
            ),
            rule("TUI code", &["src/tui/"], &[], Some(SIGUSR2), true),
            rule("tests", &["tests/**/*.py"], &[], None, true),
            rule("config", &["/config.yml"], &[], Some(RESTART), true),
            rule("docs", &["*.md", "docs/", "todos/"], &[], None, false),
        ],
        tests: Some(TestConfig {
            include: vec!["*.py".into()],
            command: Some(command.into()),
            timeout_secs: Some(timeout_secs),
            hold_on_existing_failures: false,
        }),
        ..StopGateConfig::default()
    }
}

/// A stop of agent session `s1` of worker `w1`.
pub fn stop(checkpoint: &StopGate, project: &Project) -> StopOutcome {
    stop_in(checkpoint, project, "s1")
}

/// A stop of agent session `session` of worker `w1`, where the session's start is not known
/// (only uncommitted work is in scope).
pub fn stop_in(checkpoint: &StopGate, project: &Project, session: &str) -> StopOutcome {
    stop_since(checkpoint, project, session, None)
}

/// A stop of agent session `session` of worker `w1` that began with HEAD at `base`.
pub fn stop_since(
    checkpoint: &StopGate,
    project: &Project,
    session: &str,
    base: Option<&Head>,
) -> StopOutcome {
    checkpoint.evaluate(&StopInput {
        project: project.clone(),
        worker: WorkerId::new("w1").unwrap(),
        session: session.into(),
        gate_commits: true,
        base: base.cloned(),
    })
}

pub fn reason(outcome: &StopOutcome) -> &str {
    match &outcome.decision {
        cp_orchestrate::Decision::Block { reason } => reason,
        cp_orchestrate::Decision::Pass => panic!("expected a block, got a pass: {outcome:?}"),
    }
}

pub fn is_pass(outcome: &StopOutcome) -> bool {
    outcome.decision == cp_orchestrate::Decision::Pass
}

/// True when `pid` no longer runs (gone, or a zombie waiting for init to reap it).
pub fn process_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The safety limit of a wait on a fact that normally holds at once.
pub const SOON: std::time::Duration = std::time::Duration::from_secs(10);

pub fn path_without_git() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cp-no-git-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Processes found by a unique tag in their command line (`sleep 200.<tag>`), killed on drop
/// so a failing test leaves none behind.
pub struct Tagged(pub String);

impl Tagged {
    pub fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Self(format!("{}{nanos:09}", std::process::id()))
    }

    /// Live processes whose command line carries the tag.
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                !process_dead(pid) && String::from_utf8_lossy(&cmd).contains(&self.0)
            })
            .collect()
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}

// ---------------------------------------------------------------- real tools

pub use cp_e2e::pytest_wheels;

/// Creates `<root>/.venv` with pytest installed from the cached wheels. `None` (with a
/// message) when python3 or the wheels are missing.
pub fn make_venv(root: &Path) -> Option<()> {
    let wheels = pytest_wheels();
    if !require(
        wheels.is_some(),
        "pytest (wheels under target/pytest-wheels)",
    ) {
        return None;
    }
    let wheels = wheels?;
    let venv = Command::new("python3")
        .args(["-m", "venv", ".venv"])
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success());
    if !require(venv, "python3 with venv") {
        return None;
    }
    let installed = Command::new(root.join(".venv/bin/python"))
        .args(["-m", "pip", "install", "-q", "--no-index", "--find-links"])
        .arg(wheels)
        .arg("pytest")
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success());
    assert!(installed, "pip install pytest from {}", wheels.display());
    Some(())
}

/// Whether a tool a test needs is there. When it is not, the test says so and is skipped,
/// except under CI, where a missing tool fails the test: `scripts/test.sh` installs them.
pub fn require(present: bool, what: &str) -> bool {
    if present {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is missing; under CI that fails the test (scripts/test.sh installs it)"
    );
    eprintln!("{what} is missing: this check is skipped (it fails under CI)");
    false
}

/// Pinned npm tools (jest, vitest) installed once under `target/node-tools` (scripts/test.sh
/// installs them; a test installs them itself when they are missing). Returns their
/// `node_modules`.
pub fn node_tools() -> Option<&'static Path> {
    static TOOLS: OnceLock<Option<PathBuf>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/node-tools");
            let modules = dir.join("node_modules");
            let ready = |m: &Path| m.join(".bin/jest").exists() && m.join(".bin/vitest").exists();
            if !ready(&modules) {
                std::fs::create_dir_all(&dir).ok()?;
                std::fs::write(dir.join("package.json"), NODE_TOOLS_PACKAGE).ok()?;
                let ok = Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok || !ready(&modules) {
                    eprintln!("npm could not install {}", dir.display());
                    return None;
                }
            }
            std::fs::canonicalize(modules).ok()
        })
        .as_deref()
}

/// What `target/node-tools` holds; the same list is in scripts/test.sh.
pub const NODE_TOOLS_PACKAGE: &str = r#"{"name": "cp-node-tools", "private": true, "devDependencies": {"jest": "29.7.0", "vitest": "3.2.4"}}"#;

/// A directory holding a `python3` that runs `interpreter`, and `PATH` with it first. A
/// wrapper, not a symlink: a venv's interpreter finds its pyvenv.cfg beside the path it was
/// started by.
pub fn python3_running(interpreter: &Path) -> (tempfile::TempDir, std::ffi::OsString) {
    let bin = tempfile::tempdir().unwrap();
    let python3 = bin.path().join("python3");
    std::fs::write(
        &python3,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", interpreter.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &python3,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    (bin, path)
}

/// A fresh virtualenv without pytest, and `PATH` whose `python3` is its interpreter: a
/// machine whose Python has no test runner.
pub fn bare_python3() -> Option<(tempfile::TempDir, tempfile::TempDir, std::ffi::OsString)> {
    let env = tempfile::tempdir().unwrap();
    let made = Command::new("python3")
        .args(["-m", "venv", "env"])
        .current_dir(env.path())
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        return None;
    }
    let (bin, path) = python3_running(&env.path().join("env/bin/python"));
    Some((env, bin, path))
}

/// Whether the system has a user named `name`.
pub fn user_exists(name: &str) -> bool {
    Command::new("id")
        .args(["-u", name])
        .output()
        .is_ok_and(|o| o.status.success())
}
