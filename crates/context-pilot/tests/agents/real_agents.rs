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
//! (`real_agents/claude_hooks.rs`): callbacks once per batch, a subagent in a worktree of its
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

// ---------------------------------------------------------------------------------------
// Claude Code

fn claude(root: &Path, home: &Path, server: &LlmServer) -> Output {
    claude_with(root, home, server, "Add src/new.sh.", &[])
}

/// `claude -p PROMPT` in `root` with a test `HOME`, against the scripted `server`, with `env`
/// added.
fn claude_with(
    root: &Path,
    home: &Path,
    server: &LlmServer,
    prompt: &str,
    env: &[(&str, &str)],
) -> Output {
    let mut command = Command::new(agent_bin("claude"));
    command
        .args([
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash",
        ])
        .current_dir(root)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("CONTEXT_PILOT_WORKER");
    for (key, value) in env {
        command.env(key, value);
    }
    run(command)
}

fn claude_server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(anthropic::side_reply);
    server
}

#[test]
fn claude_code_that_never_commits_stops_after_max_blocks_and_the_person_is_told() {
    let repo = project("claude");
    let root = canonical(repo.path());
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_01Write",
        "Write",
        &write,
    )]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(anthropic::text_turn(said));
    }

    let out = claude(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(root.join("src/new.sh").exists(), "the Write tool ran");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "one tool turn, then two blocked stops and the stop the limit lets through; side \
         requests: {:?}",
        server
            .side_requests()
            .iter()
            .map(|r| &r.path)
            .collect::<Vec<_>>()
    );
    assert!(requests[2].raw_body.contains("Stop gate: verify"));
    assert!(
        requests[3]
            .raw_body
            .contains("Commit your changes before stopping")
    );
    // The person (not the model) is told what is left, in Claude Code's own output.
    assert!(
        stdout.contains("the agent stopped with work left"),
        "no systemMessage in Claude Code's output:\n{stdout}"
    );
    assert!(stdout.contains("src/new.sh"), "{stdout}");
    let report = saved_report(&root);
    assert!(report["gave_up"].is_string(), "{report}");
    assert_eq!(server.pending_replies(), 0);
}

#[test]
fn claude_code_that_commits_ends_cleanly() {
    let repo = project("claude");
    let root = canonical(repo.path());
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_01Write",
        "Write",
        &write,
    )]));
    let commit = json!({"command": "git add -A && git commit -qm 'Add src/new.sh'",
        "description": "Commit the change"})
    .to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_02Bash",
        "Bash",
        &commit,
    )]));
    server.push(anthropic::text_turn("Committed and done."));

    let out = claude(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        server.requests().len(),
        3,
        "no block after the commit:\n{stdout}"
    );
    assert!(git(&root, &["log", "--format=%s"]).contains("Add src/new.sh"));
    assert!(!stdout.contains("stopped with work left"), "{stdout}");
    let report = saved_report(&root);
    assert!(report["gave_up"].is_null(), "{report}");
    assert!(report["uncommitted_gated"].as_array().unwrap().is_empty());
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

// Claude Code's batch, subagent and compaction hooks: in their own file.
#[path = "real_agents/claude_hooks.rs"]
mod claude_hooks;

/// Issue 36 items 2 and 3 end to end: Claude Code breaks a function and stops; the stop gate
/// runs the project's declared `make test`, which draws a cargo-style progress bar (erased
/// with `\r` and `ESC[K`) and then runs Python's unittest. What the model reads in its next
/// request is what a terminal would show: unittest's honest counts and no remnant of the bar.
#[test]
fn claude_code_gets_unittest_counts_and_no_progress_bar_remnant() {
    let repo = git_repo();
    let root = canonical(repo.path());
    std::fs::write(
        root.join("Makefile"),
        "test:\n\t@sh progress.sh\n\tpython3 -m unittest\n",
    )
    .unwrap();
    std::fs::write(
        root.join("progress.sh"),
        "printf '    Building [=====>    ] 2/3: regex-syntax, regex-syntax(test)'\n\
         printf '\\r\\033[K   Compiled calc\\n'\n",
    )
    .unwrap();
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        root.join("test_calc.py"),
        "import unittest\n\nimport calc\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(calc.add(0, 0), 0)\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "__pycache__/\n").unwrap();
    // One block, then the stop the limit lets through: the test reads the one verdict.
    std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
    std::fs::write(
        root.join(".context-pilot/config.json"),
        json!({"checkpoint": {"max_blocks": 1}}).to_string(),
    )
    .unwrap();
    let init = Command::new(binary_path())
        .args(["init", "claude"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(init.status.success(), "init claude: {init:?}");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);

    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    // Claude Code's Write needs a Read of an existing file first; its shell edits as well.
    let edit = json!({"command": "sed -i 's/return a + b/return a + b + (a == 1)/' calc.py",
        "description": "Change add"})
    .to_string();
    server.push(anthropic::tool_use_turn(&[("toolu_01Bash", "Bash", &edit)]));
    for said in ["Done.", "Still done."] {
        server.push(anthropic::text_turn(said));
    }
    let out = claude(&root, home.path(), &server);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "one tool turn, one blocked stop, the stop let through:\n{}\nreport: {}",
        text(&out.stdout),
        saved_report(&root)
    );
    // The block reason reaches the model as the next request's user content.
    let told = &requests[2].raw_body;
    assert!(told.contains("Stop gate: verify"), "{told}");
    assert!(told.contains("1 failed, 1 passed"), "{told}");
    assert!(told.contains("(unittest)"), "{told}");
    assert!(
        told.contains("failing: test_calc.TestCalc.test_add"),
        "{told}"
    );
    assert!(told.contains("Compiled calc"), "{told}");
    assert!(
        !told.contains("regex-syntax"),
        "a remnant of the progress bar: {told}"
    );
}

// ---------------------------------------------------------------------------------------
// Claude Code: the stop gate's scope is the session's work, committed or not (issue 36)

/// A committed Python project no one here wrote the tests of: `calc.py`, its unittest, and a
/// Makefile whose `test` target the gate detects; wired with `init claude`, the checkpoint
/// blocking once.
fn calc_project() -> tempfile::TempDir {
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
    let init = Command::new(binary_path())
        .args(["init", "claude"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(init.status.success(), "init claude: {init:?}");
    std::fs::write(root.join(".gitignore"), "__pycache__/\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "init"]);
    repo
}

/// The scripted model runs `command` with Claude Code's Bash tool.
fn bash_turn(id: &str, command: &str) -> cp_e2e::Reply {
    let args = json!({"command": command, "description": "Run it"}).to_string();
    anthropic::tool_use_turn(&[(id, "Bash", &args)])
}

/// Claude Code in `root` against a server that answers with `turns`, to a clean exit; the
/// server (for its request log) and Claude Code's stdout.
fn claude_scripted(root: &Path, turns: Vec<cp_e2e::Reply>) -> (LlmServer, String) {
    let home = tempfile::tempdir().unwrap();
    let server = claude_server();
    for turn in turns {
        server.push(turn);
    }
    let out = claude(root, home.path(), &server);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    (server, stdout)
}

#[test]
fn claude_code_that_commits_red_work_is_held_with_the_failing_test() {
    let repo = calc_project();
    let root = canonical(repo.path());
    // Breaks `add` and commits it in the same shell command, then says it is done.
    let (server, stdout) = claude_scripted(
        &root,
        vec![
            bash_turn(
                "toolu_01Bash",
                "sed -i 's/a + b/a - b/' calc.py && git commit -qam 'Simplify add'",
            ),
            anthropic::text_turn("Done."),
            anthropic::text_turn("I am done."),
        ],
    );
    assert!(
        git(&root, &["log", "--format=%s"]).contains("Simplify add"),
        "the commit ran"
    );
    let status = git(&root, &["status", "--porcelain"]);
    assert!(
        !status.contains("calc.py"),
        "the change was committed: {status}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "held once, then the limit:\n{}",
        bodies(&server)
    );
    let held = &requests[2].raw_body;
    assert!(held.contains("Tests FAILED"), "{held}");
    assert!(held.contains("test_add"), "{held}");
    assert!(held.contains("Committed in this session"), "{held}");
    assert!(held.contains("modified calc.py"), "{held}");
    assert!(!held.contains("Commit your changes"), "{held}");
    // The person is told the agent stopped with the tests red.
    assert!(
        stdout.contains("the agent stopped with work left"),
        "{stdout}"
    );
    let report = saved_report(&root);
    assert_eq!(
        report["committed"][0]["file"]["path"], "calc.py",
        "{report}"
    );
}

#[test]
fn claude_code_that_commits_green_work_stops_at_once() {
    let repo = calc_project();
    let root = canonical(repo.path());
    let (server, stdout) = claude_scripted(
        &root,
        vec![
            bash_turn(
                "toolu_01Bash",
                "sed -i 's/a + b/b + a/' calc.py && git commit -qam 'Add the other way round'",
            ),
            anthropic::text_turn("Done."),
        ],
    );
    assert_eq!(server.requests().len(), 2, "no block:\n{}", bodies(&server));
    assert!(!stdout.contains("stopped with work left"), "{stdout}");
    let report = saved_report(&root);
    assert_eq!(
        report["tests"][0]["passed"], true,
        "the commit was tested: {report}"
    );
    assert_eq!(report["tests"][0]["command"], "make test", "{report}");
    assert_eq!(
        report["committed"][0]["file"]["path"], "calc.py",
        "{report}"
    );
    assert!(report["message"].is_null(), "{report}");
}

#[test]
fn claude_code_committing_a_shell_edit_does_not_fire_its_callback_again() {
    let repo = calc_project();
    let root = canonical(repo.path());
    let runs = tempfile::NamedTempFile::new().unwrap();
    let create = json!({"action": "create", "name": "py-check", "pattern": ["*.py"],
        "script_content": format!(
            "echo \"$CP_CHANGED_FILES\" >> '{}'\necho \"py-check saw $CP_CHANGED_FILES\"",
            runs.path().display()
        ),
        "blocking": true, "timeout": 30});
    let made = Command::new(binary_path())
        .args(["tool", "Callback_upsert", &create.to_string()])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "callback"]);
    cp_e2e::trust(&root);
    let (server, _) = claude_scripted(
        &root,
        vec![
            bash_turn("toolu_01Bash", "sed -i 's/a + b/b + a/' calc.py"),
            bash_turn(
                "toolu_02Bash",
                "git add -A && git commit -qm 'Add the other way round'",
            ),
            anthropic::text_turn("Done."),
        ],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", bodies(&server));
    assert!(
        requests[1].raw_body.contains("py-check saw calc.py"),
        "the sed fired the callback:\n{}",
        bodies(&server)
    );
    let fired = std::fs::read_to_string(runs.path()).unwrap();
    assert_eq!(fired.lines().collect::<Vec<_>>(), ["calc.py"], "{fired}");
    let after_commit = requests[2].raw_body.matches("py-check saw").count();
    assert_eq!(
        after_commit, 1,
        "only the sed's result, not one for the commit"
    );
    if let Ok(client) = cp_mod_console::ConsoleClient::for_project(&root) {
        let _ = client.shutdown_server();
    }
}

// ---------------------------------------------------------------------------------------
// Gemini CLI

/// A test `HOME` for Gemini CLI: API-key auth, and `root` trusted.
fn gemini_home(root: &Path) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .unwrap();
    let mut trusted = serde_json::Map::new();
    trusted.insert(root.display().to_string(), json!("TRUST_FOLDER"));
    std::fs::write(
        dir.join("trustedFolders.json"),
        Value::Object(trusted).to_string(),
    )
    .unwrap();
    home
}

fn gemini_cli(root: &Path, home: &Path, server: &LlmServer) -> Output {
    let mut command = Command::new(agent_bin("gemini"));
    command
        .args(["-p", "Add src/new.sh.", "--yolo", "--output-format", "json"])
        .current_dir(root)
        .env("HOME", home)
        .env("GEMINI_API_KEY", "scripted")
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

fn gemini_server() -> LlmServer {
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(gemini::side_reply);
    server
}

#[test]
fn gemini_cli_that_never_commits_stops_after_max_blocks_and_the_person_is_told() {
    let repo = project("gemini");
    let root = canonical(repo.path());
    let home = gemini_home(&root);
    let server = gemini_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &write)]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(gemini::text_turn(said));
    }

    let out = gemini_cli(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        root.join("src/new.sh").exists(),
        "write_file ran:\n{stdout}\n{stderr}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "one tool turn, two blocked stops, the stop the limit lets through:\n{stdout}\n{stderr}"
    );
    assert!(requests[2].raw_body.contains("Stop gate: verify"));
    assert!(
        requests[3]
            .raw_body
            .contains("Commit your changes before stopping")
    );
    let all = format!("{stdout}\n{stderr}");
    assert!(
        all.contains("the agent stopped with work left"),
        "no systemMessage in Gemini CLI's output:\n{all}"
    );
    let report = saved_report(&root);
    assert!(report["gave_up"].is_string(), "{report}");
}

#[test]
fn gemini_cli_that_commits_ends_cleanly() {
    let repo = project("gemini");
    let root = canonical(repo.path());
    let home = gemini_home(&root);
    let server = gemini_server();
    let write = json!({"file_path": root.join("src/new.sh"), "content": "echo new\n"}).to_string();
    server.push(gemini::tool_call_turn(&[("write_file", &write)]));
    let commit = json!({"command": "git add -A && git commit -qm 'Add src/new.sh'",
        "description": "Commit the change"})
    .to_string();
    server.push(gemini::tool_call_turn(&[("run_shell_command", &commit)]));
    server.push(gemini::text_turn("Committed and done."));

    let out = gemini_cli(&root, home.path(), &server);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        server.requests().len(),
        3,
        "no block after the commit:\n{stdout}\n{stderr}"
    );
    assert!(git(&root, &["log", "--format=%s"]).contains("Add src/new.sh"));
    assert!(!stdout.contains("stopped with work left"), "{stdout}");
    let report = saved_report(&root);
    assert!(report["gave_up"].is_null(), "{report}");
}

// ---------------------------------------------------------------------------------------
// Codex CLI: the scripted server's Responses API, checked against the real binary.

/// A private `CODEX_HOME` whose provider is the scripted server (Responses API).
fn codex_home(server: &LlmServer) -> tempfile::TempDir {
    // Codex warns that it makes no helper links under a temporary directory; it needs none
    // here (the shell and apply_patch still work, as the test checks).
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}\"\n\
             env_key = \"CP_SCRIPTED_KEY\"\nwire_api = \"responses\"\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    home
}

#[test]
fn codex_cli_takes_the_scripted_responses_stream_apply_patch_and_shell_calls_included() {
    let repo = git_repo();
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    let home = codex_home(&server);
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_sed",
        "sed -i s/hello/HELLO/ notes.txt",
    )]));
    server.push(responses::text_turn("Edited notes.txt."));

    let mut command = Command::new(agent_bin("codex"));
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "Write notes.txt.",
        ])
        .current_dir(&root)
        .env("CODEX_HOME", home.path())
        .env("CP_SCRIPTED_KEY", "sk-scripted");
    let out = run(command);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "HELLO\n",
        "{stdout}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{stdout}\n{stderr}");
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    // Each call's output goes back in the next request, paired by call id.
    let inputs = |i: usize| -> Vec<Value> {
        let body: Value = serde_json::from_str(&requests[i].raw_body).unwrap();
        body["input"].as_array().unwrap().clone()
    };
    assert!(
        inputs(1).iter().any(
            |item| item["type"] == "custom_tool_call_output" && item["call_id"] == "call_patch"
        )
    );
    assert!(
        inputs(2)
            .iter()
            .any(|item| item["type"] == "function_call_output" && item["call_id"] == "call_sed")
    );
    // `codex exec --json` reports the three items.
    for kind in ["file_change", "command_execution", "agent_message"] {
        assert!(
            stdout.contains(&format!("\"type\":\"{kind}\"")),
            "{kind}:\n{stdout}"
        );
    }
}

// Codex CLI's subagent and compaction hooks: in their own file.
#[path = "real_agents/codex_hooks.rs"]
mod codex_hooks;

// ---------------------------------------------------------------------------------------
// Codex CLI wired with `context-pilot init codex`: its hooks and Context Pilot's MCP server.

/// [`codex_home`] with `root` trusted, so Codex reads the project's `.codex/config.toml`.
/// Codex starts MCP servers with a few environment variables only: the tests' trust store
/// (`XDG_CONFIG_HOME`) is passed to Context Pilot's explicitly, as the hooks inherit it.
fn trusting_codex_home(server: &LlmServer, root: &Path) -> tempfile::TempDir {
    let home = codex_home(server);
    let config = home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    write!(
        text,
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n\
         [mcp_servers.context-pilot.env]\nXDG_CONFIG_HOME = \"{}\"\n",
        root.display(),
        cp_e2e::config_home().display()
    )
    .unwrap();
    std::fs::write(config, text).unwrap();
    home
}

/// `codex exec --json PROMPT` in `root`. Hook trust is bypassed for this invocation
/// (`--dangerously-bypass-hook-trust`): what is tested is what the hooks do, and trusting them
/// for real means reviewing them in Codex's `/hooks` screen.
fn codex(root: &Path, home: &Path, prompt: &str) -> Output {
    codex_with(root, home, &[], prompt)
}

/// `codex exec --json ARGS PROMPT` in `root`, as [`codex`] runs it.
fn codex_with(root: &Path, home: &Path, args: &[&str], prompt: &str) -> Output {
    let mut command = Command::new(agent_bin("codex"));
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
        ])
        .args(args)
        .arg(prompt)
        .current_dir(root)
        .env("CODEX_HOME", home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

/// `codex exec --json PROMPT` in `root` as a person runs it: hook trust NOT bypassed, so
/// Codex runs only the hooks the person trusted in `home`'s `config.toml`.
fn codex_trusting_only_what_home_trusts(root: &Path, home: &Path, prompt: &str) -> Output {
    let mut command = Command::new(agent_bin("codex"));
    command
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            prompt,
        ])
        .current_dir(root)
        .env("CODEX_HOME", home)
        .env("CP_SCRIPTED_KEY", "sk-scripted")
        .env_remove("CONTEXT_PILOT_WORKER");
    run(command)
}

/// Every request body, for failure messages.
fn bodies(server: &LlmServer) -> String {
    let mut out = String::new();
    for (i, r) in server.requests().iter().enumerate() {
        writeln!(out, "--- request {i} {}\n{}", r.path, r.raw_body).unwrap();
    }
    out
}

#[test]
fn codex_init_twice_changes_nothing_the_second_time() {
    let repo = project("codex");
    let root = repo.path();
    let config = std::fs::read_to_string(root.join(".codex/config.toml")).unwrap();
    assert!(config.contains("[mcp_servers.context-pilot]"), "{config}");
    assert!(config.contains("hook codex-post-tool-use"), "{config}");
    assert!(config.contains("hook codex-stop"), "{config}");
    let again = Command::new(binary_path())
        .args(["init", "codex"])
        .current_dir(root)
        .output()
        .unwrap();
    let said = text(&again.stdout);
    assert!(again.status.success(), "{again:?}");
    assert!(said.contains("nothing to change"), "{said}");
    assert!(said.contains("trust_level = \"trusted\""), "{said}");
    assert!(said.contains("/hooks"), "{said}");
    assert_eq!(
        std::fs::read_to_string(root.join(".codex/config.toml")).unwrap(),
        config
    );
    assert_eq!(git(root, &["status", "--porcelain"]), "");
}

/// The scripted model's MCP call creating a blocking callback on `*.txt` that echoes the
/// changed files.
fn create_callback_call() -> responses::Item {
    callback_call("txt-check", "echo \"callback saw: $CP_CHANGED_FILES\"")
}

/// The MCP call creating the blocking callback `name` on `*.txt` running `script`.
fn callback_call(name: &str, script: &str) -> responses::Item {
    let create = json!({"action": "create", "name": name,
        "description": "check the changed files", "pattern": "*.txt",
        "script_content": script, "blocking": true, "timeout": 20})
    .to_string();
    responses::Item::mcp_call("call_cb", "mcp__context_pilot", "Callback_upsert", &create)
}

#[test]
fn codex_callbacks_fire_on_apply_patch_and_sed_and_a_model_that_never_commits_ends_after_max_blocks()
 {
    let repo = project("codex");
    let root = canonical(repo.path());
    cp_e2e::trust(&root);
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    server.push(responses::items_turn(&[create_callback_call()]));
    // A script beside the note: code the gate asks to commit (the callback itself is Context
    // Pilot's own config, and the note is docs: neither is).
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** Add File: src/run.sh\n+echo run\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_sed",
        "sed -i s/hello/HELLO/ notes.txt",
    )]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }

    let out = codex(&root, home.path(), "Write notes.txt.");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{all}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "HELLO\n"
    );
    let config = std::fs::read_to_string(root.join(".context-pilot/config.json")).unwrap();
    assert!(
        config.contains("txt-check"),
        "the MCP call made the callback: {config}"
    );
    // Measured on 0.169.0 and 0.171.0: MCP tools are deferred, not in the request's tools (the model finds
    // them with `tool_search`), yet a call naming the namespace `mcp__context_pilot` reaches
    // Context Pilot's server directly.
    let first: Value = serde_json::from_str(&server.requests()[0].raw_body).unwrap();
    let tools = first["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["type"] == "tool_search"), "{first}");
    assert!(
        !first["tools"].to_string().contains("Callback_upsert"),
        "{first}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        6,
        "callback, patch, sed, two blocked stops and the stop the limit lets through:\n{all}"
    );
    // The patch fired the callback, and its output reached the model's next request; the
    // `sed -i` through the shell fired it again.
    let saw = |i: usize| {
        requests[i]
            .raw_body
            .matches("callback saw: notes.txt")
            .count()
    };
    assert_eq!(saw(1), 0, "{all}");
    assert!(saw(2) >= 1, "after apply_patch:\n{all}");
    assert!(saw(3) > saw(2), "after sed -i:\n{all}");
    assert!(requests[4].raw_body.contains("Stop gate: verify"), "{all}");
    assert!(
        requests[5]
            .raw_body
            .contains("Commit your changes before stopping"),
        "{all}"
    );
    let report = saved_report(&root);
    assert!(report["gave_up"].is_string(), "{report}");
    assert_eq!(server.pending_replies(), 0);
}

#[test]
fn codex_that_commits_ends_cleanly() {
    let repo = project("codex");
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    let patch = "*** Begin Patch\n*** Add File: src/new.sh\n+echo new\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    server.push(responses::items_turn(&[responses::Item::shell(
        "call_commit",
        "git add -A && git commit -qm 'Add src/new.sh'",
    )]));
    server.push(responses::text_turn("Committed and done."));

    let out = codex(&root, home.path(), "Add src/new.sh.");
    let stdout = text(&out.stdout);
    let all = bodies(&server);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        server.requests().len(),
        3,
        "no block after the commit:\n{all}"
    );
    assert!(git(&root, &["log", "--format=%s"]).contains("Add src/new.sh"));
    let report = saved_report(&root);
    assert!(report["gave_up"].is_null(), "{report}");
    assert!(report["uncommitted_gated"].as_array().unwrap().is_empty());
}

#[test]
fn codex_gets_a_failing_callbacks_failure_and_keeps_the_patch_output() {
    let repo = project("codex");
    let root = canonical(repo.path());
    cp_e2e::trust(&root);
    let server = LlmServer::start().unwrap();
    let home = trusting_codex_home(&server, &root);
    server.push(responses::items_turn(&[callback_call(
        "txt-fail",
        "echo \"txt check failed: $CP_CHANGED_FILES\"; exit 3",
    )]));
    let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n";
    server.push(responses::items_turn(&[responses::Item::apply_patch(
        "call_patch",
        patch,
    )]));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }

    let out = codex(&root, home.path(), "Write notes.txt.");
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    let requests = server.requests();
    assert!(requests.len() >= 3, "{all}");
    let after_patch = &requests[2].raw_body;
    assert!(after_patch.contains("Callback 'txt-fail' FAILED"), "{all}");
    assert!(after_patch.contains("txt check failed: notes.txt"), "{all}");
    // The failure came as context: the patch's own output is still there.
    let body: Value = serde_json::from_str(after_patch).unwrap();
    assert!(
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["type"] == "custom_tool_call_output"
                && item["call_id"] == "call_patch"
                && item["output"].to_string().contains("notes.txt")),
        "{all}"
    );
}

#[test]
fn codex_runs_the_hooks_init_trust_in_codex_trusted_without_bypassing_hook_trust() {
    let repo = project("codex");
    let root = canonical(repo.path());
    let server = LlmServer::start().unwrap();
    // The project is trusted, its hooks are not yet: Codex skips them silently.
    let home = trusting_codex_home(&server, &root);
    let patch = |name: &str| {
        responses::items_turn(&[responses::Item::apply_patch(
            "call_patch",
            &format!("*** Begin Patch\n*** Add File: {name}\n+hello\n*** End Patch\n"),
        )])
    };
    server.push(patch("before.txt"));
    server.push(responses::text_turn("Done."));
    let out = codex_trusting_only_what_home_trusts(&root, home.path(), "Write before.txt.");
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    assert_eq!(
        server.requests().len(),
        2,
        "no stop gate without trust:\n{all}"
    );
    assert!(!all.contains("Stop gate"), "{all}");

    // The person asks init to trust our hooks in their Codex config.
    let init = Command::new(binary_path())
        .args(["init", "codex", "--trust-in-codex"])
        .current_dir(&root)
        .env("CODEX_HOME", home.path())
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(config.contains("[hooks.state."), "{config}");
    assert!(
        config.contains("model_provider = \"scripted\""),
        "kept: {config}"
    );

    server.push(patch("after.txt"));
    for said in ["Done.", "Everything is done.", "I am done."] {
        server.push(responses::text_turn(said));
    }
    let out = codex_trusting_only_what_home_trusts(&root, home.path(), "Write after.txt.");
    let all = bodies(&server);
    assert_eq!(out.status.code(), Some(0), "{}\n{all}", text(&out.stderr));
    // Our Stop hook, keyed by the project's `.codex/config.toml`, ran and blocked the stop.
    let requests = server.requests();
    assert!(requests.len() >= 5, "patch, a blocked stop, a stop:\n{all}");
    let blocked = &requests[4].raw_body;
    // Codex names the run `stop:<the handler's place among the hooks>:<its source>`.
    let run_id = blocked
        .split("hook_run_id=\\\"stop:")
        .nth(1)
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, source)| source);
    assert!(
        run_id.is_some_and(|source| source.starts_with(&format!(
            "{}/.codex/config.toml\\\">Stop gate",
            root.display()
        ))),
        "{all}"
    );
}
