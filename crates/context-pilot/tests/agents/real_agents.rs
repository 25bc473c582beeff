//! End to end with the REAL agent CLIs from npm (issues 15 and 25): Claude Code, Gemini CLI and
//! Codex CLI, wired to Context Pilot with `context-pilot init claude|gemini|codex`, driven by
//! the scripted LLM server in each provider's wire format. The only stand-in is the remote
//! model.
//!
//! The CLIs are installed at pinned versions by `scripts/install-agents.sh` under
//! `target/agents/`; these tests fail (never skip) with that instruction when they are missing.
//!
//! For each CLI: a model that edits a file and never commits ends its session after
//! `max_blocks` gate blocks with exit status 0, and the person gets the `systemMessage`; a
//! model that commits (with the CLI's own shell tool) ends cleanly. For Claude Code also
//! (`real_agents/claude_code/hooks.rs`): callbacks once per batch, a subagent in a worktree of its
//! own, the stop gate at a subagent's end, and the handoff put back after it compacts. For Codex CLI also: the
//! hooks `init codex --trust-in-codex` trusted run without `--dangerously-bypass-hook-trust`,
//! and did not before.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use cp_e2e::{LlmServer, anthropic, binary_path, gemini, git, git_repo, responses};
use serde_json::{Value, json};

/// Generous: a CLI starts node, loads its bundle and runs hooks that run git.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The CLI `name` installed by `scripts/install-agents.sh`.
fn agent_bin(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = root.join("target/agents/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run scripts/install-agents.sh (it installs the pinned Claude Code, Codex CLI and \
         Gemini CLI under target/agents/ with npm)",
        bin.display()
    );
    bin
}

/// Runs `command` to completion, killing it after [`RUN_LIMIT`].
fn run(mut command: Command) -> Output {
    // The hooks the CLI runs read the tests' own trust store, never the user's ~/.config.
    command
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    if cp_e2e::within(RUN_LIMIT, || child.try_wait().unwrap()).is_none() {
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!(
            "{command:?} ran longer than {RUN_LIMIT:?}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    child.wait_with_output().unwrap()
}

/// A committed project wired to `agent` with `context-pilot init`, whose checkpoint allows
/// two blocks in a row and runs no tests.
fn project(agent: &str) -> tempfile::TempDir {
    let repo = git_repo();
    let root = repo.path();
    std::fs::write(root.join("app.sh"), "echo v1\n").unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 2, "tests": {"command": ""}}}).to_string(),
    )
    .unwrap();
    let init = Command::new(binary_path())
        .args(["init", agent])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(init.status.success(), "init {agent}: {init:?}");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "init"]);
    repo
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

fn saved_report(root: &Path) -> Value {
    let text =
        std::fs::read_to_string(root.join(".context-pilot/state/main/checkpoint.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["last_report"].clone()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A project of [`python_project`] and the file its callback appends to.
struct PythonProject {
    _repo: tempfile::TempDir,
    /// The project's canonical root.
    root: PathBuf,
    _runs_dir: tempfile::TempDir,
    runs: PathBuf,
}

impl PythonProject {
    /// The lines the callback `check` appended, one a run.
    fn runs(&self) -> Vec<String> {
        std::fs::read_to_string(&self.runs)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// `context-pilot tool NAME ARGS` in `root`, as an agent's MCP call would run it; must succeed.
fn cp_tool(root: &Path, name: &str, args: &Value) {
    let out = Command::new(binary_path())
        .args(["tool", name, &args.to_string()])
        .current_dir(root)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
}

/// A project wired to `agent` whose checkpoint allows one block in a row and runs
/// `python3 -m unittest` (a test of `calc.py`, green as committed), with the blocking
/// `once_per_batch` callback `check` on `pattern`, which prints what it saw and where, and
/// appends that line to a file outside the project ([`PythonProject::runs`]). Trusted, and
/// committed.
fn python_project(agent: &str, pattern: &str) -> PythonProject {
    let runs_dir = tempfile::tempdir().unwrap();
    let runs = runs_dir.path().join("runs.log");
    let repo = project(agent);
    let root = canonical(repo.path());
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "import unittest\n\nfrom calc import add\n\n\nclass Add(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n",
    )
    .unwrap();
    let config = root.join(".context-pilot/config.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    doc["checkpoint"] = json!({"max_blocks": 1, "tests": {"command": "python3 -m unittest -q"}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let script = format!(
        "line=\"check saw: $(printf '%s' \"$CP_CHANGED_FILES\" | tr '\\n' ' ') in $CP_PROJECT_ROOT\"\n\
         echo \"$line\"\necho \"$line\" >> {}\n",
        runs.display()
    );
    let create = json!({"action": "create", "name": "check", "description": "echo the batch",
        "pattern": pattern, "script_content": script, "blocking": true,
        "once_per_batch": true, "timeout": 30});
    cp_tool(&root, "Callback_upsert", &create);
    cp_e2e::trust(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "python project and its callback"]);
    PythonProject {
        _repo: repo,
        root,
        _runs_dir: runs_dir,
        runs,
    }
}

/// The calc project without any wiring, committed.
fn calc_project_unwired() -> tempfile::TempDir {
    let repo = git_repo();
    let root = repo.path();
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    \
         def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n",
    )
    .unwrap();
    std::fs::write(root.join("Makefile"), "test:\n\tpython3 -m unittest -q\n").unwrap();
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1}}).to_string(),
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "__pycache__/\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "project"]);
    repo
}

/// This checkout, whose `plugins/` and `.claude-plugin/` the plugin tests install from.
fn checkout() -> PathBuf {
    canonical(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// `PATH` with the tested binary's folder first: a plugin runs `context-pilot` from `PATH`.
fn path_with_binary() -> String {
    let bin_dir = binary_path().parent().unwrap().to_path_buf();
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Adds to the project at `root` the blocking callback `py-check` on `*.py`, which prints
/// `py-check saw <the changed files>` and appends them to `runs`; trusts and commits it.
fn add_py_callback(root: &Path, runs: &Path) {
    let create = json!({"action": "create", "name": "py-check", "pattern": ["*.py"],
        "script_content": format!(
            "echo \"$CP_CHANGED_FILES\" >> '{}'\necho \"py-check saw $CP_CHANGED_FILES\"",
            runs.display()
        ),
        "blocking": true, "timeout": 30});
    cp_tool(root, "Callback_upsert", &create);
    cp_e2e::trust(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "callback"]);
}

/// The calc project of [`calc_project_unwired`] with the `py-check` callback of
/// [`add_py_callback`]: the project, its canonical root, and the file the callback appends to.
fn calc_project_with_py_callback() -> (tempfile::TempDir, PathBuf, tempfile::NamedTempFile) {
    let repo = calc_project_unwired();
    let root = canonical(repo.path());
    let runs = tempfile::NamedTempFile::new().unwrap();
    add_py_callback(&root, runs.path());
    (repo, root, runs)
}

/// A setup step of the agent CLI `name` (adding a marketplace, installing a plugin or an
/// extension): `name ARGS`, its private home and the rest set by `configure`; must succeed.
/// What it said on stdout and stderr.
fn agent_setup(name: &str, args: &[&str], configure: impl FnOnce(&mut Command)) -> String {
    let mut command = Command::new(agent_bin(name));
    command.args(args);
    configure(&mut command);
    let out = run(command);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{name} {args:?}: {said}");
    said
}

/// What a plugin run in a project of [`calc_project_with_py_callback`] must show when the
/// model made one red `edit` of `calc.py` (a patch, a write) and then stopped twice, as after
/// `init`: `py-check` fired once, on `calc.py`; its output came with the edit's result; the
/// stop was held once with the failing test named (then the limit let it through), and the
/// saved report has the tests red.
fn assert_callback_ran_and_red_work_held(server: &LlmServer, root: &Path, runs: &Path, edit: &str) {
    let all = bodies(server);
    let fired = std::fs::read_to_string(runs).unwrap();
    assert_eq!(fired.lines().collect::<Vec<_>>(), ["calc.py"], "{all}");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "the {edit}, one held stop, the stop the limit lets through:\n{all}"
    );
    assert!(
        requests[1].raw_body.contains("py-check saw calc.py"),
        "the callback's output came with the {edit}'s result:\n{all}"
    );
    let held = &requests[2].raw_body;
    assert!(held.contains("Stop gate: verify"), "{all}");
    assert!(held.contains("Tests FAILED"), "{all}");
    assert!(held.contains("test_add"), "{all}");
    let report = saved_report(root);
    assert_eq!(report["tests"][0]["passed"], false, "{report}");
}

/// A new test module that fails.
const FAILING_TEST: &str = "import unittest\n\nfrom calc import add\n\n\nclass Sub(unittest.TestCase):\n    def test_sub(self):\n        self.assertEqual(add(2, 2), 5)\n";

/// Saves a handoff for `root` as the agent submits it with `Checkpoint_handoff`: its
/// remaining work says `HANDOFF-MARK restore addition`, its decision `keep calc.py free of
/// imports`.
fn save_handoff(root: &Path) {
    let handoff = json!({"reason": "task_complete",
        "remaining": [{"file": "calc.py", "description": "HANDOFF-MARK restore addition",
                       "priority": "high"}],
        "decisions": ["keep calc.py free of imports"]});
    cp_tool(root, "Checkpoint_handoff", &handoff);
}

/// Every request body, for failure messages.
fn bodies(server: &LlmServer) -> String {
    let mut out = String::new();
    for (i, r) in server.requests().iter().enumerate() {
        writeln!(out, "--- request {i} {}\n{}", r.path, r.raw_body).unwrap();
    }
    out
}

mod claude_code;
mod codex_cli;
mod gemini_cli;
