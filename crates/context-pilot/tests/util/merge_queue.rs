//! The semantic conflict of issue 37, for the merge queue's end-to-end tests: a small Python
//! project (a `unittest` suite, `checkpoint.tests.command` configured, the project trusted)
//! and a workflow of two phases from the start. `rename` renames `lib.greet` to `lib.hello`
//! and updates its test; `feature` adds `feature.py`, which calls `lib.greet`, with a test.
//! Each branch is green alone; merged together they are red. And what a run of it must leave:
//! every commit the run made on the branch's first-parent line green, each merge's proof in
//! `context.json` and in a git note.

use std::path::{Path, PathBuf};
use std::process::Command;

use cp_e2e::{git, git_repo};
use serde_json::{Value, json};

use super::phases::{Call, run_record, write};

/// The workflow: rename and feature, both from the start.
pub const SEMANTIC: &str = "\
name: semantic
phases:
  - id: rename
    depends_on: []
    prompt: PHASE-rename-MARK Rename lib.greet to lib.hello, with its test.
  - id: feature
    depends_on: []
    prompt: PHASE-feature-MARK Add feature.welcome, which greets loudly, with a test.
";

/// The test command the project configures.
pub const TESTS: &str = "python3 -m unittest";

const LIB: &str = "def greet(name):\n    return f\"Hello, {name}!\"\n";
const LIB_TEST: &str = "import unittest\n\nimport lib\n\n\nclass LibTest(unittest.TestCase):\n    def test_greet(self):\n        self.assertEqual(lib.greet(\"Ada\"), \"Hello, Ada!\")\n";

/// A committed, trusted project with `workflow` at `.context-pilot/workflows/wf.yaml`, the
/// library and its test, `config` as its `config.json` (its `checkpoint.tests.command` set to
/// [`TESTS`]), and `extra` files. Returns the repository and its canonical root.
pub fn semantic_project(
    workflow: &str,
    mut config: Value,
    extra: &[(&str, &str)],
) -> (tempfile::TempDir, PathBuf) {
    let repo = git_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::create_dir_all(root.join(".context-pilot/workflows")).unwrap();
    config["checkpoint"]["tests"] = json!({"command": TESTS});
    std::fs::write(root.join(".context-pilot/config.json"), config.to_string()).unwrap();
    std::fs::write(root.join(".context-pilot/workflows/wf.yaml"), workflow).unwrap();
    std::fs::write(root.join(".gitignore"), "__pycache__/\n").unwrap();
    std::fs::write(root.join("lib.py"), LIB).unwrap();
    std::fs::write(root.join("test_lib.py"), LIB_TEST).unwrap();
    for (file, text) in extra {
        std::fs::write(root.join(file), text).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "initial"]);
    cp_e2e::trust(&root);
    (repo, root)
}

/// What rename's agent does: `lib.hello`, and its test.
pub fn rename_calls() -> Vec<Call> {
    vec![
        write(
            "lib.py",
            "def hello(name):\n    return f\"Hello, {name}!\"\n",
        ),
        write("test_lib.py", &LIB_TEST.replace("greet", "hello")),
    ]
}

/// What feature's agent does: `feature.welcome` calling `lib.greet` (`fixed`: `lib.hello`),
/// and its test.
pub fn feature_calls(fixed: bool) -> Vec<Call> {
    let call = if fixed { "hello" } else { "greet" };
    vec![
        write(
            "feature.py",
            &format!("import lib\n\n\ndef welcome(name):\n    return lib.{call}(name).upper()\n"),
        ),
        write(
            "test_feature.py",
            "import unittest\n\nimport feature\n\n\nclass FeatureTest(unittest.TestCase):\n    def test_welcome(self):\n        self.assertEqual(feature.welcome(\"Ada\"), \"HELLO, ADA!\")\n",
        ),
    ]
}

/// What feature's agent does once the merge queue sent it back: call `lib.hello`.
pub fn feature_fix() -> Vec<Call> {
    vec![feature_calls(true).remove(0)]
}

/// Every commit the run made on the branch's first-parent line since `start` passes
/// [`TESTS`], checked in a scratch worktree of its own; returns how many there were.
pub fn assert_every_commit_green(root: &Path, start: &str, shown: &str) -> usize {
    let commits = git(
        root,
        &["rev-list", "--first-parent", &format!("{start}..HEAD")],
    );
    let scratch = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (i, commit) in commits.lines().enumerate() {
        let tree = scratch.path().join(format!("c{i}"));
        git(
            root,
            &[
                "worktree",
                "add",
                "--quiet",
                "--detach",
                &tree.to_string_lossy(),
                commit,
            ],
        );
        let out = Command::new("python3")
            .args(["-m", "unittest"])
            .current_dir(&tree)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        git(
            root,
            &["worktree", "remove", "--force", &tree.to_string_lossy()],
        );
        assert!(
            out.status.success(),
            "commit {commit} on the run's branch is red:\n{}\n{shown}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    checked
}

/// Phase `phase` merged with its proof: the tree tested is its merge commit's, the test
/// command passed with exit code 0, and the merge commit carries the same proof as a git
/// note under `refs/notes/context-pilot`. Returns its merge commit.
pub fn assert_proof(root: &Path, phase: &str, shown: &str) -> String {
    let record = run_record(root).unwrap();
    let run = &record["phase_runs"][phase];
    assert_eq!(run["status"], "merged", "{record:#}\n{shown}");
    let merge = run["merge_commit"].as_str().unwrap().to_owned();
    let proof = &run["proof"];
    let tree = git(root, &["rev-parse", &format!("{merge}^{{tree}}")]);
    assert_eq!(proof["tree"], tree.trim(), "{record:#}");
    assert_eq!(proof["commit"], merge.as_str(), "{record:#}");
    assert_eq!(proof["outcome"], "passed", "{record:#}");
    assert_eq!(proof["runs"][0]["command"], TESTS, "{record:#}");
    assert_eq!(proof["runs"][0]["exit_code"], 0, "{record:#}");
    assert!(proof["runs"][0]["elapsed_ms"].is_u64(), "{record:#}");
    assert!(proof["tested_at"].is_string(), "{record:#}");
    let note = git(
        root,
        &["log", "-1", "--notes=context-pilot", "--format=%N", &merge],
    );
    assert!(
        note.contains(&format!("tree {}", tree.trim()))
            && note.contains(&format!("{TESTS}: exit 0"))
            && note.contains(&format!("merge of phase {phase} ")),
        "note of {merge}: {note}\n{shown}"
    );
    merge
}
