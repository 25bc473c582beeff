//! Seed 004: workflows with approval gates, run through the restart loop against real git
//! repositories, with a scripted driver and scripted answers; and a run killed mid-phase and
//! resumed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::Repo;
use crate::util::scripted::{EchoDriver, ListPrompter, run_to_end};
use cp_base::Project;
use cp_orchestrate::{
    Action, EXIT_ABORTED, RUN_FILE, RunArgs, RunOptions, RunState, RunStatus, RunStore, Stage,
    WorkflowError, WorkflowEvent, resume_workflow, run_workflow,
};

fn repo() -> Repo {
    Repo::with_commit(&[("README.md", "# demo\n")])
}

/// Writes `yaml` as `.context-pilot/workflows/<name>.yaml` and commits it.
fn workflow(repo: &Repo, name: &str, yaml: &str) -> PathBuf {
    let rel = format!(".context-pilot/workflows/{name}.yaml");
    repo.write(&rel, yaml);
    repo.commit_all("add workflow");
    repo.root().join(rel)
}

fn run(
    repo: &Repo,
    file: &Path,
    driver: &mut EchoDriver,
    prompter: &mut ListPrompter,
) -> Result<cp_orchestrate::WorkflowOutcome, WorkflowError> {
    run_workflow(
        &repo.project(),
        file,
        driver,
        prompter,
        &RunOptions::default(),
    )
}

fn saved(project: &Project, run_id: &str) -> RunState {
    RunStore::new(project).load(run_id).unwrap()
}

const THREE: &str = "\
name: three
phases:
  - id: plan
    prompt: Plan it.
    checkpoint: { approval_required: true }  # the old name of `approval:`; must keep loading
  - id: implement
    prompt: Build it.
  - id: review
    prompt: Review it.
";

#[test]
fn approval_continue_runs_every_phase_and_records_the_decision() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(outcome.exit_code(), 0);
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(driver.phases(), ["plan", "implement", "review"]);
    assert_eq!(driver.prompt(0), "Plan it.");
    let request = &prompter.requests[0];
    assert!(request.approval);
    assert_eq!(request.prompt, "Continue with the next phase?");
    let labels: Vec<&str> = request.choices.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["Continue", "Abort"]);
    let ctx = &outcome.context;
    assert_eq!(ctx.approvals.len(), 1);
    assert_eq!(ctx.approvals[0].phase, "plan");
    assert_eq!(ctx.approvals[0].decision, Action::Continue);
    assert!(humantime::parse_rfc3339(&ctx.approvals[0].timestamp).is_ok());
    // The saved run says the same, and it is finished.
    let state = saved(&repo.project(), &outcome.run_id);
    assert_eq!(state.status, RunStatus::Completed);
    assert_eq!(state.position, None);
    assert_eq!(state.context, outcome.context);
    // Each phase was committed by the restart loop.
    let log = repo.git(&["log", "--format=%s"]);
    for phase in ["plan", "implement", "review"] {
        assert!(
            log.contains(&format!("context-pilot: phase {phase} completed")),
            "{log}"
        );
    }
    let lines = prompter.lines();
    assert!(
        lines
            .iter()
            .any(|l| l == "phase plan: chose \"Continue\" (continue)"),
        "{lines:?}"
    );
}

#[test]
fn abort_stops_the_run_with_exit_code_2_and_it_cannot_be_resumed() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Abort", None)]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(outcome.status, RunStatus::Aborted);
    assert_eq!(outcome.exit_code(), EXIT_ABORTED);
    assert_eq!(outcome.exit_code(), 2);
    assert_eq!(driver.phases(), ["plan"]);
    assert_eq!(outcome.context.approvals[0].decision, Action::Abort);
    let state = saved(&repo.project(), &outcome.run_id);
    assert_eq!(state.status, RunStatus::Aborted);
    let err = resume_workflow(
        &repo.project(),
        &outcome.run_id,
        None,
        &mut EchoDriver::new(&repo.project()),
        &mut ListPrompter::default(),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("already aborted; start a new run"),
        "{err}"
    );
}

const REVIEWED: &str = "\
name: reviewed
phases:
  - id: plan
    prompt: Plan it.
    approval:
      prompt: Plan ok?
      options:
        - label: Continue
          on_select: { action: continue }
        - label: Redo
          with_feedback: true
          on_select: { action: repeat_phase, target: current }
  - id: implement
    prompt: Build it.
  - id: review
    prompt: Review it.
    approval:
      prompt: Done?
      options:
        - label: Done
          on_select: { action: continue }
        - label: Back to plan
          with_feedback: true
          on_select: { action: repeat_phase, target: plan }
";

#[test]
fn repeat_current_reruns_the_phase_counts_it_and_passes_the_feedback_once() {
    let repo = repo();
    let file = workflow(&repo, "reviewed", REVIEWED);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[
        ("Redo", Some("  Cover the error paths too.  ")),
        ("Continue", None),
        ("Done", None),
    ]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(driver.phases(), ["plan", "plan", "implement", "review"]);
    let counts = &outcome.context.phases.iteration_counts;
    assert_eq!(counts["plan"], 2);
    assert_eq!(counts["implement"], 1);
    assert_eq!(counts["review"], 1);
    let record = &outcome.context.approvals[0];
    assert_eq!(record.decision, Action::RepeatPhase);
    assert_eq!(record.target.as_deref(), Some("plan"));
    assert_eq!(
        record.feedback.as_deref(),
        Some("Cover the error paths too.")
    );
    // The feedback goes into the next phase's prompt (the repeated plan), and only that one.
    assert!(
        driver
            .prompt(1)
            .starts_with("Plan it.\n\n## Feedback from the approval gate after phase `plan`")
    );
    assert!(
        driver
            .prompt(1)
            .contains("The reviewer chose \"Redo\" and wrote:\n\n> Cover the error paths too.")
    );
    assert_eq!(driver.prompt(2), "Build it.");
    // The second plan checkpoint knows it is the second iteration.
    assert_eq!(prompter.requests[1].iteration, 2);
}

#[test]
fn repeat_to_an_earlier_phase_jumps_back_and_reruns_what_follows() {
    let repo = repo();
    let file = workflow(&repo, "reviewed", REVIEWED);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[
        ("Continue", None),
        ("Back to plan", Some("The API shape is wrong")),
        ("Continue", None),
        ("Done", None),
    ]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(
        driver.phases(),
        ["plan", "implement", "review", "plan", "implement", "review"]
    );
    let counts = &outcome.context.phases.iteration_counts;
    assert_eq!(
        (counts["plan"], counts["implement"], counts["review"]),
        (2, 2, 2)
    );
    let decisions: Vec<(String, Action, Option<String>)> = outcome
        .context
        .approvals
        .iter()
        .map(|r| (r.phase.clone(), r.decision, r.target.clone()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("plan".into(), Action::Continue, None),
            ("review".into(), Action::RepeatPhase, Some("plan".into())),
            ("plan".into(), Action::Continue, None),
            ("review".into(), Action::Continue, None),
        ]
    );
    assert!(driver.prompt(3).contains("The API shape is wrong"));
}

const SKIPPING: &str = "\
name: skipping
phases:
  - id: plan
    prompt: Plan it.
    approval:
      prompt: Which way?
      options:
        - label: Everything
          on_select: { action: continue }
        - label: No docs
          with_feedback: true
          on_select: { action: skip_phases, phases: [docs, polish] }
  - id: implement
    prompt: Build it.
  - id: docs
    prompt: Document it.
  - id: polish
    prompt: Polish it.
  - id: release
    prompt: Release it.
";

#[test]
fn skip_phases_are_not_run_and_are_recorded() {
    let repo = repo();
    let file = workflow(&repo, "skipping", SKIPPING);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("No docs", Some("Not needed for the MVP"))]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(driver.phases(), ["plan", "implement", "release"]);
    assert_eq!(outcome.context.skip_phases, ["docs", "polish"]);
    let record = &outcome.context.approvals[0];
    assert_eq!(record.decision, Action::SkipPhases);
    assert_eq!(
        record.skipped.as_deref(),
        Some(&["docs".to_owned(), "polish".to_owned()][..])
    );
    assert_eq!(record.feedback.as_deref(), Some("Not needed for the MVP"));
    assert!(driver.prompt(1).contains("Not needed for the MVP"));
    assert!(!outcome.context.phases.iteration_counts.contains_key("docs"));
    let skipped: Vec<&WorkflowEvent> = prompter
        .events
        .iter()
        .filter(|e| matches!(e, WorkflowEvent::PhaseSkipped { .. }))
        .collect();
    assert_eq!(skipped.len(), 2);
    assert!(!repo.root().join("work/docs.txt").exists());
}

const CONDITIONS: &str = "\
name: conditions
context:
  feature: { flags: [backend] }
  subagents_spawned: 0
phases:
  - id: a
    prompt: A
    approval:
      condition: \"context.feature.flags.includes('backend')\"
      prompt: Backend review?
      options: [{ label: Go, on_select: { action: continue } }]
  - id: b
    prompt: B
    approval:
      condition: \"context.subagents_spawned > 0 || context.phases.iteration_counts[phase.id] > 1\"
      prompt: Never asked
      options: [{ label: Stop, on_select: { action: abort } }]
  - id: c
    prompt: C
    approval:
      condition: \"context.nothing.here > 1\"
      prompt: Never asked either
      options: [{ label: Stop, on_select: { action: abort } }]
";

#[test]
fn conditions_true_false_and_failing() {
    let repo = repo();
    let file = workflow(&repo, "conditions", CONDITIONS);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Go", None)]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(driver.phases(), ["a", "b", "c"]);
    // Only the true condition asked.
    assert_eq!(prompter.requests.len(), 1);
    assert_eq!(prompter.requests[0].prompt, "Backend review?");
    assert_eq!(outcome.context.approvals.len(), 1);
    assert!(
        prompter
            .events
            .iter()
            .any(|e| matches!(e, WorkflowEvent::ApprovalSkipped { phase } if phase == "b"))
    );
    let failed = prompter
        .events
        .iter()
        .find_map(|e| match e {
            WorkflowEvent::ConditionFailed { phase, error } if phase == "c" => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        failed.starts_with("condition `context.nothing.here > 1` failed: "),
        "{failed}"
    );
}

#[test]
fn vars_fill_prompts_and_show_files_and_flags_override_them() {
    let repo = repo();
    let file = workflow(
        &repo,
        "vars",
        "name: vars\nvars: { out: docs/x, who: nobody }\ncontext: { team: { lead: ada } }\nphases:\n  - id: plan\n    prompt: \"Write {{out}}/plan.md for {{who}} and {{team.lead}} (run {{run_id}}, phase {{phase}})\"\n    approval:\n      prompt: \"Read {{out}}/plan.md?\"\n      show_files: [\"{{out}}/plan.md\", \"{{out}}/notes-{{ who }}.md\"]\n      options: [{ label: Ok, on_select: { action: continue } }]\n",
    );
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Ok", None)]);
    let options = RunOptions {
        vars: [("who".to_owned(), "grace".to_owned())].into(),
        ..RunOptions::default()
    };
    let outcome =
        run_workflow(&repo.project(), &file, &mut driver, &mut prompter, &options).unwrap();
    assert_eq!(
        driver.prompt(0),
        format!(
            "Write docs/x/plan.md for grace and ada (run {}, phase plan)",
            outcome.run_id
        )
    );
    assert_eq!(prompter.requests[0].prompt, "Read docs/x/plan.md?");
    assert_eq!(
        prompter.requests[0].files,
        ["docs/x/plan.md", "docs/x/notes-grace.md"]
    );
    assert_eq!(outcome.context.vars["who"], "grace");
}

#[test]
fn bad_workflows_fail_before_anything_runs_with_the_file_and_phase_named() {
    let repo = repo();
    let unknown_var = workflow(
        &repo,
        "badvar",
        "name: v\nphases:\n  - id: plan\n    prompt: \"Write {{out_dir}}/plan.md\"\n",
    );
    let mut driver = EchoDriver::new(&repo.project());
    let err = run(
        &repo,
        &unknown_var,
        &mut driver,
        &mut ListPrompter::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("badvar.yaml, phase 'plan': {{out_dir}} is not a var")
            && err.contains("--var out_dir=VALUE"),
        "{err}"
    );
    let bad_target = workflow(
        &repo,
        "badtarget",
        "name: t\nphases:\n  - id: a\n    prompt: A\n    approval:\n      options: [{label: R, on_select: {action: repeat_phase, target: b}}]\n",
    );
    let err = run(
        &repo,
        &bad_target,
        &mut driver,
        &mut ListPrompter::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("badtarget.yaml, phase 'a': option 'R': repeat_phase target 'b'"),
        "{err}"
    );
    let missing = repo.root().join("nope.yaml");
    let err = run(&repo, &missing, &mut driver, &mut ListPrompter::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("workflow {}", missing.display())),
        "{err}"
    );
    assert!(driver.runs.is_empty());
    assert!(!repo.project().runs_dir().exists());
}

#[test]
fn a_dirty_tree_is_refused_but_earlier_run_records_are_not_dirt() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    // A finished run leaves its final context behind, kept out of git status (issue 37: a
    // run leaves nothing in the project's tree the person did not change).
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    run(
        &repo,
        &file,
        &mut EchoDriver::new(&repo.project()),
        &mut prompter,
    )
    .unwrap();
    assert!(repo.project().runs_dir().exists());
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    run(
        &repo,
        &file,
        &mut EchoDriver::new(&repo.project()),
        &mut prompter,
    )
    .unwrap();
    // Someone's own edit is not.
    repo.write("README.md", "# mine\n");
    let err = run(
        &repo,
        &file,
        &mut EchoDriver::new(&repo.project()),
        &mut ListPrompter::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("uncommitted changes (1 files: README.md)"),
        "{err}"
    );
}

#[test]
fn a_failed_phase_marks_the_run_failed_and_resume_reruns_that_phase() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    let mut driver = EchoDriver::new(&repo.project());
    driver.fail.push("implement".into());
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let err = run(&repo, &file, &mut driver, &mut prompter).unwrap_err();
    let WorkflowError::Phase { run_id, .. } = &err else {
        panic!("{err}");
    };
    assert!(
        err.to_string().contains("provider error in implement"),
        "{err}"
    );
    assert!(
        err.to_string()
            .ends_with(&format!("resume with --resume {run_id}")),
        "{err}"
    );
    let state = saved(&repo.project(), run_id);
    assert_eq!(state.status, RunStatus::Failed);
    let mut driver = EchoDriver::new(&repo.project());
    let outcome = resume_workflow(
        &repo.project(),
        run_id,
        Some(&file),
        &mut driver,
        &mut ListPrompter::default(),
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!(driver.phases(), ["implement", "review"]);
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.context.phases.iteration_counts["implement"], 1);
}

#[test]
fn a_prompt_that_fails_stops_the_run_at_the_approval_gate_which_resume_asks_again() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    let mut driver = EchoDriver::new(&repo.project());
    // No answer: the prompter fails, as the terminal's does when its input ends.
    let mut prompter = ListPrompter::default();
    let err = run_workflow(
        &repo.project(),
        &file,
        &mut driver,
        &mut prompter,
        &RunOptions::default(),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("approval gate after phase 'plan': test script has no answer"),
        "{message}"
    );
    let WorkflowError::Prompt { run_id, .. } = err else {
        panic!()
    };
    let state = saved(&repo.project(), &run_id);
    assert_eq!(state.status, RunStatus::Running);
    assert_eq!(state.position.as_ref().unwrap().stage, Stage::Approval);
    // Resume asks the approval gate again without running the plan again.
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let outcome = resume_workflow(
        &repo.project(),
        &run_id,
        None,
        &mut driver,
        &mut prompter,
        &RunOptions::default(),
    )
    .unwrap();
    assert_eq!(driver.phases(), ["implement", "review"]);
    assert_eq!(outcome.context.phases.iteration_counts["plan"], 1);
    assert_eq!(outcome.context.approvals.len(), 1);
}

#[test]
fn the_sample_workflow_is_valid_and_runs() {
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.context-pilot/workflows/feature.yaml");
    let repo = repo();
    let file = workflow(&repo, "feature", &std::fs::read_to_string(sample).unwrap());
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[
        ("Continue", None),
        ("Back to implementation", Some("handle the empty stack")),
        ("Done", None),
    ]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(
        driver.phases(),
        ["plan", "implement", "review", "implement", "review"]
    );
    assert!(
        driver
            .prompt(0)
            .contains("docs/features/the-feature/plan.md")
    );
    assert_eq!(
        prompter.requests[1].files,
        [
            "docs/features/the-feature/plan.md",
            "docs/features/the-feature/review.md"
        ]
    );
    assert!(driver.prompt(3).contains("handle the empty stack"));
    assert_eq!(outcome.exit_code(), 0);
}

const CHILD_ENV: &str = "CP_CHECKPOINT_TEST_WORKFLOW_CHILD";

/// Child mode for the kill test: runs the workflow, answering the plan approval, and hangs in
/// `implement` after writing the marker.
#[test]
#[ignore = "helper process, started by name by a_run_killed_mid_phase_resumes_and_finishes_with_correct_counts"]
fn workflow_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.split('|');
    let (root, file, marker) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let project = Project::at(root);
    let mut driver = EchoDriver::new(&project);
    driver.hang = Some(("implement".into(), PathBuf::from(marker)));
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let result = run_workflow(
        &project,
        Path::new(file),
        &mut driver,
        &mut prompter,
        &RunOptions::default(),
    );
    println!("child finished: {:?}", result.map(|o| o.status));
}

#[test]
fn a_run_killed_mid_phase_resumes_and_finishes_with_correct_counts() {
    let repo = repo();
    let file = workflow(&repo, "three", THREE);
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("implement-started");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "workflows::workflow_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            CHILD_ENV,
            format!(
                "{}|{}|{}",
                repo.root().display(),
                file.display(),
                marker.display()
            ),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Safety limit only: the child reaches the marker in well under a second.
    cp_e2e::eventually(
        "the child to reach the implement phase",
        Duration::from_secs(60),
        || {
            marker.exists() || {
                assert!(child.try_wait().unwrap().is_none(), "child exited early");
                false
            }
        },
    );
    child.kill().unwrap(); // SIGKILL, mid-phase
    child.wait().unwrap();

    let store = RunStore::new(&repo.project());
    let runs: Vec<String> = std::fs::read_dir(store.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run_id = &runs[0];
    assert!(store.run_dir(run_id).join(RUN_FILE).is_file());
    let crashed = store.load(run_id).unwrap();
    assert_eq!(crashed.status, RunStatus::Running);
    let position = crashed.position.clone().unwrap();
    assert_eq!(
        (position.phase.as_str(), position.stage),
        ("implement", Stage::Phase)
    );
    assert_eq!(crashed.context.phases.iteration_counts["plan"], 1);
    assert_eq!(crashed.context.phases.iteration_counts["implement"], 1);
    assert_eq!(crashed.context.approvals.len(), 1);

    let mut driver = EchoDriver::new(&repo.project());
    let args = RunArgs {
        resume: Some(run_id.clone()),
        ..RunArgs::default()
    };
    let (code, text) = run_to_end(
        &repo.project(),
        &args,
        &mut driver,
        &mut ListPrompter::default(),
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("resuming workflow three (run {run_id}")),
        "{text}"
    );
    // The phase in progress ran again, then the rest.
    assert_eq!(driver.phases(), ["implement", "review"]);
    let done = store.load(run_id).unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    let counts = &done.context.phases.iteration_counts;
    assert_eq!(
        (counts["plan"], counts["implement"], counts["review"]),
        (1, 1, 1)
    );
    assert_eq!(done.context.approvals.len(), 1);
    // The killed session's partial write and the re-run are both in the phase's commit.
    let implement = repo.git(&["show", "HEAD~1:work/implement.txt"]);
    assert_eq!(implement.lines().count(), 2, "{implement}");
}

/// Issue 14 §5: a `repeat_phase` answered 300 times used to run the phase 300 times (and
/// commit each). The phase runs at most `max_iterations` times (default 10), then the run
/// stops with an error that names the phase, the limit and what to do.
#[test]
fn a_repeat_answered_300_times_stops_at_the_iteration_cap() {
    let repo = repo();
    let file = workflow(&repo, "reviewed", REVIEWED);
    let redo_300_times = || ListPrompter::new(&[("Redo", Some("again")); 300]);
    let args = RunArgs {
        workflow: Some(file),
        ..RunArgs::default()
    };
    let mut driver = EchoDriver::new(&repo.project());
    let (code, text) = run_to_end(&repo.project(), &args, &mut driver, &mut redo_300_times());
    assert_eq!(code, 1, "{text}");
    assert_eq!(driver.phases(), vec!["plan"; 10], "{text}");
    assert!(
        text.contains("phase 'plan' already ran 10 times, its limit (max_iterations 10)"),
        "{text}"
    );

    // A per-phase limit overrides the default; the workflow-level one applies otherwise.
    let capped = REVIEWED.replace(
        "    prompt: Plan it.\n",
        "    prompt: Plan it.\n    max_iterations: 3\n",
    );
    let file = workflow(&repo, "capped", &format!("max_iterations: 7\n{capped}"));
    let args = RunArgs {
        workflow: Some(file),
        ..RunArgs::default()
    };
    let mut driver = EchoDriver::new(&repo.project());
    let (code, text) = run_to_end(&repo.project(), &args, &mut driver, &mut redo_300_times());
    assert_eq!(code, 1, "{text}");
    assert_eq!(driver.phases(), vec!["plan"; 3], "{text}");
    assert!(text.contains("(max_iterations 3)"), "{text}");
}

/// Phases listed out of order, tied together with `depends_on`.
const GRAPH: &str = "\
name: graph
phases:
  - id: integrate
    depends_on: [api, ui]
    prompt: Wire them together.
  - id: ui
    depends_on: [plan]
    prompt: Build the UI.
  - id: plan
    depends_on: []
    prompt: Plan it.
    approval: { approval_required: true }
  - id: api
    depends_on: [plan]
    prompt: Build the API.
";

#[test]
fn depends_on_sets_the_order_phases_run_in() {
    let repo = repo();
    let file = workflow(&repo, "graph", GRAPH);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let outcome = run(&repo, &file, &mut driver, &mut prompter).unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    // Each after what it waits for; of those ready together, the one listed first.
    assert_eq!(driver.phases(), ["plan", "ui", "api", "integrate"]);
    assert_eq!(prompter.requests.len(), 1, "plan's approval gate");
}

#[test]
fn a_graph_that_cannot_run_is_refused_when_loaded() {
    let repo = repo();
    let cycle = GRAPH.replace("depends_on: []", "depends_on: [integrate]");
    let file = workflow(&repo, "cycle", &cycle);
    let mut driver = EchoDriver::new(&repo.project());
    let mut prompter = ListPrompter::new(&[]);
    let message = run(&repo, &file, &mut driver, &mut prompter)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("depends_on forms a cycle: integrate → api → plan → integrate"),
        "{message}"
    );
    let unknown = GRAPH.replace("depends_on: [api, ui]", "depends_on: [api, ux]");
    let file = workflow(&repo, "unknown", &unknown);
    let message = run(&repo, &file, &mut driver, &mut prompter)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("phase 'integrate': depends_on names 'ux', which is not a phase"),
        "{message}"
    );
    assert!(driver.phases().is_empty(), "nothing ran");
}
