//! Issue 37: the merge queue. Candidates queued behind the head are tested ahead of their turn
//! and thrown away when the head fails; a red merge goes back to its phase and, after its last
//! try, to the person, who may keep it aside; a phase that worked alone in the project's tree
//! is tested after it and sent back there; a run without parallel phases tests its branch at
//! its end and does not end completed on red. The tests are real shell commands run in the
//! trees the queue gives (`crate::util::tester`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::sync::Arc;

use crate::util::Repo;
use crate::util::scripted::{EchoDriver, ListPrompter, run_to_end};
use crate::util::tester::ShellTester;
use crate::util::writers::{Writers, no_leftovers, options, workflow};
use cp_orchestrate::{PhaseStatus, RunArgs, RunStatus, TreeVerdict, WorkflowEvent, run_workflow};

/// Runs `file` with the scripted writers (one file per phase) and `tester`, the person
/// answering `answers`; returns the outcome, the prompter and the factory.
fn run_queued(
    repo: &Repo,
    file: &std::path::Path,
    tester: Arc<ShellTester>,
    answers: &[(&str, Option<&str>)],
) -> (cp_orchestrate::WorkflowOutcome, ListPrompter, Arc<Writers>) {
    let project = repo.project();
    let factory = Arc::new(Writers::default());
    let mut run_options = options(factory.clone());
    run_options.tester = Some(tester);
    let mut prompter = ListPrompter::new(answers);
    let outcome = run_workflow(
        &project,
        file,
        &mut EchoDriver::new(&project),
        &mut prompter,
        &run_options,
    )
    .unwrap();
    (outcome, prompter, factory)
}

const THREE: &str = "\
name: queue
speculative_merges: 3
phases:
  - id: a
    depends_on: []
    prompt: A.
  - id: b
    depends_on: []
    prompt: B.
  - id: c
    depends_on: []
    prompt: C.
";

/// a's work is red in any tree; b and c are fine. The three merges are tested at once (b on
/// a's candidate, c on b's); a fails, so b's and c's tests are thrown away and made again
/// without it; a goes back to work, fails again, and the person keeps it aside; b and c land.
#[test]
fn a_red_head_throws_away_the_tests_ahead_of_it_and_can_be_kept_aside() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, THREE);
    let project = repo.project();
    let start = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let tester = Arc::new(ShellTester::new("test ! -f work/a.txt").meeting(3));
    let (outcome, prompter, factory) =
        run_queued(&repo, &file, tester.clone(), &[("Keep it aside", None)]);
    let lines = prompter.lines().join("\n");
    assert_eq!(*tester.met.lock().unwrap(), Some(true), "{lines}");
    assert_eq!(outcome.status, RunStatus::Completed, "{lines}");
    let status = |id: &str| {
        outcome
            .phases
            .iter()
            .find(|(p, _)| p == id)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert_eq!(status("a").status, PhaseStatus::KeptAside, "{lines}");
    assert_eq!(status("a").red_merges.len(), 2, "{lines}");
    for phase in ["b", "c"] {
        let record = status(phase);
        assert_eq!(record.status, PhaseStatus::Merged, "{lines}");
        let proof = record.proof.unwrap();
        assert_eq!(proof.outcome, TreeVerdict::Passed);
        assert_eq!(record.merge_commit.as_deref(), Some(proof.commit.as_str()));
        assert_eq!(
            repo.git(&["rev-parse", &format!("{}^{{tree}}", proof.commit)])
                .trim(),
            proof.tree
        );
        let note = repo.git(&["notes", "--ref=context-pilot", "show", &proof.commit]);
        assert!(note.contains("result: green"), "{note}");
    }
    // The speculative tests were thrown away when a failed, and counted.
    let events = &prompter.events;
    assert!(
        events.iter().any(
            |e| matches!(e, WorkflowEvent::MergesRequeued { phases } if phases == &["b", "c"])
        ),
        "{lines}"
    );
    let record = cp_orchestrate::RunStore::new(&project)
        .load(&outcome.run_id)
        .unwrap();
    let cost = record.merge_queue;
    assert!(cost.ahead >= 2 && cost.discarded >= 2, "{cost:?}");
    // a went back to work once (its agent ran twice), then the person was asked.
    assert_eq!(
        factory
            .phases
            .lock()
            .unwrap()
            .iter()
            .filter(|p| *p == "a")
            .count(),
        2
    );
    assert!(lines.contains("phase a: sent back (try 1 of 2)"), "{lines}");
    let gate = prompter.requests.last().unwrap();
    let labels: Vec<&str> = gate.choices.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["Send it back again", "Keep it aside", "Abort"]);
    assert!(
        gate.prompt.contains("passes its tests alone"),
        "{}",
        gate.prompt
    );
    // The branch holds b and c, each merge tested; a's work is on its kept branch only.
    let root = repo.root();
    assert!(root.join("work/b.txt").exists() && root.join("work/c.txt").exists());
    assert!(!root.join("work/a.txt").exists());
    let merges = repo.git(&["rev-list", "--first-parent", &format!("{start}..HEAD")]);
    assert_eq!(merges.lines().count(), 2, "{merges}");
    let kept = status("a").branch.unwrap();
    assert_eq!(repo.git(&["branch", "--list", "cp/*"]).trim(), kept);
    assert_eq!(
        outcome.verdict.as_ref().map(|v| v.outcome),
        Some(TreeVerdict::Passed),
        "{lines}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// The person may send a red phase back once more, or abort (exit code 2, the branch as
/// it was).
#[test]
fn at_the_red_gate_abort_ends_the_run_with_the_branch_green() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(
        &repo,
        "name: two\nmax_merge_attempts: 1\nphases:\n  - id: a\n    depends_on: []\n    prompt: A.\n  - id: b\n    depends_on: []\n    prompt: B.\n",
    );
    let start = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let (outcome, prompter, factory) = run_queued(
        &repo,
        &file,
        Arc::new(ShellTester::new("test ! -f work/b.txt")),
        &[("Send it back again", None), ("Abort", None)],
    );
    let lines = prompter.lines().join("\n");
    assert_eq!(outcome.status, RunStatus::Aborted, "{lines}");
    assert_eq!(outcome.exit_code(), 2);
    // One try allowed, one more granted: b's agent ran twice, asked twice.
    assert_eq!(prompter.requests.len(), 2, "{lines}");
    let b_runs = factory
        .phases
        .lock()
        .unwrap()
        .iter()
        .filter(|p| *p == "b")
        .count();
    assert_eq!(b_runs, 2, "{lines}");
    // a landed, b did not: the branch holds only what passed.
    let landed = repo.git(&[
        "log",
        "--first-parent",
        "--format=%s",
        &format!("{start}..HEAD"),
    ]);
    assert!(
        landed.contains("Merge phase a") && !landed.contains("Merge phase b"),
        "{landed}"
    );
    assert!(!repo.root().join("work/b.txt").exists());
    assert!(lines.contains("is green at"), "{lines}");
}

/// A phase that works alone in the project's tree is tested after it, before anything
/// depends on it; red sends it back there, with the failure in its prompt.
#[test]
fn a_phase_alone_is_tested_after_it_and_sent_back_when_red() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(
        &repo,
        "name: solo\nphases:\n  - id: solo\n    depends_on: []\n    prompt: Do it.\n",
    );
    let project = repo.project();
    // Red until the phase has run twice (its file holds a line per run).
    let tester = Arc::new(ShellTester::new(
        "test \"$(wc -l < work/solo.txt)\" -ge 2 || { echo 'FAIL: test_twice'; exit 1; }",
    ));
    let mut driver = EchoDriver::new(&project);
    let mut prompter = ListPrompter::default();
    let outcome = run_workflow(
        &project,
        &file,
        &mut driver,
        &mut prompter,
        &cp_orchestrate::RunOptions {
            tester: Some(tester),
            ..cp_orchestrate::RunOptions::default()
        },
    )
    .unwrap();
    let lines = prompter.lines().join("\n");
    assert_eq!(outcome.status, RunStatus::Completed, "{lines}");
    assert_eq!(driver.phases(), ["solo", "solo"], "{lines}");
    let again = driver.prompt(1);
    assert!(
        again.starts_with("Do it.")
            && again.contains("the tests fail on the run's branch after it")
            && again.contains("FAIL: test_twice")
            && again.contains("try 2 of 2"),
        "{again}"
    );
    let (_, record) = &outcome.phases[0];
    assert_eq!(record.status, PhaseStatus::Merged);
    assert_eq!(record.red_merges.len(), 1);
    assert_eq!(
        record.proof.as_ref().map(|p| p.outcome),
        Some(TreeVerdict::Passed)
    );
    assert_eq!(
        outcome.verdict.as_ref().map(|v| v.outcome),
        Some(TreeVerdict::Passed),
        "{lines}"
    );
    assert!(
        lines.contains(
            "phase solo: sent back (try 1 of 2): the tests fail on the run's branch after it"
        ) && lines.contains("the tree phase solo left was tested after it"),
        "{lines}"
    );
}

/// A run without parallel phases tests its branch at its end: green says so once and puts
/// the proof on the commit; red is no completed run (exit code 1, `--resume` tests again).
#[test]
fn a_plain_run_tests_its_branch_at_the_end_and_never_ends_completed_on_red() {
    for (command, code) in [("test -f work/plan.txt", 0), ("test ! -f work/plan.txt", 1)] {
        let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
        let file = workflow(
            &repo,
            "name: plain\nphases:\n  - id: plan\n    prompt: Plan.\n",
        );
        let project = repo.project();
        let args = RunArgs {
            workflow: Some(file),
            options: cp_orchestrate::RunOptions {
                tester: Some(Arc::new(ShellTester::new(command))),
                ..cp_orchestrate::RunOptions::default()
            },
            ..RunArgs::default()
        };
        let (got, text) = run_to_end(
            &project,
            &args,
            &mut EchoDriver::new(&project),
            &mut ListPrompter::default(),
        );
        assert_eq!(got, code, "{text}");
        let branch = repo.git(&["rev-parse", "--abbrev-ref", "HEAD"]);
        let word = if code == 0 { "green" } else { "RED" };
        assert_eq!(
            text.matches(&format!("branch {} is {word} at", branch.trim()))
                .count(),
            1,
            "{text}"
        );
        assert!(
            text.contains("its tree was tested at the run's end"),
            "{text}"
        );
        let note = repo.git(&["log", "-1", "--notes=context-pilot", "--format=%N"]);
        assert!(note.contains(&format!("{command}: exit {code}")), "{note}");
        let runs = cp_orchestrate::RunStore::new(&project);
        let id = std::fs::read_dir(runs.dir())
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .file_name();
        let state = runs.load(&id.to_string_lossy()).unwrap();
        let expected = if code == 0 {
            RunStatus::Completed
        } else {
            RunStatus::Failed
        };
        assert_eq!(state.status, expected, "{text}");
        // Nothing of the run is left in git status: its record is kept out of git.
        assert_eq!(repo.git(&["status", "--porcelain"]), "");
        no_leftovers(&repo.root(), &repo);
    }
}

/// Issue 51: a test that ran on a host counts only for the tree it says it checked out. An
/// honest host's green result lands, its proof naming the host; a host that tested another
/// tree is not believed, whatever it says: the phase is red, and nothing of it lands.
#[test]
fn a_host_s_result_is_believed_only_for_the_candidate_s_own_tree() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let yaml = "name: one\nmax_merge_attempts: 1\nphases:\n  - id: a\n    depends_on: []\n    prompt: A.\n  - id: b\n    depends_on: []\n    prompt: B.\n";
    let file = workflow(&repo, yaml);
    let (outcome, prompter, _) = run_queued(
        &repo,
        &file,
        Arc::new(ShellTester::new("true").on_a_host(None)),
        &[],
    );
    let lines = prompter.lines().join("\n");
    assert_eq!(outcome.status, RunStatus::Completed, "{lines}");
    let note = repo.git(&["log", "-1", "--notes=context-pilot", "--format=%N", "HEAD"]);
    assert!(note.contains("tested on host elsewhere"), "{note}");

    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, yaml);
    let start = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let (outcome, prompter, _) = run_queued(
        &repo,
        &file,
        Arc::new(
            ShellTester::new("true").on_a_host(Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904")),
        ),
        &[("Abort", None)],
    );
    let lines = prompter.lines().join("\n");
    assert_eq!(outcome.status, RunStatus::Aborted, "{lines}");
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]).trim(),
        start,
        "nothing landed: {lines}"
    );
    let record = std::fs::read_dir(repo.root().join(".context-pilot/runs"))
        .unwrap()
        .flatten()
        .next()
        .map(|run| std::fs::read_to_string(run.path().join("context.json")).unwrap())
        .unwrap();
    assert!(
        record.contains("not believed: it tested tree 4b825dc6"),
        "{record}"
    );
}
