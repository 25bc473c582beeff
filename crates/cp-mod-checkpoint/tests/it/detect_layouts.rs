//! Issue 15: the detected test command on real project layouts, run for real with the real
//! tools where they are on this machine. Each layout: its tests pass → `Tests passed`; one
//! test fails → `Tests FAILED` naming that test; the suite cannot load → `Tests ERROR` with
//! the output tail, never `N failed, 0 passed`.
//!
//! Python fixtures get a `.venv` with pytest installed by pip from wheels cached under the
//! workspace's `target/pytest-wheels` (downloaded from `PyPI` on first use). Tools that are not
//! installed (go, uv, poetry) are checked for the detected command only, and the test says so.

use std::process::Command;

use crate::util::{Repo, make_venv, reason, require, stop_in};
use cp_base::Project;
use cp_mod_checkpoint::{StopGateConfig, StopOutcome, TestOutcome};

/// The test outcome of a stop that must have run the tests of one project.
fn tests_of(outcome: &StopOutcome) -> &TestOutcome {
    match outcome.report.tests.as_slice() {
        [one] => one,
        runs => panic!(
            "expected one test run, got {}: {:?}",
            runs.len(),
            outcome.report
        ),
    }
}

/// The run of `project` (a directory of a repository without a root project).
fn run_of<'a>(outcome: &'a StopOutcome, project: &str) -> &'a TestOutcome {
    outcome
        .report
        .tests
        .iter()
        .find(|t| t.project.as_deref() == Some(project))
        .unwrap_or_else(|| panic!("no test run for {project}: {:?}", outcome.report))
}

/// `PATH` with a directory holding an executable `name` (running `script`) in front.
#[expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]
fn path_with(name: &str, script: &str) -> (tempfile::TempDir, std::ffi::OsString) {
    let bin = tempfile::tempdir().unwrap();
    let file = bin.path().join(name);
    std::fs::write(&file, script).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.path().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    (bin, path)
}

/// A new agent session for each stop, so every check is a first stop that runs the tests.
fn fresh_session() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "layout-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Runs the checkpoint with detection (no configured command) on `project`.
fn check(repo: &Repo, project: &Project) -> StopOutcome {
    let checkpoint = repo.checkpoint(project, StopGateConfig::default());
    stop_in(&checkpoint, project, &fresh_session())
}

fn check_with_path(repo: &Repo, project: &Project, path: &std::ffi::OsStr) -> StopOutcome {
    let checkpoint = repo
        .checkpoint(project, StopGateConfig::default())
        .with_path_env(path);
    stop_in(&checkpoint, project, &fresh_session())
}

fn assert_passed(outcome: &StopOutcome, command: &str, count: &str) {
    let tests = tests_of(outcome);
    assert_eq!(tests.command, command);
    assert!(tests.passed, "{tests:#?}");
    let msg = reason(outcome);
    assert!(msg.contains(&format!("Tests passed: {count}")), "{msg}");
}

fn assert_failed(outcome: &StopOutcome, command: &str, test_name: &str) {
    let tests = tests_of(outcome);
    assert_eq!(tests.command, command);
    assert!(!tests.passed && !tests.is_error(), "{tests:#?}");
    let msg = reason(outcome);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(
        msg.contains(&format!("failing: {test_name}")),
        "the failing test is named: {msg}"
    );
    assert!(msg.contains("Fix failing tests"), "{msg}");
}

fn assert_error(outcome: &StopOutcome, command: &str, in_tail: &str) {
    let tests = tests_of(outcome);
    assert_eq!(tests.command, command);
    assert!(tests.is_error(), "{tests:#?}");
    let msg = reason(outcome);
    assert!(msg.contains("Tests ERROR"), "{msg}");
    assert!(!msg.contains("Tests FAILED"), "{msg}");
    assert!(
        !msg.contains("failed, 0 passed"),
        "never `N failed, 0 passed`: {msg}"
    );
    assert!(msg.contains(in_tail), "the output tail is shown: {msg}");
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

// ---------------------------------------------------------------- Python

const PY_IGNORE: &str = ".venv/\n__pycache__/\n.pytest_cache/\n";
const PY_TESTS_PASS: &str = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_more():\n    assert add(2, 2) == 4\n";
const PY_TESTS_FAIL: &str = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_more():\n    assert add(2, 2) == 5\n";

/// The three runs on a Python layout whose package lives at `package`.
fn python_pass_fail_error(repo: &Repo, package: &str, command: &str) {
    let project = repo.project();
    repo.write(
        &format!("{package}/__init__.py"),
        "def add(a, b):\n    return a + b\n",
    );
    assert_passed(&check(repo, &project), command, "2 passed");

    repo.write("tests/test_calc.py", PY_TESTS_FAIL);
    assert_failed(
        &check(repo, &project),
        command,
        "tests/test_calc.py::test_add_more",
    );

    repo.write(
        "tests/test_calc.py",
        &PY_TESTS_PASS.replace("from calc", "from calcx"),
    );
    assert_error(
        &check(repo, &project),
        command,
        "ModuleNotFoundError: No module named 'calcx'",
    );
}

// The layout of issue 15: `calc/` at the root, `tests/` beside it, pytest in `.venv`. Bare
// `pytest` failed there with `ModuleNotFoundError: No module named 'calc'`.
#[test]
fn python_flat_layout_with_venv() {
    let repo = Repo::with_commit(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        ("calc/__init__.py", "def add(a, b):\n    return a - b\n"),
        ("tests/test_calc.py", PY_TESTS_PASS),
        (".gitignore", PY_IGNORE),
    ]);
    if make_venv(&repo.root()).is_none() {
        return;
    }
    python_pass_fail_error(&repo, "calc", ".venv/bin/python -m pytest");
}

// `src/` layout: the package is importable through pytest's `pythonpath` setting.
#[test]
fn python_src_layout_with_venv() {
    let repo = Repo::with_commit(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\"src\"]\ntestpaths = [\"tests\"]\n",
        ),
        ("src/calc/__init__.py", "def add(a, b):\n    return a - b\n"),
        ("tests/test_calc.py", PY_TESTS_PASS),
        (".gitignore", PY_IGNORE),
    ]);
    if make_venv(&repo.root()).is_none() {
        return;
    }
    python_pass_fail_error(&repo, "src/calc", ".venv/bin/python -m pytest");
}

// Issue 23: no project file at all, only a `tests/` folder of pytest files and a `.venv`
// with pytest in it. People run `pytest` there; the gate ran nothing ("none detected").
#[test]
fn python_tests_folder_without_a_project_file() {
    let repo = Repo::with_commit(&[
        ("calc/__init__.py", "def add(a, b):\n    return a - b\n"),
        ("tests/test_calc.py", PY_TESTS_PASS),
        (".gitignore", PY_IGNORE),
    ]);
    if make_venv(&repo.root()).is_none() {
        return;
    }
    python_pass_fail_error(&repo, "calc", ".venv/bin/python -m pytest");
}

// The same layout without a venv: the `pytest` on PATH runs it, as people run it there.
#[test]
fn python_tests_folder_with_pytest_on_path() {
    let repo = Repo::with_commit(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        ("tests/test_calc.py", PY_TESTS_PASS),
    ]);
    repo.write("calc.py", "def add(a, b):\n    return a + b\n");
    // A stand-in that prints pytest's summary: the test checks what runs, and where.
    let (_bin, path) = path_with("pytest", "#!/bin/sh\nls tests\necho '2 passed in 0.01s'\n");
    let outcome = check_with_path(&repo, &repo.project(), &path);
    assert_passed(&outcome, "pytest", "2 passed");
}

// Plain `pyproject.toml` with pytest configured and no project environment: `python3 -m
// pytest`. This machine's python3 has no pytest, so `python3` on the test's PATH is a
// virtualenv's interpreter that has it, the way a developer's python3 would.
#[test]
fn python_plain_pyproject_uses_python3() {
    let repo = Repo::with_commit(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
        ),
        ("calc/__init__.py", "def add(a, b):\n    return a - b\n"),
        ("tests/test_calc.py", PY_TESTS_PASS),
        (".gitignore", PY_IGNORE),
    ]);
    let env = tempfile::tempdir().unwrap();
    if make_venv(env.path()).is_none() {
        return;
    }
    let (_bin, path) = crate::util::python3_running(&env.path().join(".venv/bin/python"));
    let project = repo.project();
    repo.write("calc/__init__.py", "def add(a, b):\n    return a + b\n");
    assert_passed(
        &check_with_path(&repo, &project, &path),
        "python3 -m pytest",
        "2 passed",
    );
    repo.write("tests/test_calc.py", PY_TESTS_FAIL);
    assert_failed(
        &check_with_path(&repo, &project, &path),
        "python3 -m pytest",
        "tests/test_calc.py::test_add_more",
    );
    // No test at all: pytest's "no tests ran" is never a pass, nor a failure.
    repo.remove("tests/test_calc.py");
    repo.write("tests/README.md", "tests go here\n");
    let none = check_with_path(&repo, &project, &path);
    let tests = tests_of(&none);
    assert_eq!(tests.verdict(), cp_mod_checkpoint::TestVerdict::NoTests);
    let msg = reason(&none);
    assert!(msg.contains("Tests ran NO TESTS (exit code 5)"), "{msg}");
    assert!(msg.contains("zero tests is not a pass"), "{msg}");
    assert!(
        !msg.contains("FAILED") && !msg.contains("Fix failing tests"),
        "{msg}"
    );
}

// uv and poetry: run for real only where installed; otherwise only the detected command is
// checked (with stand-in executables named uv and poetry on PATH).
#[test]
fn python_uv_and_poetry_commands() {
    for (lock, tool, command) in [
        ("uv.lock", "uv", "uv run python -m pytest"),
        ("poetry.lock", "poetry", "poetry run python -m pytest"),
    ] {
        let repo = Repo::with_commit(&[
            (
                "pyproject.toml",
                "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
            ),
            ("calc/__init__.py", "def add(a, b):\n    return a - b\n"),
            ("tests/test_calc.py", PY_TESTS_PASS),
            (lock, ""),
            (".gitignore", PY_IGNORE),
        ]);
        if on_path(tool) {
            eprintln!("{tool} is installed but its lock file here is a stub: detection only");
        } else {
            eprintln!("{tool} is not installed here: checking the detected command only");
        }
        let bin = tempfile::tempdir().unwrap();
        let fake = bin.path().join(tool);
        // A stand-in that prints pytest's summary, so the test checks the command line only.
        std::fs::write(&fake, "#!/bin/sh\necho \"$@\"\necho '2 passed in 0.01s'\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = std::env::join_paths(
            std::iter::once(bin.path().to_path_buf())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        repo.write("calc/__init__.py", "def add(a, b):\n    return a + b\n");
        let outcome = check_with_path(&repo, &repo.project(), &path);
        assert_passed(&outcome, command, "2 passed");
    }
}

// ---------------------------------------------------------------- Node

const NODE_TEST_PASS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc');\n\ntest('adds small numbers', () => {\n  assert.strictEqual(add(1, 2), 3);\n});\n\ntest('adds more', () => {\n  assert.strictEqual(add(2, 2), 4);\n});\n";

fn node_pass_fail_error(repo: &Repo, command: &str) {
    let project = repo.project();
    repo.write("calc.js", "exports.add = (a, b) => a + b;\n");
    assert_passed(&check(repo, &project), command, "2 passed");

    repo.write(
        "test/calc.test.js",
        &NODE_TEST_PASS.replace("add(2, 2), 4", "add(2, 2), 5"),
    );
    assert_failed(&check(repo, &project), command, "adds more");

    repo.write(
        "test/calc.test.js",
        &NODE_TEST_PASS.replace("../calc'", "../nope'"),
    );
    assert_error(&check(repo, &project), command, "MODULE_NOT_FOUND");
}

// `node --test` through npm, chosen by package-lock.json.
#[test]
fn node_test_runner_through_npm() {
    if !require(on_path("node") && on_path("npm"), "node and npm") {
        return;
    }
    let package = r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}"#;
    let lock = r#"{"name": "calc", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "calc", "version": "1.0.0"}}}"#;
    let repo = Repo::with_commit(&[
        ("package.json", package),
        ("package-lock.json", lock),
        ("calc.js", "exports.add = (a, b) => a - b;\n"),
        ("test/calc.test.js", NODE_TEST_PASS),
    ]);
    node_pass_fail_error(&repo, "npm test");
}

// npm's placeholder script is not a test suite; with nothing else, nothing is detected.
#[test]
fn node_placeholder_script_is_not_detected() {
    let repo = Repo::with_commit(&[
        (
            "package.json",
            r#"{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
        ),
        ("index.js", "module.exports = 1;\n"),
    ]);
    repo.write("index.js", "module.exports = 2;\n");
    let outcome = check(&repo, &repo.project());
    assert!(
        outcome.report.tests.is_empty(),
        "{:?}",
        outcome.report.tests
    );
    assert!(reason(&outcome).contains("none declared or detected"));
}

// ---------------------------------------------------------------- Rust

const RS_LIB_PASS: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_more() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n";

/// A workspace with one member, `crates/calc`; cargo builds into `target/` inside it.
fn rust_workspace() -> Repo {
    Repo::with_commit(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"crates/calc\"]\nresolver = \"2\"\n",
        ),
        (
            "crates/calc/Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "crates/calc/src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
        ),
        (".gitignore", "target/\nCargo.lock\n"),
    ])
}

#[test]
fn rust_workspace_root() {
    let repo = rust_workspace();
    let project = repo.project();
    let command = "cargo test --workspace --no-fail-fast";
    repo.write("crates/calc/src/lib.rs", RS_LIB_PASS);
    assert_passed(&check(&repo, &project), command, "2 passed");
    repo.write(
        "crates/calc/src/lib.rs",
        &RS_LIB_PASS.replace("add(2, 2), 4", "add(2, 2), 5"),
    );
    assert_failed(&check(&repo, &project), command, "tests::adds_more");
    repo.write("crates/calc/src/lib.rs", "pub fn add(a: i32\n");
    assert_error(&check(&repo, &project), command, "could not compile `calc`");
}

// The project is the member crate: cargo runs there and finds the workspace above it.
#[test]
fn rust_member_crate() {
    let repo = rust_workspace();
    let project = Project::at(repo.root().join("crates/calc"));
    repo.write("crates/calc/src/lib.rs", RS_LIB_PASS);
    let outcome = check(&repo, &project);
    assert_passed(&outcome, "cargo test --no-fail-fast", "2 passed");
    assert!(
        repo.root().join("target").is_dir(),
        "the workspace's target/"
    );
    repo.write(
        "crates/calc/src/lib.rs",
        &RS_LIB_PASS.replace("add(1, 2), 3", "add(1, 2), 0"),
    );
    assert_failed(
        &check(&repo, &project),
        "cargo test --no-fail-fast",
        "tests::adds",
    );
}

// ---------------------------------------------------------------- Go

#[test]
fn go_module() {
    let repo = Repo::with_commit(&[
        ("go.mod", "module example.com/calc\n\ngo 1.21\n"),
        (
            "calc.go",
            "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
        ),
        (
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n\nfunc TestAddMore(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n",
        ),
    ]);
    let project = repo.project();
    if !on_path("go") {
        eprintln!("go is not installed: checking the detected command only");
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(
            bin.path().join("go"),
            "#!/bin/sh\necho 'ok  \texample.com/calc\t0.002s'\n",
        )
        .unwrap();
        std::fs::set_permissions(
            bin.path().join("go"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let path = std::env::join_paths(
            std::iter::once(bin.path().to_path_buf())
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        repo.write(
            "calc.go",
            "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        );
        let outcome = check_with_path(&repo, &project, &path);
        assert_passed(&outcome, "go test ./...", "1 packages passed");
        return;
    }
    repo.write(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    assert_passed(
        &check(&repo, &project),
        "go test ./...",
        "1 packages passed",
    );
    repo.write(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int { return a + b - a/2 }\n",
    );
    assert_failed(&check(&repo, &project), "go test ./...", "TestAddMore");
    repo.write(
        "calc.go",
        "package calc\n\nfunc Add(a, b int) int { return nope }\n",
    );
    assert_error(&check(&repo, &project), "go test ./...", "undefined: nope");
}

// ---------------------------------------------------------------- Make

// A Makefile's test target, when no manifest says more: here it runs node's test runner.
#[test]
fn makefile_test_target() {
    if !require(on_path("make") && on_path("node"), "make and node") {
        return;
    }
    let repo = Repo::with_commit(&[
        (
            "Makefile",
            ".PHONY: build test\n\nbuild:\n\ttrue\n\ntest:\n\tnode --test\n",
        ),
        ("calc.js", "exports.add = (a, b) => a - b;\n"),
        ("test/calc.test.js", NODE_TEST_PASS),
    ]);
    node_pass_fail_error(&repo, "make test");
}

// A `make test` whose script prints no summary line any runner's parser knows: the gate says
// what it knows (FAILED, the exit code, no summary recognised, the tail), and does not guess
// at a build or collection error.
#[test]
fn make_test_without_a_known_summary() {
    if !require(on_path("make"), "make") {
        return;
    }
    let repo = Repo::with_commit(&[
        ("Makefile", "test:\n\tsh check.sh\n"),
        ("check.sh", "echo checking\necho 'all good'\n"),
        ("app.sh", "echo 1\n"),
    ]);
    let project = repo.project();
    repo.write("app.sh", "echo 2\n");
    let passed = check(&repo, &project);
    assert!(tests_of(&passed).passed, "{:?}", passed.report);
    let msg = reason(&passed);
    assert!(
        msg.contains("Tests passed: exit code 0 in") && msg.contains("`make test`"),
        "{msg}"
    );

    repo.write("check.sh", "echo checking\necho boom\nexit 1\n");
    let failed = check(&repo, &project);
    let tests = tests_of(&failed);
    assert!(!tests.passed && !tests.is_error(), "{tests:#?}");
    let msg = reason(&failed);
    // make exits 2 when a recipe fails.
    assert!(
        msg.contains(
            "Tests FAILED (exit code 2) — `make test`: no test summary line recognised in the \
             output"
        ),
        "{msg}"
    );
    assert!(
        msg.contains("    boom\n"),
        "the output tail is shown: {msg}"
    );
    assert!(!msg.contains("ERROR"), "{msg}");
    assert!(!msg.contains("before any test reported"), "{msg}");
    assert!(!msg.contains("collection"), "{msg}");
    assert!(msg.contains("Fix failing tests"), "{msg}");
}

// ---------------------------------------------------------------- Monorepo

const NODE_PACKAGE: &str =
    r#"{"name": "web", "version": "1.0.0", "scripts": {"test": "node --test"}}"#;

// Issue 23: a repository whose root is no project, with `backend/` (pyproject and its own
// .venv) and `web/` (package.json). Each changed file's nearest project is tested, in its
// directory with its environment, and reported on its own line.
#[test]
fn monorepo_tests_each_project_with_changes() {
    if !require(on_path("node") && on_path("npm"), "node and npm") {
        return;
    }
    let repo = Repo::with_commit(&[
        ("README.md", "# two projects\n"),
        (
            "backend/pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        (
            "backend/calc/__init__.py",
            "def add(a, b):\n    return a - b\n",
        ),
        ("backend/tests/test_calc.py", PY_TESTS_PASS),
        ("web/package.json", NODE_PACKAGE),
        ("web/calc.js", "exports.add = (a, b) => a + b;\n"),
        ("web/test/calc.test.js", NODE_TEST_PASS),
        (".gitignore", PY_IGNORE),
    ]);
    if make_venv(&repo.root().join("backend")).is_none() {
        return;
    }
    let project = repo.project();
    let venv_pytest = ".venv/bin/python -m pytest";

    // Only the backend changed: only its tests run, with its venv, in its directory.
    repo.write(
        "backend/calc/__init__.py",
        "def add(a, b):\n    return a + b\n",
    );
    let first = check(&repo, &project);
    assert_eq!(first.report.tests.len(), 1, "{:?}", first.report.tests);
    let backend = run_of(&first, "backend");
    assert_eq!(backend.command, venv_pytest);
    assert!(backend.passed, "{backend:#?}");
    let msg = reason(&first);
    assert!(msg.contains("Tests (backend) passed: 2 passed"), "{msg}");
    assert!(!msg.contains("none detected"), "{msg}");

    // Both changed, the web's tests fail: one line each.
    repo.write(
        "web/test/calc.test.js",
        &NODE_TEST_PASS.replace("add(2, 2), 4", "add(2, 2), 5"),
    );
    let session = fresh_session();
    let checkpoint = repo.checkpoint(&project, StopGateConfig::default());
    let both = stop_in(&checkpoint, &project, &session);
    assert_eq!(both.report.tests.len(), 2, "{:?}", both.report.tests);
    assert!(run_of(&both, "backend").passed);
    let web = run_of(&both, "web");
    assert_eq!(web.command, "npm test");
    assert!(!web.passed && !web.is_error(), "{web:#?}");
    let msg = reason(&both);
    assert!(msg.contains("Tests (backend) passed: 2 passed"), "{msg}");
    assert!(
        msg.contains("Tests (web) FAILED (exit code 1) — `npm test`"),
        "{msg}"
    );
    assert!(msg.contains("failing: adds more"), "{msg}");
    assert!(msg.contains("Fix failing tests"), "{msg}");

    // The next stop of the session: the red run is not forgotten, both run again.
    let again = stop_in(&checkpoint, &project, &session);
    assert_eq!(again.report.tests.len(), 2, "{:?}", again.report.tests);
    assert!(!again.report.tests_reused);
    assert!(reason(&again).contains("Tests (web) FAILED"));

    // Fixed and committed: the web, red last time, runs again although nothing of it is
    // among the changes any more, and the stop passes.
    repo.write("web/test/calc.test.js", NODE_TEST_PASS);
    repo.commit_all("fix");
    let fixed = stop_in(&checkpoint, &project, &session);
    assert!(run_of(&fixed, "web").passed, "{:?}", fixed.report.tests);
    assert!(crate::util::is_pass(&fixed), "{:?}", fixed.decision);
}

// The root is a project (a Cargo workspace): a member's change runs the root's tests once,
// as before; a Node package in a folder beside the members does not make it a monorepo.
#[test]
fn a_root_project_stays_one_project() {
    let repo = rust_workspace();
    repo.write("web/package.json", NODE_PACKAGE);
    repo.commit_all("web");
    repo.write("crates/calc/src/lib.rs", RS_LIB_PASS);
    repo.write("web/index.js", "module.exports = 1;\n");
    let outcome = check(&repo, &repo.project());
    let tests = tests_of(&outcome);
    assert_eq!(
        (tests.command.as_str(), tests.project.as_deref()),
        ("cargo test --workspace --no-fail-fast", None)
    );
    assert!(reason(&outcome).contains("Tests passed: 2 passed"));
}

// Issue 48: tox.ini's `[testenv]` run as tox would run its plain environment: `setenv`'s
// variables given to the run (python-dateutil sets `COVERAGE_FILE` and `PYTEST_ADDOPTS`
// there), `{env:NAME:default}` made from them (pluggy's `{env:_PLUGGY_TOX_CMD:pytest}`), and
// a line for another factor (`cov:`) left out. The test checks the variable from inside.
#[test]
fn tox_setenv_reaches_the_run_and_factor_lines_are_left_out() {
    let on_path = |p: &str| cp_base::find_program(p, std::env::var_os("PATH").as_deref()).is_some();
    if !require(on_path("python3"), "python3") {
        return;
    }
    let repo = Repo::with_commit(&[
        (
            "tox.ini",
            "[tox]\nenvlist = py3,cov\n\n[testenv]\nsetenv =\n    MARK_FILE={toxworkdir}/.mark.{envname}\n    cov: RUNNER=false\ncommands =\n    {env:RUNNER:python3} -m unittest {posargs:-q}\n    cov: python3 -c \"raise SystemExit(3)\"\n",
        ),
        (
            "test_env.py",
            "import os\nimport unittest\n\n\nclass Env(unittest.TestCase):\n    def test_mark_file(self):\n        self.assertEqual(os.environ.get(\"MARK_FILE\"), \".tox/.mark.py\")\n\n    def test_other(self):\n        self.assertTrue(True)\n",
        ),
        (".gitignore", "__pycache__/\n"),
    ]);
    repo.write(
        "test_env.py",
        &std::fs::read_to_string(repo.root().join("test_env.py"))
            .unwrap()
            .replace("True)", "1 == 1)"),
    );
    let project = repo.project();
    let gate = repo.checkpoint(&project, StopGateConfig::load(&project).unwrap());
    let outcome = stop_in(&gate, &project, "tox-setenv");
    let tests = tests_of(&outcome);
    assert_eq!(tests.command, "python3 -m unittest -q");
    assert!(
        tests
            .why
            .as_deref()
            .unwrap_or_default()
            .ends_with("with its setenv (MARK_FILE)"),
        "{tests:#?}"
    );
    assert!(tests.passed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!((summary.passed, summary.failed), (Some(2), Some(0)));
    assert!(
        reason(&outcome).contains("2 passed"),
        "{}",
        reason(&outcome)
    );
}
