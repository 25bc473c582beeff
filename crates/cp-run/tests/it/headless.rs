//! `context-pilot run --headless` on the terminal: approval gates asked there or answered from
//! a file, the progress lines, and the exit code. The agent is cp-orchestrate's stand-in
//! (`EchoDriver`, which writes a line a phase); the workflow engine itself is tested in
//! cp-orchestrate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};

use cp_base::Project;
use cp_orchestrate::test_support::EchoDriver;
use cp_orchestrate::{RestartOverrides, RunArgs, RunOptions, RunStatus, RunStore, Stage};
use cp_run::run_headless;

const THREE: &str = "\
name: three
phases:
  - id: plan
    prompt: Plan it.
    approval: { approval_required: true }
  - id: implement
    prompt: Build it.
  - id: review
    prompt: Review it.
";

/// A project (not a git repository: nothing is committed) with the workflow `THREE`.
fn project(dir: &Path) -> (Project, PathBuf) {
    let file = dir.join("three.yaml");
    std::fs::write(&file, THREE).unwrap();
    (Project::at(dir), file)
}

fn args(file: PathBuf, answers: Option<PathBuf>) -> RunArgs {
    RunArgs {
        workflow: Some(file),
        answers,
        options: RunOptions {
            overrides: RestartOverrides {
                no_auto_commit: true,
                ..RestartOverrides::default()
            },
            ..RunOptions::default()
        },
        ..RunArgs::default()
    }
}

/// Runs headless with `input` on the terminal; returns the exit code and what was printed.
fn headless(
    project: &Project,
    args: &RunArgs,
    agent: &mut EchoDriver,
    input: &[u8],
) -> (i32, String) {
    let mut out = Vec::new();
    let code = run_headless(project, args, agent, &mut &input[..], &mut out);
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn an_abort_answered_on_the_terminal_ends_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let (project, file) = project(dir.path());
    let mut agent = EchoDriver::new(&project);
    let (code, text) = headless(&project, &args(file, None), &mut agent, b"7\n2\n");
    assert_eq!(code, 2, "{text}");
    for line in [
        "[context-pilot] starting workflow three (run three-",
        "[context-pilot] phase plan: started (iteration 1)",
        "[context-pilot] phase plan: completed (0 restarts)",
        "== Approval gate after phase 'plan' (iteration 1) ==",
        "  1) Continue\n  2) Abort\nChoose 1-2: ",
        "'7' is not a choice; type a number from 1 to 2 or a label",
        "[context-pilot] phase plan: chose \"Abort\" (abort)",
        "aborted (exit code 2)",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    assert_eq!(agent.phases(), ["plan"]);
}

#[test]
fn terminal_input_that_ends_before_an_answer_fails_the_run_with_the_alternative() {
    let dir = tempfile::tempdir().unwrap();
    let (project, file) = project(dir.path());
    let (code, text) = headless(
        &project,
        &args(file, None),
        &mut EchoDriver::new(&project),
        b"",
    );
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("input ended before an answer was given") && text.contains("--answers FILE"),
        "{text}"
    );
}

#[test]
fn an_answers_file_answers_in_order_and_an_answer_that_fits_no_option_stops_at_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (project, file) = project(dir.path());
    let answers = dir.path().join("answers.json");

    std::fs::write(&answers, r#"[{"phase": "plan", "option": "Continue"}]"#).unwrap();
    let mut agent = EchoDriver::new(&project);
    let (code, text) = headless(
        &project,
        &args(file.clone(), Some(answers.clone())),
        &mut agent,
        b"",
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("Answer from "), "{text}");
    assert_eq!(agent.phases(), ["plan", "implement", "review"]);

    std::fs::write(&answers, "- { phase: plan, option: Maybe }\n").unwrap();
    let (code, text) = headless(
        &project,
        &args(file.clone(), Some(answers.clone())),
        &mut EchoDriver::new(&project),
        b"",
    );
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "answer #1: 'Maybe' is not an option here; the options are 1) Continue, 2) Abort"
        ),
        "{text}"
    );
    // The run waits at the approval gate, where `--resume` asks again.
    let store = RunStore::new(&project);
    let stopped = std::fs::read_dir(store.dir())
        .unwrap()
        .flatten()
        .filter_map(|e| store.load(&e.file_name().to_string_lossy()).ok())
        .find(|state| state.status == RunStatus::Running)
        .expect("the stopped run is saved");
    assert_eq!(stopped.position.unwrap().stage, Stage::Approval);

    std::fs::write(&answers, "[]").unwrap();
    let (code, text) = headless(
        &project,
        &args(file, Some(answers)),
        &mut EchoDriver::new(&project),
        b"",
    );
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("has no answer left (0 used)"), "{text}");
}

#[test]
fn an_answers_file_that_is_not_a_list_fails_before_the_run_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (project, file) = project(dir.path());
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, r#"{"option": 1}"#).unwrap();
    let mut agent = EchoDriver::new(&project);
    let (code, text) = headless(&project, &args(file, Some(answers)), &mut agent, b"");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("expected a list"), "{text}");
    assert!(agent.phases().is_empty());
}
