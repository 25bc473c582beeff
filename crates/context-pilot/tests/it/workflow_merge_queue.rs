//! End to end (issue 37): the merge queue of `context-pilot run --headless`, the built-in
//! agent against the scripted model server, on a semantic conflict (`crate::util::merge_queue`):
//! rename turns `lib.greet` into `lib.hello`, feature calls `lib.greet`; each branch passes its
//! tests alone, merged they fail. The combined tree is tested before the run's branch moves,
//! so the branch is green at every commit the run made; the failure goes back to feature's
//! agent; each merge keeps its proof in `context.json` and in a git note; an agent that never
//! fixes it ends at the gate (exit 3 headless), the branch still green; `--resume` after a
//! SIGKILL while a combined tree is tested lands nothing red and leaves nothing behind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::process::Stdio;
use std::sync::Arc;

use crate::util::agent_run::shown;
use crate::util::merge_queue::{
    SEMANTIC, assert_every_commit_green, assert_proof, feature_calls, feature_fix, rename_calls,
    semantic_project,
};
use crate::util::phase_runs::{PATIENCE, command};
use crate::util::phases::{
    SENT_BACK, Script, Seen, TWO, assert_clean, assert_no_worktree_locked, assert_nothing_left,
    run_record, serve_back, write,
};
use crate::util::processes::processes_with;
use cp_e2e::{LlmServer, git};
use serde_json::json;

/// Serves the semantic conflict: rename and feature do their work; feature, sent back, fixes
/// its call when `fixes` (else it just ends its turn again).
fn serve_semantic(server: &LlmServer, fixes: bool) -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    let back = if fixes {
        vec![("feature", feature_fix())]
    } else {
        Vec::new()
    };
    serve_back(
        server,
        Script {
            phases: vec![
                ("rename", rename_calls()),
                ("feature", feature_calls(false)),
            ],
        },
        back,
        Arc::clone(&seen),
        None,
        Arc::default(),
    );
    seen
}

/// `context-pilot run wf.yaml --headless` to its end, smart restarts off; its exit code and
/// output.
fn run_semantic(root: &std::path::Path, server: &LlmServer) -> (Option<i32>, String) {
    let out = command(root, server, &[".context-pilot/workflows/wf.yaml"])
        .output()
        .unwrap();
    (out.status.code(), shown(&out))
}

#[test]
fn a_semantic_conflict_goes_back_to_the_phase_that_made_it_and_the_branch_stays_green() {
    let (_repo, root) = semantic_project(SEMANTIC, json!({}), &[]);
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let server = LlmServer::start().unwrap();
    let seen = serve_semantic(&server, true);
    let (code, shown) = run_semantic(&root, &server);
    assert_eq!(code, Some(0), "{shown}");

    // The failure reached feature's agent: a session of its own, told what failed and what
    // landed under it.
    let back: Vec<String> = seen
        .bodies("feature")
        .into_iter()
        .filter(|b| b.contains(SENT_BACK))
        .collect();
    let told = back
        .first()
        .unwrap_or_else(|| panic!("feature was never sent back\n{shown}"));
    assert!(
        told.contains("AttributeError") && told.contains("greet"),
        "the failing output is missing: {told}"
    );
    assert!(
        told.contains("Merge phase rename"),
        "the short log is missing: {told}"
    );
    assert!(
        shown.contains("phase feature: sent back (try 1 of 2)"),
        "{shown}"
    );

    // Both phases' work is on the branch, each merge tested before it landed.
    let lib = std::fs::read_to_string(root.join("lib.py")).unwrap();
    let feature = std::fs::read_to_string(root.join("feature.py")).unwrap();
    assert!(
        lib.contains("def hello") && feature.contains("lib.hello"),
        "{shown}"
    );
    let checked = assert_every_commit_green(&root, &start, &shown);
    assert_eq!(
        checked, 2,
        "one merge commit per phase on the first-parent line\n{shown}"
    );
    assert_proof(&root, "rename", &shown);
    assert_proof(&root, "feature", &shown);
    let record = run_record(&root).unwrap();
    let red = &record["phase_runs"]["feature"]["red_merges"];
    assert_eq!(red.as_array().map(Vec::len), Some(1), "{record:#}");
    assert_eq!(red[0]["outcome"], "failed", "{record:#}");
    assert_ne!(red[0]["runs"][0]["exit_code"], 0, "{record:#}");
    assert!(
        red[0]["runs"][0]["tail"].as_array().is_some_and(|t| t
            .iter()
            .any(|l| l.as_str().unwrap().contains("AttributeError"))),
        "{record:#}"
    );
    assert_eq!(
        record["merge_queue"]["tested"].as_u64().map(|n| n >= 3),
        Some(true),
        "{record:#}"
    );

    // The run's last word, said once: the branch is green, and how that is known.
    assert_eq!(
        shown.matches("branch main is green at").count(),
        1,
        "{shown}"
    );
    assert!(
        shown.contains("tested on this tree before it landed"),
        "{shown}"
    );
    assert_eq!(record["verdict"]["outcome"], "passed", "{record:#}");
    assert_nothing_left(&root, &shown);
    assert_clean(&root, &shown);
}

#[test]
fn an_agent_that_never_fixes_it_ends_at_the_gate_with_exit_3_and_the_branch_green() {
    let (_repo, root) = semantic_project(SEMANTIC, json!({}), &[]);
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let server = LlmServer::start().unwrap();
    let seen = serve_semantic(&server, false);
    let (code, shown) = run_semantic(&root, &server);
    // No one answers the gate after the last try: exit 3, naming the phase, the failing
    // test, the branch and what landed under it.
    assert_eq!(code, Some(3), "{shown}");
    assert!(
        shown.contains(
            "phase 'feature' passes its tests alone but fails them merged with main after 2 tries"
        ) && shown.contains("test_welcome")
            && shown.contains("cp/semantic-")
            && shown.contains("/feature")
            && shown.contains("Merge phase rename"),
        "{shown}"
    );
    assert!(
        seen.bodies("feature").iter().any(|b| b.contains(SENT_BACK)),
        "{shown}"
    );
    // The branch holds rename's merge only, green, with its proof; feature's work is kept.
    assert_eq!(assert_every_commit_green(&root, &start, &shown), 1);
    assert_proof(&root, "rename", &shown);
    let record = run_record(&root).unwrap();
    let feature = &record["phase_runs"]["feature"];
    assert_eq!(feature["status"], "red", "{record:#}");
    assert_eq!(
        feature["red_merges"].as_array().map(Vec::len),
        Some(2),
        "{record:#}"
    );
    let branch = feature["branch"].as_str().unwrap();
    assert!(
        git(&root, &["branch", "--list", branch]).contains(branch),
        "{shown}"
    );
    assert!(
        !root.join("feature.py").exists(),
        "feature's red work landed\n{shown}"
    );
    assert!(shown.contains("branch main is green at"), "{shown}");
    assert_clean(&root, &shown);

    // `--resume` asks again; kept aside, the run completes with the branch as it was and
    // feature's work on its branch, every commit kept.
    let tip = git(&root, &["rev-parse", branch]).trim().to_owned();
    let answers = root.join("../answers.yaml");
    std::fs::write(&answers, "- {phase: feature, option: Keep it aside}\n").unwrap();
    let run_id = record["run_id"].as_str().unwrap();
    let answers_arg = answers.to_string_lossy();
    let out = command(
        &root,
        &server,
        &["--resume", run_id, "--answers", &answers_arg],
    )
    .output()
    .unwrap();
    let shown = crate::util::agent_run::shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(shown.contains("phase feature: kept aside"), "{shown}");
    let record = run_record(&root).unwrap();
    assert_eq!(
        record["phase_runs"]["feature"]["status"], "kept_aside",
        "{record:#}"
    );
    assert_eq!(git(&root, &["rev-parse", branch]).trim(), tip);
    assert_eq!(assert_every_commit_green(&root, &start, &shown), 1);
    assert_nothing_left_but(&root, branch, &shown);
    assert_clean(&root, &shown);
}

/// No worktree is left and the only phase branch is `kept`.
fn assert_nothing_left_but(root: &std::path::Path, kept: &str, shown: &str) {
    let worktrees = git(root, &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}\n{shown}");
    assert_eq!(
        git(
            root,
            &["branch", "--list", "cp/*", "--format=%(refname:short)"]
        )
        .trim(),
        kept,
        "{shown}"
    );
}

/// Serves [`TWO`]: api writes `api.py`, ui writes `ui.py`; no conflict, semantic or not.
fn serve_api_ui(server: &LlmServer) {
    let script = Script {
        phases: vec![
            ("api", vec![write("api.py", "def api():\n    return 1\n")]),
            ("ui", vec![write("ui.py", "def ui():\n    return 2\n")]),
        ],
    };
    serve_back(
        server,
        script,
        Vec::new(),
        Arc::default(),
        None,
        Arc::default(),
    );
}

/// Phases with no conflict still run at once and land, each merge tested, and the run says
/// how the branch was found green.
#[test]
fn phases_without_a_conflict_run_at_once_and_land_tested() {
    let (_repo, root) = semantic_project(TWO, json!({}), &[]);
    let server = LlmServer::start().unwrap();
    serve_api_ui(&server);
    let out = command(&root, &server, &[".context-pilot/workflows/wf.yaml"])
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    for phase in ["api", "ui"] {
        assert_proof(&root, phase, &shown);
    }
    assert!(!shown.contains("sent back"), "{shown}");
    assert!(shown.contains("branch main is green at"), "{shown}");
    assert_nothing_left(&root, &shown);
    assert_clean(&root, &shown);
}

/// A test suite that, in a tree holding both `api.py` and `ui.py` (only a combined tree
/// does), says so in `signal` and waits while `hold` exists.
fn holding_suite(signal: &std::path::Path, hold: &std::path::Path) -> String {
    format!(
        "import os\nimport time\nimport unittest\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n\nclass Gate(unittest.TestCase):\n    def test_combined(self):\n        if os.path.exists(os.path.join(HERE, 'api.py')) and os.path.exists(os.path.join(HERE, 'ui.py')):\n            open({signal:?}, 'w').close()\n            while os.path.exists({hold:?}):\n                time.sleep(0.05)\n",
        signal = signal.display().to_string(),
        hold = hold.display().to_string(),
    )
}

#[test]
fn resume_after_sigkill_while_the_combined_tree_is_tested_lands_nothing_red_and_leaves_nothing() {
    let facts = tempfile::tempdir().unwrap();
    let (signal, hold) = (facts.path().join("testing"), facts.path().join("hold"));
    std::fs::write(&hold, "").unwrap();
    let suite = holding_suite(&signal, &hold);
    let (_repo, root) = semantic_project(TWO, json!({}), &[("test_gate.py", &suite)]);
    let start = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let server = LlmServer::start().unwrap();
    serve_api_ui(&server);
    let mut first = command(&root, &server, &[".context-pilot/workflows/wf.yaml"]);
    first.stdout(Stdio::null()).stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut first, 0);
    let mut child = first.spawn().unwrap();
    // A combined tree's test is under way: the durable fact the suite leaves.
    cp_e2e::eventually("a combined tree's test", PATIENCE, || {
        signal.exists() || {
            assert!(child.try_wait().unwrap().is_none(), "the run ended first");
            false
        }
    });
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: SIGKILL to the process group this test started.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    child.wait().unwrap();
    // Nothing red, and nothing untested, landed: the branch holds at most the merge tested
    // before, never the one under test.
    let landed = git(
        &root,
        &[
            "log",
            "--first-parent",
            "--format=%s",
            &format!("{start}..HEAD"),
        ],
    );
    assert!(
        !(landed.contains("Merge phase api") && landed.contains("Merge phase ui")),
        "{landed}"
    );
    assert_every_commit_green(&root, &start, "after the kill");
    assert_no_worktree_locked(&root);

    std::fs::remove_file(&hold).unwrap();
    let record = run_record(&root).unwrap();
    let run_id = record["run_id"].as_str().unwrap();
    let out = command(&root, &server, &["--resume", run_id])
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    for phase in ["api", "ui"] {
        assert_proof(&root, phase, &shown);
    }
    assert_eq!(assert_every_commit_green(&root, &start, &shown), 2);
    assert_nothing_left(&root, &shown);
    assert_clean(&root, &shown);
    // No process of the run's worktrees is left (their console servers, the tests in them).
    let trees = root.join(".context-pilot/worktrees");
    let left = || processes_with(&trees.to_string_lossy());
    cp_e2e::eventually_with(
        "every process of the run's worktrees to end",
        PATIENCE,
        || left().is_empty(),
        || format!("left running: {:?}\n{shown}", left()),
    );
}
