//! Claude Code: the gate's blocks and the person's message, a commit that ends cleanly, honest
//! unittest counts, and the gate's scope, which is the session's work committed or not. Its
//! batch, subagent and compaction hooks are in `claude_code/hooks.rs`.

use super::*;

mod hooks;

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
    let repo = calc_project_unwired();
    let root = repo.path();
    let init = Command::new(binary_path())
        .args(["init", "claude"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(init.status.success(), "init claude: {init:?}");
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

/// The Claude Code plugin, installed from this checkout's marketplace into the project
/// (`claude plugin marketplace add`, `claude plugin install … --scope project`) with
/// `context-pilot` on `PATH` and no `init`: red work is held at Stop with the failing test,
/// as after `init claude`.
#[test]
fn claude_code_with_the_plugin_holds_red_work_as_after_init() {
    let repo = calc_project_unwired();
    let root = canonical(repo.path());
    let home = tempfile::tempdir().unwrap();
    let checkout = checkout();
    for args in [
        vec!["plugin", "marketplace", "add", checkout.to_str().unwrap()],
        vec![
            "plugin",
            "install",
            "context-pilot@context-pilot",
            "--scope",
            "project",
        ],
    ] {
        agent_setup("claude", &args, |command| {
            command.current_dir(&root).env("HOME", home.path());
        });
    }
    let settings = std::fs::read_to_string(root.join(".claude/settings.json")).unwrap();
    assert!(
        !settings.contains("hook stop"),
        "no init wiring: {settings}"
    );
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "plugin"]);

    let server = claude_server();
    server.push(bash_turn(
        "toolu_01Bash",
        "sed -i 's/a + b/a - b/' calc.py && git commit -qam 'Simplify add'",
    ));
    server.push(anthropic::text_turn("Done."));
    server.push(anthropic::text_turn("I am done."));
    let path = path_with_binary();
    let out = claude_with(
        &root,
        home.path(),
        &server,
        "Add src/new.sh.",
        &[("PATH", path.as_str())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "held once:\n{}", bodies(&server));
    let held = &requests[2].raw_body;
    assert!(held.contains("Tests FAILED"), "{held}");
    assert!(held.contains("test_add"), "{held}");
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
