//! Issue 41 and issue 36 (items 2, 3): the stop gate's verdict is true, checked against the
//! real runners a user meets: pytest, Python's unittest, jest and node's runner in one npm
//! workspaces run, cargo, vitest, a Rust crate with Python tests, a missing `node_modules`
//! and a missing venv, a suite slower than its limit, and a repository git refuses.
//!
//! Tools come from the registries, never from the system: pytest into a venv (wheels cached
//! in `target/pytest-wheels`), jest and vitest into `target/node-tools` (scripts/test.sh
//! installs both; a test installs what is missing). Under CI a missing tool fails the test.

#![allow(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]

use std::path::Path;

use crate::util::{Repo, make_venv, node_tools, reason, require, stop_in};
use cp_base::Project;
use cp_mod_checkpoint::{StopGateConfig, StopOutcome, TestFramework, TestOutcome, TestVerdict};

/// A new agent session for each stop, so every check is a first stop that runs the tests.
fn fresh_session() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "real-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A stop with the project's own configuration (`config.json`, as a person writes it).
fn check(repo: &Repo, project: &Project) -> StopOutcome {
    let config = StopGateConfig::load(project).unwrap();
    let checkpoint = repo.checkpoint(project, config);
    stop_in(&checkpoint, project, &fresh_session())
}

fn check_with_path(repo: &Repo, project: &Project, path: &std::ffi::OsStr) -> StopOutcome {
    let config = StopGateConfig::load(project).unwrap();
    let checkpoint = repo.checkpoint(project, config).with_path_env(path);
    stop_in(&checkpoint, project, &fresh_session())
}

fn only_run(outcome: &StopOutcome) -> &TestOutcome {
    match outcome.report.tests.as_slice() {
        [one] => one,
        runs => panic!(
            "expected one test run, got {}: {:#?}",
            runs.len(),
            outcome.report
        ),
    }
}

fn on_path(program: &str) -> bool {
    cp_base::find_program(program, std::env::var_os("PATH").as_deref()).is_some()
}

/// node, npm, and jest and vitest under `target/node-tools`.
fn node_tools_ready() -> bool {
    require(on_path("npm") && on_path("node"), "node and npm")
        && require(
            node_tools().is_some(),
            "jest and vitest under target/node-tools (npm)",
        )
}

fn symlink_node_modules(root: &Path, dir: &str) {
    let modules = node_tools().unwrap();
    std::os::unix::fs::symlink(modules, root.join(dir).join("node_modules")).unwrap();
}

const PY_IGNORE: &str = ".venv/\n__pycache__/\n.pytest_cache/\n";

// ---------------------------------------------------------------- pytest

// Issue 41 item 11: four parametrized ids holding spaces (and ` - `) were cut at the first
// space and merged into one name.
#[test]
fn pytest_ids_with_spaces_are_named_whole() {
    let repo = Repo::with_commit(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        ("calc/__init__.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "import pytest\nfrom calc import add\n\n\n@pytest.mark.parametrize(\"expr\", [\"extra == 'a b'\", \"extra == 'a-b'\", \"x - y\", \"plain\"])\ndef test_evaluates(expr):\n    assert add(1, 1) == 2\n\n\ndef test_ok():\n    assert add(2, 2) == 4\n",
        ),
        (".gitignore", PY_IGNORE),
    ]);
    if !require(
        make_venv(&repo.root()).is_some(),
        "python3 with venv, or pytest from PyPI",
    ) {
        return;
    }
    repo.write(
        "calc/__init__.py",
        "def add(a, b):\n    return a + b + (a == 1)\n",
    );
    let outcome = check(&repo, &repo.project());
    let tests = only_run(&outcome);
    assert_eq!(tests.verdict(), TestVerdict::Failed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!((summary.passed, summary.failed), (Some(1), Some(4)));
    assert_eq!(
        summary.failing,
        [
            "tests/test_calc.py::test_evaluates[extra == 'a b']",
            "tests/test_calc.py::test_evaluates[extra == 'a-b']",
            "tests/test_calc.py::test_evaluates[x - y]",
            "tests/test_calc.py::test_evaluates[plain]",
        ]
    );
    let msg = reason(&outcome);
    assert!(
        msg.contains("failing: tests/test_calc.py::test_evaluates[extra == 'a b'], "),
        "{msg}"
    );
}

// ---------------------------------------------------------------- unittest

const CALC_WITH_DOCTEST: &str =
    "def add(a, b):\n    \"\"\"\n    >>> add(2, 2)\n    4\n    \"\"\"\n    return a + b\n";

// Issue 36 item 2 and issue 41 item 3: the project's Makefile runs `python -m unittest`,
// whose `load_tests` adds the doctests; the gate runs that (and says why), counts every test
// honestly and names the broken doctest.
#[test]
fn unittest_with_load_tests_through_the_makefile() {
    if !require(on_path("make") && on_path("python3"), "make and python3") {
        return;
    }
    let repo = Repo::with_commit(&[
        ("Makefile", ".PHONY: test\ntest:\n\tpython3 -m unittest\n"),
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        ("calc.py", CALC_WITH_DOCTEST),
        (
            "test_calc.py",
            "import doctest\nimport unittest\n\nimport calc\n\n\ndef load_tests(loader, tests, ignore):\n    tests.addTests(doctest.DocTestSuite(calc))\n    return tests\n\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n\n    def test_more(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
        ),
        (".gitignore", PY_IGNORE),
    ]);
    let project = repo.project();
    repo.write(
        "calc.py",
        &CALC_WITH_DOCTEST.replace("    4\n", "    4\n\n"),
    );
    let passed = check(&repo, &project);
    let tests = only_run(&passed);
    assert_eq!(tests.command, "make test");
    assert!(tests.passed, "{tests:#?}");
    let msg = reason(&passed);
    assert!(
        msg.contains("Tests passed: 3 passed in"),
        "the doctest counts: {msg}"
    );
    assert!(msg.contains("(unittest)"), "{msg}");
    assert!(
        msg.contains("Makefile's `test` target"),
        "why this command: {msg}"
    );

    repo.write("calc.py", &CALC_WITH_DOCTEST.replace("    4\n", "    5\n"));
    let failed = check(&repo, &project);
    let tests = only_run(&failed);
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.framework, TestFramework::Unittest);
    assert_eq!((summary.passed, summary.failed), (Some(2), Some(1)));
    let msg = reason(&failed);
    assert!(
        msg.contains("1 failed, 2 passed") && msg.contains("failing: doctest calc.add"),
        "{msg}"
    );
    assert!(msg.contains("Fix failing tests"), "{msg}");
}

// ---------------------------------------------------------------- jest + node:test

// Issue 41 item 4: `npm test --workspaces` prints jest's summary and node's runner's; both
// count, and both packages' failures are named.
#[test]
fn jest_and_node_test_in_one_output_are_summed() {
    if !node_tools_ready() {
        return;
    }
    let repo = Repo::with_commit(&[
        (
            "package.json",
            r#"{"name": "root", "private": true, "workspaces": ["a", "b"], "scripts": {"test": "npm test --workspaces"}}"#,
        ),
        (
            "a/package.json",
            r#"{"name": "a", "version": "1.0.0", "scripts": {"test": "jest"}}"#,
        ),
        ("a/calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "a/calc.test.js",
            "const { add } = require('./calc');\ndescribe('calc', () => {\n  test('adds', () => expect(add(1, 2)).toBe(3));\n  test('adds more', () => expect(add(2, 2)).toBe(4));\n  test('adds zero', () => expect(add(0, 0)).toBe(0));\n});\n",
        ),
        (
            "b/package.json",
            r#"{"name": "b", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
        ),
        ("b/calc.js", "exports.sub = (a, b) => a - b;\n"),
        (
            "b/test/calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sub } = require('../calc');\ntest('subtracts', () => assert.strictEqual(sub(3, 2), 1));\ntest('subtracts more', () => assert.strictEqual(sub(5, 2), 3));\n",
        ),
        (".gitignore", "node_modules\n"),
    ]);
    symlink_node_modules(&repo.root(), "a");
    repo.write(
        "a/calc.js",
        "exports.add = (a, b) => a + b + (a === 2 ? 1 : 0);\n",
    );
    repo.write(
        "b/calc.js",
        "exports.sub = (a, b) => a - b + (a === 5 ? 1 : 0);\n",
    );
    let outcome = check(&repo, &repo.project());
    let tests = only_run(&outcome);
    let summary = tests.summary.as_ref().unwrap();
    let frameworks: Vec<TestFramework> = summary.runs.iter().map(|r| r.framework).collect();
    assert_eq!(
        frameworks,
        [TestFramework::Jest, TestFramework::NodeTest],
        "{summary:#?}"
    );
    assert_eq!(
        (summary.passed, summary.failed),
        (Some(3), Some(2)),
        "{summary:#?}"
    );
    assert!(
        summary.failing.iter().any(|n| n == "calc › adds more")
            && summary.failing.iter().any(|n| n == "subtracts more"),
        "{summary:#?}"
    );
    let msg = reason(&outcome);
    assert!(msg.contains("Tests FAILED"), "{msg}");
    assert!(msg.contains("2 failed, 3 passed"), "{msg}");
    assert!(
        msg.contains("(jest)") && msg.contains("(node --test)"),
        "{msg}"
    );
}

// ---------------------------------------------------------------- cargo

// Issue 41 items 5 and 10: `cargo test` ran until the first failing target; every target
// runs now, and the failing doctest is named with its spaces.
#[test]
fn cargo_counts_every_target_and_names_the_doctest() {
    let repo = Repo::with_commit(&[
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        (".gitignore", "target/\nCargo.lock\n"),
    ]);
    repo.write(
        "src/lib.rs",
        "/// ```\n/// assert_eq!(calc::add(2, 2), 5);\n/// ```\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_more() {\n        assert_eq!(super::add(2, 2), 5);\n    }\n}\n",
    );
    repo.write(
        "tests/it.rs",
        "#[test]\nfn from_outside() {\n    assert_eq!(calc::add(1, 1), 3);\n}\n\n#[test]\nfn also_from_outside() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n",
    );
    let outcome = check(&repo, &repo.project());
    let tests = only_run(&outcome);
    assert_eq!(tests.command, "cargo test --no-fail-fast");
    let summary = tests.summary.as_ref().unwrap();
    // Unit tests 1+1, integration 1+1, doctest 0+1: every target ran.
    assert_eq!(
        (summary.passed, summary.failed),
        (Some(2), Some(3)),
        "{summary:#?}"
    );
    assert_eq!(
        summary.failing,
        [
            "tests::adds_more",
            "from_outside",
            "src/lib.rs - add (line 1)"
        ]
    );
    let msg = reason(&outcome);
    assert!(
        msg.contains("failing: tests::adds_more, from_outside, src/lib.rs - add (line 1)"),
        "{msg}"
    );
}

// ---------------------------------------------------------------- vitest

// Issue 41 item 8: `"test": "vitest"` stays in watch mode on a terminal; run as CI runs it,
// it finishes, passing or failing, and watch mode's status line is never taken for a test.
#[test]
fn vitest_runs_once_as_in_ci() {
    if !node_tools_ready() {
        return;
    }
    let repo = Repo::with_commit(&[
        (
            "package.json",
            r#"{"name": "calc", "version": "1.0.0", "type": "module", "scripts": {"test": "vitest"}}"#,
        ),
        ("calc.js", "export const add = (a, b) => a - b;\n"),
        (
            "calc.test.js",
            "import { describe, expect, test } from 'vitest';\nimport { add } from './calc.js';\ndescribe('calc', () => {\n  test('adds', () => expect(add(1, 2)).toBe(3));\n  test('adds more', () => expect(add(2, 2)).toBe(4));\n});\n",
        ),
        (".gitignore", "node_modules\n"),
    ]);
    symlink_node_modules(&repo.root(), ".");
    let project = repo.project();
    repo.write("calc.js", "export const add = (a, b) => a + b;\n");
    let passed = check(&repo, &project);
    let tests = only_run(&passed);
    assert_eq!(tests.verdict(), TestVerdict::Passed, "{tests:#?}");
    assert!(
        reason(&passed).contains("Tests passed: 2 passed"),
        "{}",
        reason(&passed)
    );

    repo.write(
        "calc.js",
        "export const add = (a, b) => a + b + (a === 2 ? 1 : 0);\n",
    );
    let failed = check(&repo, &project);
    let tests = only_run(&failed);
    assert_eq!(tests.verdict(), TestVerdict::Failed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.failing, ["calc.test.js > calc > adds more"]);
    assert!(!reason(&failed).contains("Watching"), "{}", reason(&failed));
}

// ---------------------------------------------------------------- a crate with Python tests

// Issue 41 item 2: rpds-py (PyO3: Cargo.toml and pyproject.toml) said "Tests passed: no tests
// ran (cargo test)" while its pytest suite failed. Both suites run; zero tests is no pass.
#[test]
fn a_crate_with_python_tests_runs_both() {
    let repo = Repo::with_commit(&[
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
        ),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        (
            "pyproject.toml",
            "[build-system]\nrequires = [\"maturin>=1,<2\"]\nbuild-backend = \"maturin\"\n\n[project]\nname = \"calc\"\nversion = \"0.1.0\"\n",
        ),
        (
            "python/calc/__init__.py",
            "def add(a, b):\n    return a + b\n",
        ),
        (
            "tests/test_calc.py",
            "import sys\nsys.path.insert(0, 'python')\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_more():\n    assert add(2, 2) == 4\n",
        ),
        (
            ".gitignore",
            "target/\nCargo.lock\n.venv/\n__pycache__/\n.pytest_cache/\n",
        ),
    ]);
    if !require(
        make_venv(&repo.root()).is_some(),
        "python3 with venv, or pytest from PyPI",
    ) {
        return;
    }
    let project = repo.project();
    repo.write(
        "python/calc/__init__.py",
        "def add(a, b):\n    return a + b + (a == 2)\n",
    );
    let red = check(&repo, &project);
    let tests = only_run(&red);
    assert!(
        tests.command.starts_with("cargo test --no-fail-fast;")
            && tests.command.contains(".venv/bin/python -m pytest"),
        "{}",
        tests.command
    );
    assert_eq!(tests.verdict(), TestVerdict::Failed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    let frameworks: Vec<TestFramework> = summary.runs.iter().map(|r| r.framework).collect();
    assert_eq!(frameworks, [TestFramework::Cargo, TestFramework::Pytest]);
    assert_eq!(summary.failing, ["tests/test_calc.py::test_add_more"]);
    let msg = reason(&red);
    assert!(
        msg.contains("Tests FAILED") && msg.contains("both suites run"),
        "{msg}"
    );

    repo.write(
        "python/calc/__init__.py",
        "def add(a, b):\n    return b + a\n",
    );
    let green = check(&repo, &project);
    assert!(only_run(&green).passed, "{:#?}", green.report.tests);
    assert!(
        reason(&green).contains("Tests passed: 2 passed"),
        "{}",
        reason(&green)
    );

    // With no Python tests either, nothing ran: never a pass.
    repo.remove("tests/test_calc.py");
    repo.write("tests/README.md", "tests go here\n");
    let none = check(&repo, &project);
    assert_eq!(
        only_run(&none).verdict(),
        TestVerdict::NoTests,
        "{:#?}",
        none.report.tests
    );
    assert!(reason(&none).contains("ran NO TESTS"), "{}", reason(&none));
}

// ---------------------------------------------------------------- missing tools

// Issue 41 item 7: with no `node_modules`, or a tool the shell cannot find, the tests never
// ran: the gate says what is missing and the install command, never "fix failing tests".
#[test]
fn a_missing_node_modules_or_tool_is_named_with_its_install_command() {
    if !require(on_path("npm") && on_path("node"), "node and npm") {
        return;
    }
    let repo = Repo::with_commit(&[
        (
            "package.json",
            r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"}, "devDependencies": {"jest": "29.7.0"}}"#,
        ),
        (
            "package-lock.json",
            r#"{"name": "calc", "lockfileVersion": 3, "packages": {}}"#,
        ),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (".gitignore", "node_modules\n"),
    ]);
    let project = repo.project();
    repo.write("calc.js", "exports.add = (a, b) => b + a;\n");
    let outcome = check(&repo, &project);
    let tests = only_run(&outcome);
    assert_eq!(tests.verdict(), TestVerdict::MissingTool, "{tests:#?}");
    let msg = reason(&outcome);
    assert!(msg.contains("Tests NOT RUN"), "{msg}");
    assert!(msg.contains("Not installed: node_modules"), "{msg}");
    assert!(
        msg.contains("To install it: `npm ci`; then stop again."),
        "{msg}"
    );
    assert!(
        !msg.contains("Fix failing tests") && !msg.contains("FAILED"),
        "{msg}"
    );

    // The tool is not declared at all: the shell's exit 127.
    repo.write(
        "package.json",
        r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "c8 node --test"}}"#,
    );
    repo.remove("package-lock.json");
    let outcome = check(&repo, &project);
    let tests = only_run(&outcome);
    assert_eq!(tests.verdict(), TestVerdict::MissingTool, "{tests:#?}");
    assert_eq!(
        tests.exit,
        Some(cp_mod_checkpoint::TestExit::Code { code: 127 })
    );
    let msg = reason(&outcome);
    assert!(
        msg.contains("Not installed: c8 (`sh: 1: c8: not found`)"),
        "{msg}"
    );
    assert!(
        msg.contains(
            "To install it: `npm install`, and if no dependency provides `c8`: \
             `npm install --save-dev c8`"
        ),
        "{msg}"
    );
    assert!(!msg.contains("Fix failing tests"), "{msg}");
}

#[test]
fn a_missing_venv_is_named_with_its_install_command() {
    let Some((_env, _bin, path)) = crate::util::bare_python3() else {
        assert!(require(false, "python3 -m venv"));
        return;
    };
    let repo = Repo::with_commit(&[
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n",
        ),
        ("calc/__init__.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        ),
        (".gitignore", PY_IGNORE),
    ]);
    repo.write("calc/__init__.py", "def add(a, b):\n    return b + a\n");
    let outcome = check_with_path(&repo, &repo.project(), &path);
    let tests = only_run(&outcome);
    assert_eq!(tests.command, "python3 -m pytest");
    assert_eq!(tests.verdict(), TestVerdict::MissingTool, "{tests:#?}");
    let msg = reason(&outcome);
    assert!(msg.contains("Not installed: pytest"), "{msg}");
    assert!(msg.contains("No module named pytest"), "{msg}");
    assert!(
        msg.contains(
            "To install it: `python3 -m venv .venv && .venv/bin/pip install -e '.[test]'`"
        ),
        "{msg}"
    );
    assert!(!msg.contains("Fix failing tests"), "{msg}");
}

// ---------------------------------------------------------------- timeout

// Issue 41 item 6: a suite slower than its limit is TIMED OUT, with its usual duration and
// the setting to raise; `{"checkpoint": {"tests": {"timeout_secs": N}}}` alone is valid.
#[test]
fn a_suite_slower_than_the_limit_says_so() {
    if !require(on_path("make") && on_path("python3"), "make and python3") {
        return;
    }
    let repo = Repo::with_commit(&[
        ("Makefile", "test:\n\tpython3 -m unittest\n"),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "test_calc.py",
            "import time\nimport unittest\n\nimport calc\n\n\nclass TestCalc(unittest.TestCase):\n    def test_slow(self):\n        time.sleep(3)\n        self.assertEqual(calc.add(1, 2), 3)\n",
        ),
        (".gitignore", "__pycache__/\n"),
    ]);
    let project = repo.project();
    let limit = |secs: u64| {
        std::fs::create_dir_all(project.dir()).unwrap();
        std::fs::write(
            project.config().path(),
            format!(r#"{{"checkpoint": {{"tests": {{"timeout_secs": {secs}}}}}}}"#),
        )
        .unwrap();
    };
    limit(60);
    repo.write("calc.py", "def add(a, b):\n    return b + a\n");
    let first = check(&repo, &project);
    assert!(only_run(&first).passed, "{:#?}", first.report.tests);

    limit(1);
    repo.write("calc.py", "def add(a, b):\n    return (b + a)\n");
    let slow = check(&repo, &project);
    let tests = only_run(&slow);
    assert_eq!(tests.verdict(), TestVerdict::TimedOut, "{tests:#?}");
    let msg = reason(&slow);
    assert!(msg.contains("Tests TIMED OUT (after 1s"), "{msg}");
    assert!(msg.contains("The suite usually takes about"), "{msg}");
    assert!(
        msg.contains(r#"{"checkpoint": {"tests": {"timeout_secs": "#),
        "{msg}"
    );
    assert!(
        !msg.contains("Fix failing tests") && !msg.contains("FAILED"),
        "{msg}"
    );
}

// ---------------------------------------------------------------- git refuses

// Issue 41 item 9, issue 42: a repository owned by another user ("dubious ownership"): the
// gate cannot read it and lets the agent stop, but never silently: the person is told.
#[test]
fn a_repository_git_refuses_is_said_not_silently_passed() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !require(root, "root, to give a repository to another user") {
        return;
    }
    let repo = Repo::with_commit(&[("app.py", "x = 1\n")]);
    repo.write("app.py", "x = 2\n");
    let owner = if crate::util::user_exists("cp-tests") {
        "cp-tests"
    } else {
        "nobody"
    };
    let chowned = std::process::Command::new("chown")
        .args(["-R", owner])
        .arg(repo.dir.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(chowned);
    let project = repo.project();
    let checkpoint = repo.checkpoint(&project, StopGateConfig::default());
    let outcome = stop_in(&checkpoint, &project, "dubious");
    assert!(crate::util::is_pass(&outcome), "{:?}", outcome.decision);
    let skipped = outcome.report.skipped.as_deref().unwrap_or_default();
    assert!(skipped.contains("dubious ownership"), "{skipped}");
    let notice = outcome.notice.expect("the person is told the gate is off");
    assert!(notice.contains("the stop gate is OFF"), "{notice}");
    assert!(
        notice.contains(&format!(
            "git config --global --add safe.directory {}",
            repo.root().display()
        )),
        "{notice}"
    );
}

// ---------------------------------------------------------------- the terminal's view

// Issue 36 item 3: a progress bar erased the way cargo erases it (`\r`, then `ESC[K`) left
// its tail beside the next line (`error: could not compile 2/3: regex-syntax, …`). The agent
// gets what the console's terminal shows.
#[test]
fn an_erased_progress_bar_leaves_no_remnant_in_the_message() {
    let repo = Repo::with_commit(&[("app.py", "x = 1\n")]);
    let suite = crate::util::Suite::new();
    let command = suite.script(
        "printf '   Compiling calc v0.1.0\\n'\n\
         printf '    Building [=======>   ] 2/3: regex-syntax, regex-syntax(test)'\n\
         printf '\\r\\033[K\\033[1;31merror\\033[0m: could not compile `calc`\\n'\n\
         printf 'tick 1\\rtick 2\\rdone  \\n'\n\
         exit 101",
    );
    let checkpoint = repo.checkpoint(&repo.project(), crate::util::preset(&command, 30));
    repo.write("app.py", "x = 2\n");
    let outcome = stop_in(&checkpoint, &repo.project(), "bar");
    let tests = only_run(&outcome);
    assert_eq!(
        tests.tail,
        [
            "   Compiling calc v0.1.0",
            "error: could not compile `calc`",
            "done"
        ]
    );
    let msg = reason(&outcome);
    assert!(!msg.contains("regex-syntax"), "{msg}");
    assert!(msg.contains("errors in: calc"), "{msg}");
}

// scripts/test.sh installs the same npm tools the tests install when they are missing.
#[test]
fn test_sh_installs_the_same_node_tools() {
    let script = include_str!("../../../../scripts/test.sh");
    assert!(
        script.contains(crate::util::NODE_TOOLS_PACKAGE),
        "scripts/test.sh and crate::util::NODE_TOOLS_PACKAGE differ"
    );
}
