//! End to end (issue 26): `context-pilot run --headless` on a workflow with `depends_on`, the
//! built-in agent against the scripted LLM server. Phases ready together run at once (their
//! requests are in flight together), each in its own worktree; their branches are merged;
//! a dependent starts as soon as its dependency is merged, while another phase still runs;
//! a conflict exits 3 with a clean tree; a phase whose context fills restarts alone, in its
//! own worktree; the stop gate runs the project's tests in each phase's worktree.
//! Stopping and resuming such a run: `workflow_parallel_stop.rs`; in the TUI:
//! `workflow_parallel_tui.rs`.
//!
//! The phases run at once, so their requests interleave: the server answers by phase (each
//! prompt carries a marker, `crate::util::phases`), not from one queue.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::sync::{Arc, Mutex};

use crate::util::agent_run::shown;
use crate::util::phase_runs::{command, command_with_restarts, prepare, run};
use crate::util::phases::{
    CLASH, FEATURE, Script, Seen, TWO, assert_clash_stopped, assert_clean, assert_nothing_left,
    clash_script, feature_script, marker, read, run_record, serve, serve_script, write,
};
use cp_e2e::{LlmServer, anthropic, git, git_repo};
use serde_json::Value;

#[test]
fn two_phases_run_at_once_in_worktrees_and_a_dependent_sees_both() {
    let repo = prepare(FEATURE);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = feature_script();
    let seen = Arc::new(Seen::default());
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        script,
        Arc::clone(&seen),
        Some(("api", "ui", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // api's first request was still unanswered when ui's arrived.
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{shown}");

    // Each ran in its own worktree, on its own branch, merged with a commit naming it.
    let record = run_record(dir).unwrap();
    let phases = &record["phase_runs"];
    for phase in ["api", "ui"] {
        let worktree = phases[phase]["worktree"].as_str().unwrap();
        assert!(
            worktree.starts_with(".context-pilot/worktrees/") && worktree.ends_with(phase),
            "{record:#}"
        );
        assert!(
            phases[phase]["branch"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{phase}")),
            "{record:#}"
        );
        assert_eq!(phases[phase]["status"], "merged", "{record:#}");
        assert_eq!(phases[phase]["agent"], "builtin", "{record:#}");
        assert!(phases[phase]["base_commit"].is_string(), "{record:#}");
        let merge = phases[phase]["merge_commit"].as_str().unwrap();
        let subject = git(dir, &["log", "-1", "--format=%s", merge]);
        assert!(
            subject.starts_with(&format!("Merge phase {phase} ")),
            "{subject}"
        );
    }
    assert_eq!(phases["integrate"]["status"], "merged", "{record:#}");
    assert_eq!(
        std::fs::read_to_string(dir.join("api.txt")).unwrap(),
        "api was here\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ui.txt")).unwrap(),
        "ui was here\n"
    );
    // The dependent phase read both results.
    let integrate = seen.bodies("integrate");
    let last = integrate.last().unwrap();
    assert!(
        last.contains("api was here") && last.contains("ui was here"),
        "{last}"
    );
    // Progress lines of the phases at once carry their id; one summary line per phase.
    assert!(shown.contains("[api]") && shown.contains("[ui]"), "{shown}");
    for phase in ["api", "ui", "integrate"] {
        assert!(
            shown.contains(&format!("phase {phase}: merged, ")),
            "{shown}"
        );
    }
    assert_nothing_left(dir, &shown);
    assert_clean(dir, "");
}

const FAST_SLOW: &str = "\
name: fast-slow
phases:
  - id: fast
    depends_on: []
    prompt: PHASE-fast-MARK Write fast.txt.
  - id: slow
    depends_on: []
    prompt: PHASE-slow-MARK Write slow.txt.
  - id: after
    depends_on: [fast]
    prompt: PHASE-after-MARK Read fast.txt.
";

/// A phase starts as soon as its dependencies are merged, not when the whole wave is done:
/// slow's first request is held until after's first request arrives, which can only happen
/// while slow still runs (fast finished, was merged, and its dependent started).
#[test]
fn a_dependent_starts_when_its_dependency_is_merged_while_another_phase_still_runs() {
    let repo = prepare(FAST_SLOW);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = Script {
        phases: vec![
            ("fast", vec![write("fast.txt", "fast was here\n")]),
            ("slow", vec![write("slow.txt", "slow was here\n")]),
            ("after", vec![read("fast.txt")]),
        ],
    };
    let seen = Arc::new(Seen::default());
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        script,
        Arc::clone(&seen),
        Some(("slow", "after", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // after's first request arrived while slow's first request was unanswered.
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{shown}");
    let record = run_record(dir).unwrap();
    let phases = &record["phase_runs"];
    for phase in ["fast", "slow", "after"] {
        assert_eq!(phases[phase]["status"], "merged", "{record:#}");
        // Each ran beside another, so in a worktree of its own.
        assert!(phases[phase]["worktree"].is_string(), "{record:#}");
    }
    // after's branch was made from the run's branch with fast merged: it read fast's work.
    let after = seen.bodies("after");
    assert!(after.last().unwrap().contains("fast was here"), "{after:?}");
    for file in ["fast.txt", "slow.txt"] {
        assert!(dir.join(file).exists(), "{file}\n{shown}");
    }
    assert_nothing_left(dir, &shown);
    assert_clean(dir, "");
}

#[test]
fn a_conflict_exits_3_naming_the_file_and_both_phases_and_leaves_the_tree_clean() {
    let repo = prepare(CLASH);
    let dir = repo.path();
    let server = serve_script(clash_script());
    // The person's own notification command, from their user config, gets the alert as JSON.
    let home = tempfile::tempdir().unwrap();
    let alerts = home.path().join("alerts.jsonl");
    std::fs::create_dir_all(home.path().join("context-pilot")).unwrap();
    std::fs::write(
        home.path().join("context-pilot/config.json"),
        serde_json::json!({"notify": {"command": format!("cat >> '{}'", alerts.display())}})
            .to_string(),
    )
    .unwrap();
    let out = command(dir, &server, &[".context-pilot/workflows/graph.yaml"])
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains('\x07'),
        "no bell: {shown}"
    );
    let alert: Value = serde_json::from_str(
        std::fs::read_to_string(&alerts)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(alert["event"], "conflict", "{alert}");
    assert_eq!(alert["phase"], "right", "{alert}");
    assert!(
        alert["message"].as_str().unwrap().contains("shared.txt"),
        "{alert}"
    );
    assert_clash_stopped(dir, &shown);
}

/// A trusted project's test command runs in each phase's worktree (a linked worktree of a
/// trusted repository is trusted as it is while its configuration is the same), and the
/// phases still merge.
#[test]
fn the_stop_gate_runs_the_tests_in_each_phases_worktree() {
    let repo = git_repo();
    let dir = repo.path();
    let log = tempfile::NamedTempFile::new().unwrap();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/graph.yaml"),
        "name: tested\nphases:\n  - id: api\n    depends_on: []\n    prompt: PHASE-api-MARK Write src/api.rs.\n  - id: ui\n    depends_on: []\n    prompt: PHASE-ui-MARK Write src/ui.rs.\n",
    )
    .unwrap();
    let command = format!("pwd >> '{}'", log.path().display());
    std::fs::write(
        dir.join(".context-pilot/config.json"),
        serde_json::json!({"checkpoint": {"tests": {"command": command}}}).to_string(),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    cp_e2e::trust(dir);
    let server = serve_script(Script {
        phases: vec![
            ("api", vec![write("src/api.rs", "pub fn api() {}\n")]),
            ("ui", vec![write("src/ui.rs", "pub fn ui() {}\n")]),
        ],
    });
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let ran = std::fs::read_to_string(log.path()).unwrap();
    for phase in ["api", "ui"] {
        assert!(
            ran.lines()
                .any(|l| l.contains(".context-pilot/worktrees/")
                    && l.ends_with(&format!("/{phase}"))),
            "tests of {phase} did not run in its worktree: {ran}\n{shown}"
        );
    }
    assert!(dir.join("src/api.rs").exists() && dir.join("src/ui.rs").exists());
    assert_nothing_left(dir, &shown);
    // The worktrees were trusted without a record of their own: the person's store names none.
    let store =
        std::fs::read_to_string(cp_e2e::config_home().join("context-pilot/trust.json")).unwrap();
    let root = dir.canonicalize().unwrap();
    assert!(store.contains(&*root.to_string_lossy()), "{store}");
    let worktrees = root.join(".context-pilot/worktrees");
    assert!(!store.contains(&*worktrees.to_string_lossy()), "{store}");
}

/// Smart restart works per phase: one phase's context fills, it hands off and goes on in a
/// fresh session in its own worktree (the auto-commit on its branch), while the phase beside
/// it never sees a handoff; both merge.
#[test]
fn a_phase_whose_context_fills_restarts_alone_in_its_worktree() {
    const HANDOFF_MARK: &str = "Submit your handoff now via Checkpoint_handoff";
    let repo = prepare(TWO);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let bodies: Arc<Mutex<Vec<(&'static str, String)>>> = Arc::default();
    let log = Arc::clone(&bodies);
    server.answer_side_requests(move |request| {
        let body = &request.raw_body;
        let phase = ["api", "ui"].into_iter().find(|p| body.contains(&marker(p)))?;
        log.lock().unwrap().push((phase, body.clone()));
        let results = body.matches("\"tool_result\"").count();
        let (file, usage) = if phase == "api" {
            ("api.txt", 150_000)
        } else {
            ("ui.txt", 1_000)
        };
        let turn = if body.contains(HANDOFF_MARK) && results < 2 {
            let handoff = r#"{"reason": "threshold_critical",
                "completed": [{"file": "api.txt", "status": "partial"}],
                "remaining": [{"file": "api.txt", "description": "HANDOFF-REMAINING finish api.txt"}],
                "decisions": [], "files_modified": ["api.txt"]}"#;
            cp_e2e::Turn::tool_calls(&[("h1", "Checkpoint_handoff", handoff)])
        } else if body.contains(HANDOFF_MARK) {
            cp_e2e::Turn::text("Handoff recorded.")
        } else if body.contains("HANDOFF-REMAINING") {
            // The fresh session, told what is left.
            cp_e2e::Turn::text("Finished after the restart.")
        } else if results == 0 {
            let args = serde_json::json!({"file_path": file, "content": format!("{phase}\n")});
            cp_e2e::Turn::tool_calls(&[("w1", "File_write", &args.to_string())])
                .with_usage(usage, 0, 50)
        } else {
            cp_e2e::Turn::text("Done.")
        };
        Some(anthropic::reply(&turn))
    });
    let args = [
        ".context-pilot/workflows/graph.yaml",
        "--context-threshold",
        "50",
    ];
    let out = command_with_restarts(dir, &server, &args).output().unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let bodies = bodies.lock().unwrap();
    let of = |phase: &str| -> Vec<&String> {
        bodies
            .iter()
            .filter(|(p, _)| *p == phase)
            .map(|(_, b)| b)
            .collect()
    };
    assert!(
        of("api").iter().any(|b| b.contains("HANDOFF-REMAINING")),
        "api's fresh session was not given its handoff:\n{shown}"
    );
    assert!(
        of("ui").iter().all(|b| !b.contains(HANDOFF_MARK)),
        "ui was asked for a handoff:\n{shown}"
    );
    // The auto-commit before the restart is api's, on its branch, with its file.
    let history = git(dir, &["log", "--format=%s", "--name-only"]);
    let restart = history
        .split("auto-commit before restart 1 of phase ")
        .nth(1)
        .unwrap_or_else(|| panic!("no restart commit:\n{history}\n{shown}"));
    assert!(restart.starts_with("api"), "{history}");
    assert!(
        restart.lines().take(6).any(|l| l == "api.txt"),
        "the restart's auto-commit does not hold api.txt:\n{history}\n{shown}"
    );
    assert!(
        !history.contains("restart 1 of phase ui"),
        "ui restarted:\n{history}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("api.txt")).unwrap(),
        "api\n"
    );
    assert_eq!(std::fs::read_to_string(dir.join("ui.txt")).unwrap(), "ui\n");
    let record = run_record(dir).unwrap();
    for phase in ["api", "ui"] {
        assert_eq!(record["phase_runs"][phase]["status"], "merged", "{record}");
    }
    assert_nothing_left(dir, &shown);
}
