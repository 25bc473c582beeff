//! Seed 000's success criteria and the git edge cases, against real repositories and real
//! test commands.

#[path = "../scope/mod.rs"]
mod scope;
#[path = "../warm/mod.rs"]
mod warm;

use std::path::PathBuf;
use std::sync::Arc;

use crate::util::{Repo, Suite, is_pass, preset, reason, stop, stop_in};
use cp_git::FileStatus;
use cp_mod_checkpoint::{
    ConsoleTestRunner, StopGate, StopGateConfig, StopPhase, TEST_SESSION_LABEL, TestExit,
    TestFramework,
};
use cp_mod_console::{ClientConfig, ConsoleClient, ConsoleStatus, SERVER_EXE_ENV};

fn committed_app() -> Repo {
    Repo::with_commit(&[
        ("src/app/core.py", "def run():\n    return 1\n"),
        ("src/tui/view.py", "def draw():\n    pass\n"),
        (
            "tests/unit/test_core.py",
            "def test_run():\n    assert True\n",
        ),
        ("README.md", "# app\n"),
        ("config.yml", "port: 1\n"),
    ])
}

// Criterion 1 and 2: Python service code changed → test results line, then the restart.
#[test]
fn python_change_runs_tests_and_asks_for_a_restart() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    repo.write("src/app/core.py", "def run():\n    return 2\n");

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert_eq!(suite.runs(), 1);
    assert!(
        msg.contains("Tests passed: 5 passed in 0.12s (pytest)"),
        "{msg}"
    );
    assert!(
        msg.contains("  modified src/app/core.py  [service code]"),
        "{msg}"
    );
    assert!(msg.contains(crate::util::RESTART), "{msg}");
    assert!(!msg.contains("SIGUSR2"), "{msg}");
    // The message's order: tests, files, instructions.
    let t = msg.find("Tests passed").unwrap();
    let f = msg.find("Changed files").unwrap();
    let i = msg.find(crate::util::RESTART).unwrap();
    assert!(t < f && f < i, "{msg}");

    let tests = outcome.report.tests.first().unwrap();
    assert!(tests.passed);
    assert_eq!(tests.exit, Some(TestExit::Code { code: 0 }));
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.framework, TestFramework::Pytest);
    assert_eq!(summary.passed, Some(5));
    assert!(outcome.report.code_changed);
    assert_eq!(outcome.report.instructions, [crate::util::RESTART]);
    assert_eq!(outcome.report.categories[0].name, "service code");
    assert_eq!(outcome.report.categories[0].files, ["src/app/core.py"]);
}

// Criterion 3: TUI code → SIGUSR2, and instructions shared by categories are given once.
#[test]
fn tui_change_asks_for_sigusr2_and_instructions_are_deduplicated() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    repo.write("src/tui/view.py", "def draw():\n    return 'new'\n");
    repo.write("config.yml", "port: 2\n");
    repo.write("src/app/core.py", "def run():\n    return 3\n");

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert!(msg.contains(crate::util::SIGUSR2), "{msg}");
    assert_eq!(msg.matches(crate::util::RESTART).count(), 1, "{msg}");
    assert_eq!(
        outcome.report.instructions,
        [crate::util::RESTART, crate::util::SIGUSR2]
    );
}

// Criterion 4: only docs changed → the capture-only message, no tests.
#[test]
fn docs_only_change_gives_the_capture_only_message() {
    let repo = committed_app();
    let suite = Suite::new();
    let config = preset(&suite.passing(), 10);
    let capture = config.capture_only_message.clone();
    let checkpoint = StopGate::new(config).unwrap();
    repo.write("README.md", "# app\n\nMore.\n");
    repo.write("todos/next.md", "- later\n");

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert!(msg.starts_with(&capture), "{msg}");
    assert!(
        msg.contains("README.md") && msg.contains("todos/next.md"),
        "{msg}"
    );
    assert!(!msg.contains("Tests"), "{msg}");
    assert_eq!(suite.runs(), 0);
    assert!(!outcome.report.code_changed);
    // Docs are never gated: the second stop passes.
    assert!(is_pass(&stop(&checkpoint, &repo.project())));
}

// Criterion 5: failing tests → FAILED, the output tail and "Fix failing tests".
#[test]
fn failing_tests_report_failed_with_the_output_tail() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.failing(), 10));
    repo.write(
        "tests/unit/test_core.py",
        "def test_run():\n    assert False\n",
    );

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert!(msg.contains("Tests FAILED (exit code 1)"), "{msg}");
    assert!(
        msg.contains("1 failed, 4 passed in 0.20s (pytest)"),
        "{msg}"
    );
    assert!(msg.contains("Fix failing tests before proceeding"), "{msg}");
    assert!(
        msg.contains("FAILED tests/unit/test_math.py::test_add"),
        "{msg}"
    );
    // Only the last 30 lines: the early noise is cut.
    assert!(msg.contains("noise line 40"), "{msg}");
    assert!(!msg.contains("noise line 5\n"), "{msg}");
    let tests = outcome.report.tests.first().unwrap();
    assert!(!tests.passed);
    assert_eq!(tests.tail.len(), 30);
}

// A hanging suite is stopped at the timeout, with its whole process group.
#[test]
fn hanging_tests_time_out_and_leave_no_orphans() {
    let repo = committed_app();
    let suite = Suite::new();
    let pid_file = suite.path("child.pid");
    let command = suite.script(&format!(
        "sleep 300 &\necho $! > '{}'\necho 'collecting ...'\nsleep 300",
        pid_file.display()
    ));
    let checkpoint = repo.checkpoint(&repo.project(), preset(&command, 1));
    repo.write("src/app/core.py", "def run():\n    while True: pass\n");

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    // Issue 41: a timeout is named as one, with the setting that raises the limit, and the
    // agent is not sent to fix tests that never finished.
    assert!(
        msg.contains("Tests TIMED OUT (after 1s; the whole run was stopped)"),
        "{msg}"
    );
    assert!(msg.contains("collecting ..."), "{msg}");
    assert!(
        msg.contains(r#"{"checkpoint": {"tests": {"timeout_secs": "#),
        "{msg}"
    );
    assert!(
        !msg.contains("Fix failing tests") && !msg.contains("FAILED"),
        "{msg}"
    );
    assert_eq!(
        outcome.report.tests.first().unwrap().exit,
        Some(TestExit::TimedOut { after_secs: 1 })
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    cp_e2e::eventually(
        &format!("the background child {pid} to end with the timeout"),
        crate::util::SOON,
        || crate::util::process_dead(pid),
    );
}

// A daemon the tests started with `setsid` (outside their process group) is ended at the
// timeout too.
#[test]
fn a_timeout_ends_a_daemon_the_tests_started_with_setsid() {
    let repo = committed_app();
    let suite = Suite::new();
    let tag = crate::util::Tagged::new();
    let command = suite.script(&format!(
        "(setsid bash -c 'sleep 200.{t}' &)\necho 'collecting ...'\nsleep 300.{t}",
        t = tag.0
    ));
    let checkpoint = repo.checkpoint(&repo.project(), preset(&command, 2));
    repo.write("src/app/core.py", "def run():\n    return 9\n");
    let outcome = stop(&checkpoint, &repo.project());
    assert_eq!(
        outcome.report.tests.first().unwrap().exit,
        Some(TestExit::TimedOut { after_secs: 2 })
    );
    cp_e2e::eventually_with(
        "the timed-out tests' processes to end",
        crate::util::SOON,
        || tag.pids().is_empty(),
        || format!("they survive: {:?}", tag.pids()),
    );
}

// Criterion 6 and 7: the commit gate on the second stop.
#[test]
fn second_stop_blocks_until_gated_changes_are_committed() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    repo.write("src/app/core.py", "def run():\n    return 4\n");
    repo.write("notes.md", "thoughts\n");

    let first = stop(&checkpoint, &repo.project());
    assert!(reason(&first).contains("Then commit your changes"));
    let second = stop(&checkpoint, &repo.project());
    let msg = reason(&second);
    assert!(
        msg.starts_with("Commit your changes before stopping"),
        "{msg}"
    );
    assert!(msg.contains("src/app/core.py"), "{msg}");
    assert!(!msg.contains("notes.md"), "docs are not gated: {msg}");
    assert_eq!(second.report.phase, StopPhase::Second);
    assert_eq!(second.report.uncommitted_gated, ["src/app/core.py"]);
    // The gate does not rerun the tests.
    assert_eq!(suite.runs(), 1);

    repo.git(&["add", "src/app/core.py"]);
    repo.git(&["commit", "-q", "-m", "core"]);
    let after_commit = stop(&checkpoint, &repo.project());
    assert!(is_pass(&after_commit), "{after_commit:?}");
}

#[test]
fn second_stop_with_a_clean_tree_passes() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    let outcome = stop(&checkpoint, &repo.project());
    assert!(is_pass(&outcome));
    assert!(outcome.report.files.is_empty());
}

#[test]
fn unchanged_turn_passes_at_once_and_a_new_edit_checkpoints_again() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    // A clean tree passes without running anything.
    assert!(is_pass(&stop(&checkpoint, &repo.project())));
    assert_eq!(suite.runs(), 0);

    repo.write("src/app/core.py", "def run():\n    return 5\n");
    reason(&stop(&checkpoint, &repo.project()));
    assert_eq!(suite.runs(), 1);

    // Same tree, next turn (a new session): pass at once, no test run.
    let again = stop_in(&checkpoint, &repo.project(), "s2");
    assert!(is_pass(&again), "{again:?}");
    assert!(again.report.unchanged);
    assert_eq!(suite.runs(), 1);

    // Editing the same file again is a change, even though the file list is the same.
    repo.write("src/app/core.py", "def run():\n    return 6\n");
    reason(&stop_in(&checkpoint, &repo.project(), "s2"));
    assert_eq!(suite.runs(), 2);

    // State is per worker: another worker still gets its checkpoint.
    let other = checkpoint.evaluate(&cp_orchestrate::StopInput {
        project: repo.project(),
        worker: cp_base::WorkerId::new("w2").unwrap(),
        session: "s1".into(),
        gate_commits: true,
        base: None,
    });
    assert!(!is_pass(&other));

    let last =
        StopGate::last_report(&repo.project(), &cp_base::WorkerId::new("w2").unwrap()).unwrap();
    assert_eq!(last.files.len(), 1);
    assert!(last.message.unwrap().contains("src/app/core.py"));
}

#[test]
fn repository_without_commits() {
    let repo = Repo::empty();
    repo.write("src/app/core.py", "x = 1\n");
    repo.write("README.md", "hi\n");
    repo.git(&["add", "README.md"]);
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));

    let first = stop(&checkpoint, &repo.project());
    let msg = reason(&first);
    assert!(msg.contains("  new src/app/core.py"), "{msg}");
    assert!(msg.contains("  new README.md"), "{msg}");
    assert!(msg.contains("Tests passed"), "{msg}");
    let gate = stop(&checkpoint, &repo.project());
    assert!(reason(&gate).contains("src/app/core.py"));
}

#[test]
fn project_in_a_subdirectory_reports_paths_from_the_repository_root() {
    let repo = committed_app();
    repo.write("services/api/keep.txt", "");
    repo.commit_all("api dir");
    repo.write("src/app/core.py", "def run():\n    return 7\n");
    repo.write("services/api/handler.py", "h = 1\n");
    let project = cp_base::Project::at(repo.root().join("services/api"));
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&project, preset(&suite.passing(), 10));

    let outcome = stop(&checkpoint, &project);
    let paths: Vec<&str> = outcome
        .report
        .files
        .iter()
        .map(|f| f.file.path.as_str())
        .collect();
    assert_eq!(paths, ["services/api/handler.py", "src/app/core.py"]);
    assert_eq!(
        outcome.report.repo_root.as_deref(),
        Some(repo.root().as_path())
    );
    assert!(
        project
            .state_dir(&cp_base::WorkerId::new("w1").unwrap())
            .join("checkpoint.json")
            .is_file()
    );
    // The state file lives inside the repository yet is not an agent change: the next
    // session's turn sees nothing new.
    assert!(is_pass(&stop_in(&checkpoint, &project, "s2")));
}

#[test]
fn renames_and_deletions_are_listed_and_gated() {
    let repo = committed_app();
    repo.write("src/app/extra.py", "e = 1\n");
    repo.commit_all("extra");
    repo.git(&["mv", "src/app/core.py", "src/app/engine.py"]);
    repo.remove("src/app/extra.py");
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));

    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert!(
        msg.contains("  renamed src/app/core.py → src/app/engine.py"),
        "{msg}"
    );
    assert!(msg.contains("  deleted src/app/extra.py"), "{msg}");
    let statuses: Vec<(FileStatus, Option<&str>)> = outcome
        .report
        .files
        .iter()
        .map(|f| (f.file.status, f.file.renamed_from.as_deref()))
        .collect();
    assert_eq!(
        statuses,
        [
            (FileStatus::Renamed, Some("src/app/core.py")),
            (FileStatus::Deleted, None)
        ]
    );
    assert_eq!(suite.runs(), 1, "deleting Python code still runs the tests");
    let gate = reason(&stop(&checkpoint, &repo.project())).to_owned();
    assert!(gate.contains("src/app/extra.py") && gate.contains("src/app/engine.py"));
}

#[test]
fn paths_with_spaces_and_unicode_are_exact() {
    let repo = committed_app();
    repo.write("src/app/my module é.py", "m = 1\n");
    repo.write("docs/notes \"quoted\" ü.md", "n\n");
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));

    let outcome = stop(&checkpoint, &repo.project());
    let paths: Vec<&str> = outcome
        .report
        .files
        .iter()
        .map(|f| f.file.path.as_str())
        .collect();
    assert_eq!(
        paths,
        ["docs/notes \"quoted\" ü.md", "src/app/my module é.py"]
    );
    assert_eq!(outcome.report.files[1].categories, ["service code"]);
    assert_eq!(outcome.report.uncommitted_gated, ["src/app/my module é.py"]);
}

#[test]
fn missing_git_fails_open() {
    let repo = committed_app();
    repo.write("src/app/core.py", "broken(\n");
    let suite = Suite::new();
    let checkpoint = StopGate::new(preset(&suite.passing(), 10))
        .unwrap()
        .with_path_env(crate::util::path_without_git());
    for session in ["s1", "s1", "s2"] {
        let outcome = stop_in(&checkpoint, &repo.project(), session);
        assert!(is_pass(&outcome));
        let why = outcome.report.skipped.unwrap();
        assert!(why.contains("git is not available"), "{why}");
    }
    assert_eq!(suite.runs(), 0);
}

#[test]
fn not_a_repository_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.py"), "x = 1\n").unwrap();
    let checkpoint = StopGate::new(StopGateConfig::default()).unwrap();
    let outcome = stop(&checkpoint, &cp_base::Project::at(dir.path()));
    assert!(is_pass(&outcome));
    let why = outcome.report.skipped.unwrap();
    assert!(why.contains("not inside a git work tree"), "{why}");
}

#[test]
fn without_configuration_code_is_gated_and_docs_are_not() {
    let repo = Repo::with_commit(&[("main.sh", "echo hi\n"), ("README.md", "x\n")]);
    let checkpoint = StopGate::new(StopGateConfig::default()).unwrap();
    repo.write("README.md", "y\n");
    let docs = stop(&checkpoint, &repo.project());
    assert!(reason(&docs).starts_with(&StopGateConfig::default().capture_only_message));
    assert!(is_pass(&stop(&checkpoint, &repo.project())));

    repo.write("main.sh", "echo bye\n");
    let code = stop(&checkpoint, &repo.project());
    let msg = reason(&code);
    // No manifest: nothing to detect, and the message says so.
    assert!(
        msg.contains("Tests: not run (no test command configured"),
        "{msg}"
    );
    assert!(msg.contains("  modified main.sh  [code]"), "{msg}");
    assert!(reason(&stop(&checkpoint, &repo.project())).contains("main.sh"));
}

#[test]
fn detected_cargo_test_runs_on_a_real_crate() {
    let repo = Repo::with_commit(&[
        (
            "Cargo.toml",
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n    #[test]\n    fn zero() { assert_eq!(super::add(0, 0), 0); }\n}\n",
        ),
        (".gitignore", "target/\n"),
    ]);
    repo.write(
        "src/lib.rs",
        "/// Adds.\npub fn add(a: u32, b: u32) -> u32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n    #[test]\n    fn zero() { assert_eq!(super::add(0, 0), 0); }\n}\n",
    );
    // In a console: cargo sees a terminal and colours its output.
    let checkpoint = repo.checkpoint(&repo.project(), StopGateConfig::default());
    let outcome = stop(&checkpoint, &repo.project());
    let tests = outcome.report.tests.first().unwrap();
    assert_eq!(tests.command, "cargo test --no-fail-fast");
    assert!(tests.passed, "{tests:?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.framework, TestFramework::Cargo);
    // Two unit tests plus zero doc-tests, summed over both result lines.
    assert_eq!((summary.passed, summary.failed), (Some(2), Some(0)));
    assert!(reason(&outcome).contains("Tests passed: 2 passed in"));
    // cargo wrote Cargo.lock during the run; that is not the agent's change.
    assert!(repo.root().join("Cargo.lock").exists());
    let next_turn = stop_in(&checkpoint, &repo.project(), "s2");
    assert!(
        is_pass(&next_turn) && next_turn.report.unchanged,
        "{next_turn:?}"
    );
}

#[test]
fn tests_disabled_by_an_empty_command() {
    let repo = committed_app();
    let mut config = preset("", 10);
    config.tests.as_mut().unwrap().command = Some(String::new());
    let checkpoint = StopGate::new(config).unwrap();
    repo.write("src/app/core.py", "z = 1\n");
    let outcome = stop(&checkpoint, &repo.project());
    assert!(outcome.report.tests.is_empty());
    let msg = reason(&outcome);
    assert!(
        msg.contains("Tests: not run (tests are off: checkpoint.tests.command is empty"),
        "{msg}"
    );
    assert!(!msg.contains("passed") && !msg.contains("FAILED"), "{msg}");
}

#[test]
fn invalid_config_is_rejected_with_a_clear_error() {
    let mut config = preset("true", 10);
    config.tests.as_mut().unwrap().timeout_secs = Some(0);
    let err = StopGate::new(config).unwrap_err().to_string();
    assert!(err.contains("timeout_secs"), "{err}");
}

// Issue 6: the test run is a console, visible to every client of the project's
// console server, with its whole output in the session's log.
#[test]
fn the_test_run_is_a_console_session_other_clients_can_see() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.failing(), 10));
    repo.write("src/app/core.py", "def run():\n    return 3\n");
    let outcome = stop(&checkpoint, &repo.project());
    assert!(reason(&outcome).contains("Tests FAILED (exit code 1)"));

    let sessions = crate::util::console_client(&repo.root()).list().unwrap();
    let runs: Vec<_> = sessions
        .iter()
        .filter(|s| s.label.as_deref() == Some(TEST_SESSION_LABEL))
        .collect();
    assert_eq!(runs.len(), 1, "{sessions:?}");
    assert_eq!(runs[0].status, ConsoleStatus::Exited { code: 1 });
    assert!(runs[0].command.contains("suite.sh"), "{:?}", runs[0]);
    let log = std::fs::read_to_string(
        crate::util::console_client(&repo.root())
            .paths()
            .log_file(runs[0].id),
    )
    .unwrap();
    // Every line is logged, including the early noise the message leaves out.
    assert!(log.contains("noise line 1\r\n"), "{log}");
    assert!(log.contains("1 failed, 4 passed"), "{log}");
}

// Esc during the checkpoint's test run (issue 17): the console runner kills the run's whole
// process group at once and reports it stopped, instead of waiting for the tests.
#[test]
fn a_cancelled_test_run_is_killed_and_reported_stopped() {
    use cp_mod_checkpoint::{TestRunner, TestSpec};
    let repo = committed_app();
    let root = repo.root();
    let runner = ConsoleTestRunner::new(crate::util::console_client(&root));
    let pid_file = root.join("tests.pid");
    let cancel = cp_base::CancelToken::new();
    let spec = TestSpec {
        command: format!(
            "echo $$ > {}.tmp && mv {0}.tmp {0}; sleep 60",
            pid_file.display()
        ),
        cwd: root.clone(),
        timeout: std::time::Duration::from_secs(120),
        env: Vec::new(),
        cancel: cancel.clone(),
        console_file: None,
    };
    let watcher = {
        let pid_file = pid_file.clone();
        std::thread::spawn(move || {
            cp_e2e::eventually(
                "the tests' pid file",
                std::time::Duration::from_secs(120),
                || pid_file.exists(),
            );
            cancel.cancel();
        })
    };
    let run = runner.run(&spec).unwrap();
    watcher.join().unwrap();
    match &run.exit {
        TestExit::Stopped { reason } => assert!(reason.contains("cancelled"), "{reason}"),
        other => panic!("not reported stopped: {other:?}"),
    }
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(
        stat.map_or(true, |s| s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))),
        "the test command still runs"
    );
}

// Without a console server the tests still run, directly, and the message says so.
#[test]
fn tests_run_directly_when_the_console_server_cannot_start() {
    let repo = committed_app();
    let suite = Suite::new();
    let mut cfg = ClientConfig::new(repo.root());
    cfg.server_exe = Some(PathBuf::from("/nonexistent/cp-console-server"));
    let runner = ConsoleTestRunner::new(ConsoleClient::new(cfg).unwrap());
    let checkpoint = StopGate::new(preset(&suite.passing(), 10))
        .unwrap()
        .with_runner(Arc::new(runner));
    repo.write("src/app/core.py", "def run():\n    return 4\n");
    let outcome = stop(&checkpoint, &repo.project());
    let msg = reason(&outcome);
    assert!(msg.contains("Tests passed: 5 passed"), "{msg}");
    assert!(
        msg.contains("ran outside the console server, which could not be started"),
        "{msg}"
    );
    assert!(msg.contains("/nonexistent/cp-console-server"), "{msg}");
    assert_eq!(suite.runs(), 1);
}

// `StopGate::for_project` (the host's agent loop and `context-pilot hook stop`) runs
// the tests in the project's console server. The server executable comes from the
// environment, so the check runs in a child process of this test binary.
/// A committed app whose `config.json` configures the test command, and a stop in a child
/// process whose user config directory is a fresh temp dir; `trusted` grants trust there
/// first. Returns the helper's stdout.
#[allow(clippy::unwrap_used, reason = "test setup fails loudly")]
fn stop_with_configured_tests(repo: &Repo, suite: &Suite, trusted: bool) -> String {
    std::fs::create_dir_all(repo.root().join(".context-pilot")).unwrap();
    std::fs::write(
        repo.root().join(".context-pilot/config.json"),
        serde_json::json!({"checkpoint": preset(&suite.passing(), 10)}).to_string(),
    )
    .unwrap();
    repo.commit_all("config");
    repo.write("src/app/core.py", "def run():\n    return 5\n");
    // Registers the project's server for shutdown when `repo` is dropped.
    let _ = repo.checkpoint(&repo.project(), StopGateConfig::default());
    let config_home = tempfile::tempdir().unwrap();
    if trusted {
        cp_base::Project::at(repo.root())
            .with_trust_store(cp_base::TrustStore::at(
                config_home.path().join("context-pilot/trust.json"),
            ))
            .grant_trust()
            .unwrap();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stop_gate::for_project_helper",
            "--ignored",
            "--nocapture",
        ])
        .env(SERVER_EXE_ENV, crate::util::server_exe())
        .env("CP_CONSOLE_KILL_GRACE_MS", "300")
        .env("CP_CHECKPOINT_HELPER_ROOT", repo.root())
        .env("XDG_CONFIG_HOME", config_home.path())
        .env("HOME", config_home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn for_project_runs_the_tests_in_the_console_server() {
    let repo = committed_app();
    let suite = Suite::new();
    let stdout = stop_with_configured_tests(&repo, &suite, true);
    assert!(stdout.contains("Tests passed: 5 passed"), "{stdout}");
    let sessions = crate::util::console_client(&repo.root()).list().unwrap();
    assert!(
        sessions
            .iter()
            .any(|s| s.label.as_deref() == Some(TEST_SESSION_LABEL)
                && s.status == ConsoleStatus::Exited { code: 0 }),
        "{sessions:?}"
    );
}

/// Issue 14 §1: a committed test command is someone else's code; it does not run until the
/// person trusts the project, and the message says how.
#[test]
fn configured_tests_do_not_run_in_an_untrusted_project() {
    let repo = committed_app();
    let suite = Suite::new();
    let stdout = stop_with_configured_tests(&repo, &suite, false);
    assert_eq!(suite.runs(), 0, "{stdout}");
    assert!(
        stdout.contains("not trusted") && stdout.contains("context-pilot trust"),
        "{stdout}"
    );
}

#[test]
#[ignore = "helper process for for_project_runs_the_tests_in_the_console_server"]
fn for_project_helper() {
    let root = std::env::var("CP_CHECKPOINT_HELPER_ROOT").unwrap();
    let project = cp_base::Project::at(&root);
    let checkpoint = StopGate::for_project(&project).unwrap();
    println!("{}", reason(&stop(&checkpoint, &project)));
}

// Issue 28: a turn that wrote 2,000 files gets a bounded list, in the first stop's message
// and in the commit gate's, not 2,000 lines; the report keeps every file for the panel.
#[test]
fn two_thousand_new_files_are_listed_as_fifty_and_counted_by_directory() {
    let repo = committed_app();
    let suite = Suite::new();
    let checkpoint = repo.checkpoint(&repo.project(), preset(&suite.passing(), 10));
    for i in 0..2000 {
        repo.write(&format!("src/app/gen/m{i:04}.py"), "X = 1\n");
    }
    repo.write("notes.md", "thoughts\n");

    let first = stop(&checkpoint, &repo.project());
    let msg = reason(&first);
    assert_eq!(
        first.report.files.len(),
        2001,
        "the report keeps every file"
    );
    let file_lines = msg
        .lines()
        .filter(|l| l.starts_with("  new ") || l.starts_with("  modified "))
        .count();
    assert_eq!(file_lines, 50, "{msg}");
    assert!(msg.contains("Changed files (2001):"), "{msg}");
    assert!(msg.contains("  … and 1,951 more, by directory:\n"), "{msg}");
    assert!(msg.contains("\n    src/app/gen/: 1,951 new\n"), "{msg}");
    assert!(
        msg.lines().count() < 80,
        "{} lines: {msg}",
        msg.lines().count()
    );

    let second = stop(&checkpoint, &repo.project());
    let gate = reason(&second);
    assert!(
        gate.starts_with("Commit your changes before stopping. 2000 file(s)"),
        "{gate}"
    );
    assert!(
        gate.contains("  … and 1,950 more, by directory:\n"),
        "{gate}"
    );
    assert!(gate.lines().count() < 60, "{gate}");
}

// Issue 37: a workflow run's merge queue asks the gate to test a whole tree outside any
// agent's turn: the same command with the same output reading, only when a changed file
// triggers the tests, and nothing of any session's state read or written.
#[test]
fn a_tree_is_tested_as_the_gate_would_test_it_outside_any_turn() {
    let repo = committed_app();
    let suite = Suite::new();
    let project = repo.project();
    let gate = repo.checkpoint(&project, preset(&suite.failing(), 10));
    let red = gate.test_tree(&project, &["src/app/core.py".to_owned()]);
    let [run] = red.runs.as_slice() else {
        panic!("expected one run: {red:?}");
    };
    assert!(!run.passed, "{run:?}");
    assert_eq!(
        run.summary.as_ref().and_then(|s| s.failed),
        Some(1),
        "{run:?}"
    );
    assert!(
        run.tail.iter().any(|l| l.contains("test_add")),
        "{:?}",
        run.tail
    );
    // A change no rule sends to the tests: nothing runs, and the note says why.
    let docs = gate.test_tree(&project, &["README.md".to_owned()]);
    assert!(docs.runs.is_empty(), "{docs:?}");
    assert_eq!(
        docs.note.as_deref(),
        Some("no changed file triggers the tests")
    );
    assert_eq!(suite.runs(), 1);
    // A tree git cannot read fails: it is never "not tested", which would let it land.
    let elsewhere = tempfile::tempdir().unwrap();
    let unreadable = gate.test_tree(
        &cp_base::Project::at(elsewhere.path()),
        &["src/app/core.py".to_owned()],
    );
    let [run] = unreadable.runs.as_slice() else {
        panic!("expected one failed run: {unreadable:?}");
    };
    assert!(!run.passed && run.error.is_some(), "{run:?}");
    let green = repo.checkpoint(&project, preset(&suite.passing(), 10));
    let passed = green.test_tree(&project, &["src/app/core.py".to_owned()]);
    assert!(passed.runs.iter().all(|r| r.passed) && passed.runs.len() == 1);
    // No worker's stop-gate state was written.
    assert!(
        !project
            .state_dir(&cp_base::WorkerId::default())
            .join(cp_mod_checkpoint::STATE_FILE)
            .exists()
    );
}
