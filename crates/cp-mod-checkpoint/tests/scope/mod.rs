//! The gate's scope is the session's work (issue 36): what the session committed since it
//! began as well as what is uncommitted, whatever HEAD did meanwhile; a verdict belongs to the
//! tree it tested (issue 41, item 1); and what git lists that is not this repository's change
//! is never asked to be committed (issue 42, items 6 to 8).

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]

use std::path::Path;

use cp_base::{Project, TrustStore};
use cp_git::Head;
use cp_mod_checkpoint::{StopGateConfig, StopOutcome};

use crate::util::{Repo, Suite, is_pass, preset, reason, status_suite, stop_since};

fn app() -> Repo {
    let repo = Repo::with_commit(&[
        ("src/app/core.py", "def run():\n    return 1\n"),
        ("README.md", "# app\n"),
        ("status.txt", "green\n"),
    ]);
    repo.git(&["branch", "-M", "main"]);
    repo
}

/// The app, its suite (green while `status.txt` says `green`) and the preset configuration
/// running it.
struct Scene {
    repo: Repo,
    suite: Suite,
    config: StopGateConfig,
}

impl Scene {
    fn new() -> Self {
        let repo = app();
        let suite = Suite::new();
        let config = preset(&status_suite(&suite, &repo), 10);
        Self {
            repo,
            suite,
            config,
        }
    }

    /// What an agent does in one shell command: breaks `run` and commits it.
    fn break_and_commit(&self) {
        self.repo
            .write("src/app/core.py", "def run():\n    return 2\n");
        self.repo.write("status.txt", "red\n");
        self.repo.commit_all("change run");
    }

    /// A stop of `session`, begun at `base`, by a new gate (a new hook process).
    fn stop(&self, session: &str, base: &Head) -> StopOutcome {
        stop(&self.repo, &self.config, session, base)
    }
}

/// A stop of `session`, begun at `base`, by a new gate with `config`.
fn stop(repo: &Repo, config: &StopGateConfig, session: &str, base: &Head) -> StopOutcome {
    let checkpoint = repo.checkpoint(&repo.project(), config.clone());
    stop_since(&checkpoint, &repo.project(), session, Some(base))
}

/// What a person would compare to see that nothing was touched: `git status --porcelain=v2`
/// and `git ls-files -s`, apart from Context Pilot's own state under `.context-pilot/`, which
/// the gate writes.
fn repository_state(root: &Path) -> (String, String) {
    let run = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let status: Vec<String> = run(&["status", "--porcelain=v2", "-uall", "--ignored"])
        .lines()
        .filter(|line| !line.contains(".context-pilot/"))
        .map(str::to_owned)
        .collect();
    (status.join("\n"), run(&["ls-files", "-s"]))
}

#[test]
fn red_work_committed_in_the_session_is_held_with_the_failing_test() {
    let scene = Scene::new();
    let (repo, suite) = (&scene.repo, &scene.suite);
    let base = repo.head();
    // The agent breaks the function and commits it in one shell command, then says "Done.".
    scene.break_and_commit();

    let first = scene.stop("s", &base);
    let msg = reason(&first);
    assert_eq!(suite.runs(), 1);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("test_run"), "{msg}");
    assert!(
        msg.contains("Committed in this session, since ")
            && msg.contains("  modified src/app/core.py  [service code]"),
        "{msg}"
    );
    assert!(!msg.contains("Not committed"), "{msg}");
    assert!(!msg.contains("Then commit your changes"), "{msg}");
    assert_eq!(first.report.committed.len(), 2);
    assert!(first.report.files.is_empty());
    assert!(first.report.uncommitted_gated.is_empty());

    // Held until the tests pass; no commit is asked for what is committed.
    let second = scene.stop("s", &base);
    let msg = reason(&second);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(!msg.starts_with("Commit your changes"), "{msg}");
    assert_eq!(suite.runs(), 2);

    repo.write("status.txt", "green\n");
    repo.commit_all("fix");
    let fixed = scene.stop("s", &base);
    assert!(is_pass(&fixed) && fixed.notice.is_none(), "{fixed:?}");
    assert_eq!(suite.runs(), 3);
}

#[test]
fn green_work_committed_in_the_session_stops_at_once_after_one_run() {
    let scene = Scene::new();
    let (repo, suite) = (&scene.repo, &scene.suite);
    let base = repo.head();
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    repo.commit_all("change run");

    let outcome = scene.stop("s", &base);
    assert!(is_pass(&outcome), "{outcome:?}");
    assert_eq!(suite.runs(), 1, "the committed code was tested");
    assert!(outcome.report.tests[0].passed);
    assert_eq!(outcome.report.committed[0].file.path, "src/app/core.py");
    assert_eq!(outcome.report.since, base.commit);
    // Nothing changed since: the next stop neither runs nor holds anything.
    assert!(is_pass(&scene.stop("s", &base)));
    assert_eq!(suite.runs(), 1);
}

#[test]
fn the_message_lists_what_was_committed_and_the_commit_gate_asks_only_for_the_rest() {
    let scene = Scene::new();
    let repo = &scene.repo;
    let base = repo.head();
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    repo.commit_all("change run");
    repo.write("src/app/extra.py", "X = 1\n");

    let first = scene.stop("s", &base);
    let msg = reason(&first);
    assert!(msg.contains("Tests passed"), "{msg}");
    let committed = msg.find("Committed in this session").unwrap();
    let not = msg
        .find("Not committed (1):\n  new src/app/extra.py")
        .unwrap();
    assert!(committed < not, "{msg}");
    assert!(msg.contains("Then commit your changes."), "{msg}");

    let second = scene.stop("s", &base);
    let gate = reason(&second);
    assert!(
        gate.starts_with("Commit your changes before stopping. 1 file(s)"),
        "{gate}"
    );
    assert!(gate.contains("  src/app/extra.py\n"), "{gate}");
    assert!(!gate.contains("core.py"), "{gate}");
}

#[test]
fn work_committed_then_reverted_is_nothing_to_test() {
    let scene = Scene::new();
    let (repo, suite) = (&scene.repo, &scene.suite);
    let base = repo.head();
    scene.break_and_commit();
    repo.git(&["revert", "--no-edit", "HEAD"]);
    let outcome = scene.stop("s", &base);
    assert!(is_pass(&outcome), "{outcome:?}");
    assert!(outcome.report.committed.is_empty());
    assert_eq!(suite.runs(), 0);
}

#[test]
fn a_merge_in_the_session_is_tested_with_what_it_brought() {
    let scene = Scene::new();
    let repo = &scene.repo;
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("src/app/feature.py", "F = 1\n");
    repo.write("status.txt", "red\n");
    repo.commit_all("feature");
    repo.git(&["checkout", "-q", "main"]);
    let base = repo.head();
    repo.git(&["merge", "-q", "--no-ff", "--no-edit", "feature"]);
    let outcome = scene.stop("s", &base);
    let msg = reason(&outcome);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("new src/app/feature.py"), "{msg}");
}

#[test]
fn a_branch_switch_tests_only_what_was_committed_after_it() {
    let scene = Scene::new();
    let (repo, suite) = (&scene.repo, &scene.suite);
    // Someone else's red branch, ahead of main.
    repo.git(&["checkout", "-q", "-b", "theirs"]);
    repo.write("src/app/theirs.py", "T = 1\n");
    repo.write("status.txt", "red\n");
    repo.commit_all("theirs");
    repo.git(&["checkout", "-q", "main"]);
    let base = repo.head();

    // The agent only switches: nothing of its own to test, nothing to hold it for.
    repo.git(&["checkout", "-q", "theirs"]);
    let switched = scene.stop("s", &base);
    assert!(is_pass(&switched), "{switched:?}");
    assert_eq!(suite.runs(), 0);
    let note = switched.report.scope_note.unwrap();
    assert!(note.contains("branch theirs was checked out"), "{note}");

    // What it commits there is its work.
    repo.write("src/app/mine.py", "M = 1\n");
    repo.commit_all("mine");
    let mine = scene.stop("s2", &base);
    let msg = reason(&mine);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("new src/app/mine.py"), "{msg}");
    assert!(!msg.contains("theirs.py"), "{msg}");
    assert!(msg.contains("branch theirs was checked out"), "{msg}");
}

#[test]
fn a_rebase_or_reset_lists_how_head_differs_from_where_the_session_began() {
    let scene = Scene::new();
    let repo = &scene.repo;
    repo.write("src/app/core.py", "def run():\n    return 0\n");
    repo.commit_all("before the session");
    let base = repo.head();
    // The agent resets away a commit it did not make, leaving red code.
    repo.write("status.txt", "red\n");
    repo.git(&["add", "status.txt"]);
    repo.git(&["commit", "-qm", "status"]);
    repo.git(&["reset", "-q", "--hard", "HEAD~2"]);
    repo.write("status.txt", "red\n");
    repo.commit_all("red");
    let outcome = scene.stop("s", &base);
    let msg = reason(&outcome);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("no longer descends from"), "{msg}");
    assert!(msg.contains("modified src/app/core.py"), "{msg}");
}

#[test]
fn a_session_that_began_before_the_first_commit() {
    let repo = Repo::empty();
    let suite = Suite::new();
    let config = preset(&status_suite(&suite, &repo), 10);
    let base = repo.head();
    assert_eq!(base.commit, None);
    repo.write("src/app/core.py", "def run():\n    return 1\n");
    repo.write("status.txt", "red\n");
    repo.commit_all("first");
    let outcome = stop(&repo, &config, "s", &base);
    let msg = reason(&outcome);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("new src/app/core.py"), "{msg}");
    // Still unborn: nothing committed, the new files are uncommitted.
    let fresh = Repo::empty();
    let unborn = fresh.head();
    fresh.write("src/app/core.py", "x = 1\n");
    let config = preset(&Suite::new().passing(), 10);
    let outcome = stop(&fresh, &config, "s", &unborn);
    assert!(
        reason(&outcome).contains("Changed files (1):"),
        "{outcome:?}"
    );
}

/// Issue 41, item 1: red, then fixed, then the tests cannot run (an empty command, an
/// untrusted project): the old failure is never reported as the current result.
#[test]
fn an_old_failure_is_never_reported_when_the_tests_cannot_run() {
    let scene = Scene::new();
    let (repo, suite) = (&scene.repo, &scene.suite);
    repo.write("status.txt", "red\n");
    repo.commit_all("red");
    let base = repo.head();
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    let red = scene.stop("s1", &base);
    assert!(reason(&red).contains("Tests FAILED"), "{red:?}");

    // Fixed; a new session, and the test command is now empty.
    repo.write("status.txt", "green\n");
    repo.write("src/app/core.py", "def run():\n    return 3\n");
    let mut off = scene.config.clone();
    off.tests.as_mut().unwrap().command = Some(String::new());
    let outcome = stop(repo, &off, "s2", &base);
    let msg = reason(&outcome);
    assert!(!msg.contains("FAILED"), "{msg}");
    assert!(
        msg.contains("Tests: not run (tests are off: checkpoint.tests.command is empty"),
        "{msg}"
    );
    assert!(outcome.report.tests.is_empty(), "{outcome:?}");
    assert_eq!(suite.runs(), 1);

    // Red again, then fixed, then the project is not trusted with its configured command.
    repo.write("status.txt", "red\n");
    repo.write("src/app/core.py", "def run():\n    return 4\n");
    assert!(reason(&scene.stop("s3", &base)).contains("Tests FAILED"));
    std::fs::write(
        repo.root().join(".context-pilot/config.json"),
        serde_json::json!({"checkpoint": scene.config}).to_string(),
    )
    .unwrap();
    repo.write("status.txt", "green\n");
    repo.write("src/app/core.py", "def run():\n    return 5\n");
    let store = tempfile::tempdir().unwrap();
    let untrusted =
        Project::at(repo.root()).with_trust_store(TrustStore::at(store.path().join("trust.json")));
    assert!(!untrusted.is_trusted());
    let checkpoint = repo.checkpoint(&untrusted, scene.config.clone());
    let outcome = stop_since(&checkpoint, &untrusted, "s4", Some(&base));
    let msg = reason(&outcome);
    assert!(!msg.contains("FAILED"), "{msg}");
    assert!(
        msg.contains(
            "Tests: not run (configured test command not run: this project is not trusted"
        ),
        "{msg}"
    );
    assert_eq!(suite.runs(), 2);
}

/// Issue 42, items 6 to 8: nested repositories, worktrees and a submodule with only
/// untracked files inside are never the project's new files, and the gate changes nothing in
/// the repository.
#[test]
fn nested_repositories_worktrees_and_submodules_are_never_asked_to_be_committed() {
    let upstream = app();
    let repo = app();
    let suite = Suite::new();
    let config = StopGateConfig {
        max_blocks: 5,
        ..preset(&suite.passing(), 10)
    };
    repo.write("vendor/lib/x.py", "x = 1\n");
    repo.git(&["-C", "vendor/lib", "init", "-q"]);
    repo.git(&["worktree", "add", "-q", "wt"]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "agent-1",
        ".claude/worktrees/agent-1",
    ]);
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        upstream.root().to_str().unwrap(),
        "sub",
    ]);
    repo.git(&["commit", "-qm", "add sub"]);
    repo.write("sub/scratch.txt", "notes\n");
    let base = repo.head();
    let before = repository_state(&repo.root());

    let first = stop(&repo, &config, "s", &base);
    assert!(is_pass(&first), "{first:?}");
    assert!(first.report.files.is_empty(), "{:?}", first.report.files);
    let outside: Vec<String> = first
        .report
        .outside
        .iter()
        .map(cp_git::ChangedFile::describe)
        .collect();
    assert_eq!(
        outside,
        [
            "worktree .claude/worktrees/agent-1/",
            "submodule sub (untracked files inside)",
            "nested repository vendor/lib/",
            "worktree wt/",
        ]
    );
    assert_eq!(suite.runs(), 0);
    assert_eq!(
        repository_state(&repo.root()),
        before,
        "the gate changed the repository"
    );

    // With a real change beside them, only the real change is asked for.
    repo.write("src/app/core.py", "def run():\n    return 2\n");
    let msg = reason(&stop(&repo, &config, "s", &base)).to_owned();
    assert!(
        msg.contains("Not counted (not this repository's own files"),
        "{msg}"
    );
    let gate = reason(&stop(&repo, &config, "s", &base)).to_owned();
    assert!(
        gate.contains("1 file(s)") && gate.contains("src/app/core.py"),
        "{gate}"
    );
    assert!(
        !gate.contains("vendor") && !gate.contains("sub") && !gate.contains("wt"),
        "{gate}"
    );
}

/// Issue 42, item 8: a dotfiles repository at a home directory with
/// `status.showUntrackedFiles=no` lists no untracked file, and the gate touches nothing.
#[test]
fn show_untracked_files_no_is_honoured() {
    let repo = app();
    let suite = Suite::new();
    let config = preset(&suite.passing(), 10);
    repo.git(&["config", "status.showUntrackedFiles", "no"]);
    repo.write(".ssh/id_rsa", "-----BEGIN KEY-----\n");
    repo.write("Downloads/tax.pdf", "%PDF\n");
    let base = repo.head();
    let before = repository_state(&repo.root());
    let outcome = stop(&repo, &config, "s", &base);
    assert!(is_pass(&outcome), "{outcome:?}");
    assert!(outcome.report.files.is_empty());
    assert_eq!(repository_state(&repo.root()), before);
}
