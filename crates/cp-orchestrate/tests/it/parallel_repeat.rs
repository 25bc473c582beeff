//! Issue 26: `repeat_phase` in a workflow with `depends_on` runs its target again and then
//! every phase that depends on it, stopping and setting aside (on a kept branch) a dependent
//! still running; the target starts at once beside unrelated phases; and a resume after a
//! kill mid-merge leaves nothing behind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::sync::Arc;

use crate::util::Repo;
use crate::util::scripted::{EchoDriver, ListPrompter};
use crate::util::writers::{GRAPH, Writers, no_leftovers, options, phase_branches, workflow};
use cp_orchestrate::{
    DriverFactory, PhaseStatus, RunOptions, RunStatus, resume_workflow, run_workflow,
};

/// `repeat_phase` answered at a later gate runs its target again, and then every phase that
/// depends on it and already ran (their input changed), the gate's own phase included.
#[test]
fn a_repeated_phase_runs_again_and_so_do_its_dependents_that_already_ran() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(
        &repo,
        "\
name: redo
phases:
  - id: plan
    depends_on: []
    prompt: P.
  - id: build
    depends_on: [plan]
    prompt: B.
  - id: docs
    depends_on: []
    prompt: D.
  - id: review
    depends_on: [build]
    prompt: R.
    approval:
      prompt: Done?
      options:
        - label: Done
          on_select: { action: continue }
        - label: Back to plan
          with_feedback: true
          on_select: { action: repeat_phase, target: plan }
",
    );
    let project = repo.project();
    let mut main = EchoDriver::new(&project);
    let mut prompter =
        ListPrompter::new(&[("Back to plan", Some("smaller steps")), ("Done", None)]);
    let writers = Arc::new(Writers::default());
    let outcome = run_workflow(
        &project,
        &file,
        &mut main,
        &mut prompter,
        &options(Arc::clone(&writers) as Arc<dyn DriverFactory>),
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let ran = writers.phases.lock().unwrap().clone();
    // plan and docs start together; after the repeat, plan, build and review run again in
    // order; docs, which does not depend on plan, does not.
    let again: Vec<&str> = ran[ran.iter().position(|p| p == "review").unwrap() + 1..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(again, ["plan", "build", "review"], "{ran:?}");
    assert_eq!(ran.iter().filter(|p| *p == "docs").count(), 1, "{ran:?}");
    for phase in ["plan", "build", "review"] {
        assert_eq!(outcome.context.iteration(phase), 2, "{phase}");
    }
    assert_eq!(outcome.context.iteration("docs"), 1);
    for (phase, record) in &outcome.phases {
        assert_eq!(record.status, PhaseStatus::Merged, "{phase}");
    }
}

/// check's gate sends the run back to plan while build, which depends on plan too, runs.
const REDO_WHILE_RUNNING: &str = "\
name: redo
phases:
  - id: plan
    depends_on: []
    prompt: P.
  - id: build
    depends_on: [plan]
    prompt: B.
  - id: check
    depends_on: [plan]
    prompt: C.
    approval:
      prompt: Good?
      options:
        - label: Done
          on_select: { action: continue }
        - label: Back to plan
          on_select: { action: repeat_phase, target: plan }
";

/// `repeat_phase` answered while a dependent of its target is still running: that dependent
/// is stopped (its own stop, not the run's), its branch is kept with every commit (and the
/// work it left uncommitted) as `cp/<run>/<phase>@1`, recorded in its `superseded`, and it
/// runs again from the new base once the target is merged again. The gate's own phase,
/// finished but not yet merged, is set aside the same way.
#[test]
fn a_dependent_still_running_when_its_dependency_is_repeated_is_stopped_kept_and_rerun() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, REDO_WHILE_RUNNING);
    let project = repo.project();
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[("Back to plan", None), ("Done", None)]);
    // build's first run holds until it is stopped: check's gate is answered while it runs.
    let writers = Arc::new(Writers {
        hold_first: Some("build"),
        ..Writers::default()
    });
    let outcome = run_workflow(
        &project,
        &file,
        &mut main,
        &mut prompter,
        &options(Arc::clone(&writers) as Arc<dyn DriverFactory>),
    )
    .unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Completed,
        "{:?}",
        prompter.lines()
    );
    let ran = writers.phases.lock().unwrap().clone();
    assert_eq!(ran.len(), 6, "{ran:?}");
    assert_eq!(
        ran[3], "plan",
        "plan runs again before its dependents: {ran:?}"
    );
    for phase in ["plan", "build", "check"] {
        assert_eq!(outcome.context.iteration(phase), 2, "{phase}");
    }
    let run = &outcome.run_id;
    let record = |id: &str| {
        outcome
            .phases
            .iter()
            .find(|(p, _)| p == id)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    // build's first run: stopped, its commit and its unfinished work kept on build@1.
    let build = record("build");
    assert_eq!(build.status, PhaseStatus::Merged);
    let kept = &build.superseded;
    assert_eq!(kept.len(), 1, "{build:?}");
    assert_eq!(kept[0].branch, format!("cp/{run}/build@1"));
    assert_eq!(kept[0].reason, "phase plan runs again");
    assert_eq!(kept[0].commits, 2, "its commit and its unfinished work");
    let log = repo.git(&["log", "--format=%s", &kept[0].branch]);
    assert!(log.contains("build: first try"), "{log}");
    assert_eq!(
        repo.git(&["show", &format!("{}:work/build-wip.txt", kept[0].branch)]),
        "half\n"
    );
    assert_eq!(
        repo.git(&["rev-parse", &kept[0].branch]).trim(),
        kept[0].commit
    );
    // check finished but was not merged when its own gate sent the run back: set aside too.
    let check = record("check");
    assert_eq!(check.status, PhaseStatus::Merged);
    assert_eq!(check.superseded[0].branch, format!("cp/{run}/check@1"));
    // The second runs started from plan's second result: their merges come after it.
    let plan = record("plan");
    assert_eq!(plan.status, PhaseStatus::Merged);
    let base = build.base_commit.unwrap();
    let first_try = repo.git(&["rev-parse", &format!("{}~1", kept[0].branch)]);
    assert_ne!(base, first_try.trim());
    assert!(
        repo.git(&["log", "--format=%s", "-1", &base])
            .contains("plan"),
        "{}",
        repo.git(&["log", "--oneline", "-5", &base])
    );
    // The run's branch has the second try only.
    assert_eq!(
        std::fs::read_to_string(repo.root().join("work/build.txt")).unwrap(),
        "build\n"
    );
    assert!(!repo.root().join("work/build-wip.txt").exists());
    let lines = prompter.lines().join("\n");
    assert!(
        lines.contains(&format!(
            "phase build: superseded (phase plan runs again); its work is kept on cp/{run}/build@1"
        )),
        "{lines}"
    );
    // Only the superseded branches are left, and no worktree.
    assert_eq!(
        phase_branches(&repo),
        [format!("cp/{run}/build@1"), format!("cp/{run}/check@1")]
    );
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

/// A run killed after saving a phase's merge but before removing its worktree and branch
/// (here: a run that kept them, its record set back to running), with git killed in the
/// middle of deleting the branch (its `packed-refs.lock` left), leaves nothing once resumed;
/// a merge made but not recorded gets its merge commit back.
#[test]
fn a_resume_removes_the_worktrees_and_branches_of_phases_merged_before_the_kill() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, GRAPH);
    let project = repo.project();
    let factory = Arc::new(Writers::default());
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[]);
    let kept = RunOptions {
        keep_worktrees: true,
        ..options(factory.clone())
    };
    let outcome = run_workflow(&project, &file, &mut main, &mut prompter, &kept).unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(repo.git(&["branch", "--list", "cp/*"]).contains("/api"));
    let record = outcome.run_dir.join("context.json");
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    saved["status"] = "running".into();
    // And api's merge made but not recorded (killed between `git merge` and the save).
    let api_merge = saved["phase_runs"]["api"]["merge_commit"].clone();
    assert!(api_merge.is_string(), "{saved}");
    saved["phase_runs"]["api"]["status"] = "finished".into();
    saved["phase_runs"]["api"]["merge_commit"] = serde_json::Value::Null;
    std::fs::write(&record, saved.to_string()).unwrap();
    // The lock a git killed in `branch -D` leaves (with it every later deletion would fail).
    let lock = repo.root().join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();

    let resumed = resume_workflow(
        &project,
        &outcome.run_id,
        None,
        &mut main,
        &mut prompter,
        &options(factory),
    )
    .unwrap();
    assert_eq!(resumed.status, RunStatus::Completed);
    assert!(
        resumed
            .phases
            .iter()
            .all(|(_, r)| r.status == PhaseStatus::Merged)
    );
    no_leftovers(&repo.root(), &repo);
    assert!(!lock.exists());
    // The merge commit is found again by its message.
    let api = resumed.phases.iter().find(|(p, _)| p == "api").unwrap();
    assert_eq!(
        api.1.merge_commit.as_deref(),
        api_merge.as_str(),
        "{:?}",
        api.1
    );
}

/// check's gate sends the run back to plan while docs, which does not depend on plan, runs.
const REDO_BESIDE_OTHERS: &str = "\
name: redo
phases:
  - id: plan
    depends_on: []
    prompt: P.
  - id: check
    depends_on: [plan]
    prompt: C.
    approval:
      prompt: Good?
      options:
        - label: Done
          on_select: { action: continue }
        - label: Back to plan
          on_select: { action: repeat_phase, target: plan }
  - id: docs
    depends_on: []
    prompt: D.
";

/// The target of a `repeat_phase` starts again at once, beside a phase still running that
/// does not depend on it, rather than once that phase is done: docs finishes only after plan
/// has started again.
#[test]
fn a_repeated_phase_starts_again_while_an_unrelated_phase_still_runs() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, REDO_BESIDE_OTHERS);
    let project = repo.project();
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[("Back to plan", None), ("Done", None)]);
    let writers = Arc::new(Writers {
        first_awaits_rerun: Some(("docs", "plan")),
        ..Writers::default()
    });
    let outcome = run_workflow(
        &project,
        &file,
        &mut main,
        &mut prompter,
        &options(Arc::clone(&writers) as Arc<dyn DriverFactory>),
    )
    .unwrap();
    let ran = writers.phases.lock().unwrap().clone();
    assert_eq!(
        outcome.status,
        RunStatus::Completed,
        "{ran:?} {:?}",
        prompter.lines()
    );
    assert_eq!(outcome.context.iteration("plan"), 2, "{ran:?}");
    assert_eq!(outcome.context.iteration("docs"), 1, "{ran:?}");
    for (phase, record) in &outcome.phases {
        assert_eq!(record.status, PhaseStatus::Merged, "{phase}");
    }
    // check's first run, finished but not merged when plan was sent back, is kept aside.
    let branches = repo.git(&["branch", "--list", "cp/*", "--format=%(refname:short)"]);
    assert_eq!(branches.trim(), format!("cp/{}/check@1", outcome.run_id));
}
