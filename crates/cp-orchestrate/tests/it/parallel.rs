//! Issue 26: a workflow with `depends_on` runs the phases that are ready together at once,
//! each in its own git worktree with its own driver, and merges their branches back in the
//! file's order; a conflict is aborted and named (exit code 3 when no one answers).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::sync::{Arc, Barrier};

use crate::util::Repo;
use crate::util::scripted::{EchoDriver, ListPrompter, run_to_end};
use crate::util::writers::{GRAPH, Writers, no_leftovers, options, workflow};
use cp_orchestrate::{
    DriverError, Handoff, PhaseStatus, RunArgs, RunOptions, RunStatus, SessionControl,
    SessionDriver, SessionEnd, run_workflow,
};

#[test]
fn independent_phases_run_at_once_in_worktrees_and_are_merged_in_file_order() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(&repo, GRAPH);
    let project = repo.project();
    // api and ui meet at a barrier: if they ran one after the other, the run would hang.
    let factory = Arc::new(Writers {
        shared: false,
        meet: Some(Arc::new(Barrier::new(2))),
        ..Writers::default()
    });
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[]);
    let outcome = run_workflow(
        &project,
        &file,
        &mut main,
        &mut prompter,
        &options(factory.clone()),
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    // plan and integrate ran alone, in the project's tree, as the run's worker; api and ui
    // each as their own.
    assert!(main.phases().is_empty());
    let workers = factory.workers.lock().unwrap().clone();
    assert_eq!(workers[0], "main");
    let mut side = workers[1..3].to_vec();
    side.sort();
    assert_eq!(side, ["api", "ui"]);
    assert_eq!(workers[3], "main");
    let root = repo.root();
    assert!(root.join("work/api.txt").exists() && root.join("work/ui.txt").exists());
    let log = repo.git(&["log", "--format=%s", "--first-parent"]);
    let merges: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("Merge phase"))
        .collect();
    assert_eq!(merges.len(), 2, "{log}");
    assert!(merges[1].starts_with("Merge phase api"), "api first: {log}");
    assert!(merges[0].starts_with("Merge phase ui"), "{log}");
    let records: Vec<_> = outcome
        .phases
        .iter()
        .map(|(id, r)| (id.as_str(), r.status))
        .collect();
    assert!(
        records.iter().all(|(_, s)| *s == PhaseStatus::Merged),
        "{records:?}"
    );
    let api = &outcome.phases[1].1;
    assert_eq!(
        api.branch.as_deref().map(|b| b.starts_with("cp/")),
        Some(true)
    );
    assert!(api.merge_commit.is_some() && api.base_commit.is_some());
    assert_eq!(api.commits, 1);
    no_leftovers(&root, &repo);
    // Only the run's own record is left to commit, as in a plain sequence.
    let status = repo.git(&["status", "--porcelain"]);
    assert!(
        status.lines().all(|l| l.contains(".context-pilot/runs/")),
        "{status}"
    );
}

#[test]
fn a_conflict_stops_the_run_with_exit_3_and_a_clean_tree() {
    let repo = Repo::with_commit(&[("shared.txt", "base\n")]);
    let file = workflow(
        &repo,
        "name: clash\nphases:\n  - id: left\n    depends_on: []\n    prompt: L.\n  - id: right\n    depends_on: []\n    prompt: R.\n",
    );
    let project = repo.project();
    let factory = Arc::new(Writers {
        shared: true,
        meet: None,
        ..Writers::default()
    });
    let args = RunArgs {
        workflow: Some(file),
        options: options(factory),
        ..RunArgs::default()
    };
    let mut main = EchoDriver::new(&project);
    let (code, text) = run_to_end(&project, &args, &mut main, &mut ListPrompter::default());
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("merging phase 'right'"), "{text}");
    assert!(
        text.contains("phase 'left'") && text.contains("shared.txt"),
        "{text}"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(repo.root().join("shared.txt")).unwrap(),
        "written by left\n"
    );
    assert!(
        repo.git(&["branch", "--list", "cp/*"]).contains("/right"),
        "branch kept"
    );
    assert!(text.contains("phase right: conflict"), "summary: {text}");
}

/// A project in a subdirectory of its repository: each phase works in the same subdirectory
/// of its worktree, and the results land there in the project.
#[test]
fn a_project_in_a_subdirectory_works_in_the_same_subdirectory_of_each_worktree() {
    let repo = Repo::with_commit(&[("app/README.md", "# app\n"), ("other/x.txt", "x\n")]);
    let rel = "app/.context-pilot/workflows/graph.yaml";
    repo.write(
        rel,
        "name: sub\nphases:\n  - id: api\n    depends_on: []\n    prompt: A.\n  - id: ui\n    depends_on: []\n    prompt: U.\n",
    );
    repo.commit_all("add workflow");
    let project = cp_base::Project::at(repo.root().join("app"));
    let factory = Arc::new(Writers {
        shared: false,
        meet: Some(Arc::new(Barrier::new(2))),
        ..Writers::default()
    });
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[]);
    let outcome = run_workflow(
        &project,
        &repo.root().join(rel),
        &mut main,
        &mut prompter,
        &options(factory),
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let root = repo.root();
    assert!(root.join("app/work/api.txt").exists() && root.join("app/work/ui.txt").exists());
    assert!(!root.join("work").exists());
    assert_eq!(repo.git(&["branch", "--list", "cp/*"]), "");
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
    assert!(
        exclude.contains("/app/.context-pilot/worktrees/"),
        "{exclude}"
    );
}

/// A phase that leaves uncommitted work fails: its branch and worktree are kept, the phase
/// beside it still finishes and merges, the phase that depends on it never runs, and the run
/// ends failed.
#[test]
fn a_phase_with_uncommitted_work_fails_and_stops_only_its_dependents() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(
        &repo,
        "name: partial\nphases:\n  - id: sloppy\n    depends_on: []\n    prompt: S.\n  - id: tidy\n    depends_on: []\n    prompt: T.\n  - id: after\n    depends_on: [sloppy]\n    prompt: A.\n",
    );
    let project = repo.project();
    let factory = Arc::new(Writers {
        commits: vec!["tidy".into()],
        ..Writers::default()
    });
    let options = RunOptions {
        overrides: cp_orchestrate::RestartOverrides {
            no_auto_commit: true,
            ..cp_orchestrate::RestartOverrides::default()
        },
        ..options(factory)
    };
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[]);
    let outcome = run_workflow(&project, &file, &mut main, &mut prompter, &options).unwrap();
    assert_eq!(outcome.status, RunStatus::Failed);
    let status = |id: &str| {
        outcome
            .phases
            .iter()
            .find(|(p, _)| p == id)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    let sloppy = status("sloppy");
    assert_eq!(sloppy.status, PhaseStatus::Failed);
    assert!(
        sloppy
            .error
            .as_deref()
            .unwrap()
            .contains("uncommitted work"),
        "{sloppy:?}"
    );
    assert_eq!(status("tidy").status, PhaseStatus::Merged);
    assert_eq!(status("after").status, PhaseStatus::Waiting);
    assert!(main.phases().is_empty(), "after must not run");
    let root = repo.root();
    assert!(root.join("work/tidy.txt").exists() && !root.join("work/sloppy.txt").exists());
    // The failed phase's branch and worktree are kept for a look or a resume.
    assert!(repo.git(&["branch", "--list", "cp/*"]).contains("/sloppy"));
    let tree = root.join(sloppy.worktree.unwrap());
    assert!(tree.join("work/sloppy.txt").exists());
}

/// The approval gate of a phase that ran in its worktree shows the phase's `git diff --stat`
/// against its base, and its answer is recorded as for any gate.
#[test]
fn a_parallel_phases_approval_gate_shows_its_diff_summary() {
    let repo = Repo::with_commit(&[("README.md", "# demo\n")]);
    let file = workflow(
        &repo,
        "name: gated\nphases:\n  - id: api\n    depends_on: []\n    prompt: A.\n    approval: {approval_required: true}\n  - id: ui\n    depends_on: []\n    prompt: U.\n",
    );
    let project = repo.project();
    let mut main = EchoDriver::new(&project);
    let mut prompter = ListPrompter::new(&[("Continue", None)]);
    let outcome = run_workflow(
        &project,
        &file,
        &mut main,
        &mut prompter,
        &options(Arc::new(Writers::default())),
    )
    .unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(prompter.requests.len(), 1);
    let prompt = &prompter.requests[0].prompt;
    assert!(prompt.contains("Changes on cp/"), "{prompt}");
    assert!(prompt.contains("work/api.txt"), "{prompt}");
    assert_eq!(outcome.context.approvals[0].phase, "api");
}

/// Resolves a merge conflict as the prompt asks: merges the branch it names, keeps both
/// sides, commits.
struct Resolver {
    root: std::path::PathBuf,
    prompts: Vec<String>,
}

impl SessionDriver for Resolver {
    fn run(&mut self, prompt: &str, _: &SessionControl) -> SessionEnd {
        self.prompts.push(prompt.to_owned());
        let branch = prompt
            .split("git merge --no-ff ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap()
            .to_owned();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&self.root)
                .args(args)
                .output()
                .unwrap()
        };
        // The merge stops at the conflict, as it would for an agent.
        git(&["merge", "--no-ff", &branch]);
        std::fs::write(self.root.join("shared.txt"), "from left and right\n").unwrap();
        git(&["add", "-A"]);
        let done = git(&["commit", "-qm", "Merge phase right (conflicts resolved)"]);
        assert!(done.status.success(), "{done:?}");
        SessionEnd::Completed
    }

    fn request_handoff(
        &mut self,
        _: &str,
        _: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        Ok(None)
    }
}

#[test]
fn an_agent_resolves_a_conflict_when_asked() {
    let repo = Repo::with_commit(&[("shared.txt", "base\n")]);
    let file = workflow(
        &repo,
        "name: clash\nphases:\n  - id: left\n    depends_on: []\n    prompt: L.\n  - id: right\n    depends_on: []\n    prompt: R.\n",
    );
    let project = repo.project();
    let factory = Arc::new(Writers {
        shared: true,
        ..Writers::default()
    });
    let mut resolver = Resolver {
        root: repo.root(),
        prompts: Vec::new(),
    };
    let mut prompter = ListPrompter::new(&[("An agent resolves it", None)]);
    let outcome = run_workflow(
        &project,
        &file,
        &mut resolver,
        &mut prompter,
        &options(factory),
    )
    .unwrap();
    assert_eq!(
        outcome.status,
        RunStatus::Completed,
        "{:?}",
        prompter.lines()
    );
    let asked = &prompter.requests[0];
    assert_eq!(asked.files, ["shared.txt"]);
    assert!(asked.prompt.contains("phase 'left'"), "{}", asked.prompt);
    assert!(resolver.prompts[0].contains("shared.txt"));
    assert_eq!(
        std::fs::read_to_string(repo.root().join("shared.txt")).unwrap(),
        "from left and right\n"
    );
    let right = &outcome.phases[1].1;
    assert_eq!(right.status, PhaseStatus::Merged);
    assert!(right.merge_commit.is_some());
    assert_eq!(repo.git(&["branch", "--list", "cp/*"]), "");
}
