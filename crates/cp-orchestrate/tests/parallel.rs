//! Issue 26: a workflow with `depends_on` runs the phases that are ready together at once,
//! each in its own git worktree with its own driver, and merges their branches back in the
//! file's order; a conflict is aborted and named (exit code 3 when no one answers).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

mod util;

use std::path::Path;
use std::sync::{Arc, Barrier};

use cp_orchestrate::{
    DriverError, DriverFactory, Handoff, PhaseAgent, PhaseStatus, RunArgs, RunOptions, RunStatus,
    SessionControl, SessionDriver, SessionEnd, resume_workflow, run_headless, run_workflow,
};
use util::Repo;
use util::scripted::{EchoDriver, ListPrompter};

/// Writes one file per phase (or `shared.txt` for conflicts) in the tree it was made for;
/// the phases named in `meet` wait for each other first, so they provably run at once.
struct Writer {
    root: std::path::PathBuf,
    shared: bool,
    meet: Option<Arc<Barrier>>,
    /// Phases that commit their work themselves (for runs without auto-commit).
    commits: Vec<String>,
    /// Set for a run that commits some work, leaves more uncommitted, then works on until
    /// its phase's own stop is set (a fact the test waits on, not a time).
    hold: Option<cp_base::CancelToken>,
    /// Set for a run that finishes only once the named phase has started again (the list
    /// of phases the factory made drivers for names it twice).
    awaits_rerun: Option<(Arc<std::sync::Mutex<Vec<String>>>, &'static str)>,
}

impl Writer {
    fn git(&self, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    /// Commits `work/<phase>.txt`, leaves `work/<phase>-wip.txt` uncommitted, then waits to
    /// be stopped.
    fn hold(&self, phase: &str, stop: &cp_base::CancelToken) -> SessionEnd {
        std::fs::create_dir_all(self.root.join("work")).unwrap();
        std::fs::write(self.root.join(format!("work/{phase}.txt")), "first try\n").unwrap();
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", &format!("{phase}: first try")]);
        std::fs::write(self.root.join(format!("work/{phase}-wip.txt")), "half\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !stop.is_cancelled() {
            assert!(
                std::time::Instant::now() < deadline,
                "{phase} was never stopped"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        SessionEnd::Failed("stopped".into())
    }
}

impl SessionDriver for Writer {
    fn run(&mut self, _prompt: &str, control: &SessionControl) -> SessionEnd {
        if let Some(stop) = &self.hold {
            return self.hold(control.phase_id(), stop);
        }
        if let Some((made, phase)) = &self.awaits_rerun {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while made.lock().unwrap().iter().filter(|p| p == phase).count() < 2 {
                if std::time::Instant::now() >= deadline {
                    return SessionEnd::Failed(format!("{phase} never started again"));
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        if let Some(meet) = &self.meet {
            meet.wait();
        }
        let phase = control.phase_id();
        let (file, text) = if self.shared {
            ("shared.txt".to_owned(), format!("written by {phase}\n"))
        } else {
            (format!("work/{phase}.txt"), format!("{phase}\n"))
        };
        let path = self.root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        if self.commits.contains(&phase.to_owned()) {
            self.git(&["add", "-A"]);
            self.git(&["commit", "-qm", &format!("{phase} by hand")]);
        }
        control.record_usage(1_000, 200_000);
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

#[derive(Default)]
struct Writers {
    shared: bool,
    meet: Option<Arc<Barrier>>,
    workers: std::sync::Mutex<Vec<String>>,
    /// The phases a driver was made for, in order.
    phases: Arc<std::sync::Mutex<Vec<String>>>,
    commits: Vec<String>,
    /// The phase whose first run holds until it is stopped ([`Writer::hold`]).
    hold_first: Option<&'static str>,
    /// `(phase, other)`: `phase`'s first run finishes once `other` has started again.
    first_awaits_rerun: Option<(&'static str, &'static str)>,
}

impl DriverFactory for Writers {
    fn driver(&self, spec: &PhaseAgent<'_>) -> Result<Box<dyn SessionDriver + Send>, String> {
        self.workers
            .lock()
            .unwrap()
            .push(spec.worker.as_str().to_owned());
        let first = {
            let mut phases = self.phases.lock().unwrap();
            phases.push(spec.phase.to_owned());
            phases.iter().filter(|p| *p == spec.phase).count() == 1
        };
        let hold = (first && self.hold_first == Some(spec.phase)).then(|| spec.stop.clone());
        let awaits_rerun = self
            .first_awaits_rerun
            .filter(|(phase, _)| first && *phase == spec.phase)
            .map(|(_, other)| (Arc::clone(&self.phases), other));
        Ok(Box::new(Writer {
            hold,
            awaits_rerun,
            root: spec.root.to_path_buf(),
            shared: self.shared,
            // Only the phases that run side by side meet (a phase alone would wait forever).
            meet: self
                .meet
                .clone()
                .filter(|_| ["api", "ui"].contains(&spec.phase)),
            commits: self.commits.clone(),
        }))
    }
}

const GRAPH: &str = "\
name: feature
phases:
  - id: plan
    depends_on: []
    prompt: Plan it.
  - id: api
    depends_on: [plan]
    prompt: Build the API.
  - id: ui
    depends_on: [plan]
    prompt: Build the UI.
  - id: integrate
    depends_on: [api, ui]
    prompt: Wire them.
";

fn workflow(repo: &Repo, yaml: &str) -> std::path::PathBuf {
    let rel = ".context-pilot/workflows/graph.yaml";
    repo.write(rel, yaml);
    repo.commit_all("add workflow");
    repo.root().join(rel)
}

fn options(factory: Arc<dyn DriverFactory>) -> RunOptions {
    RunOptions {
        drivers: Some(factory),
        ..RunOptions::default()
    }
}

fn no_leftovers(root: &Path, repo: &Repo) {
    assert_eq!(
        repo.git(&["worktree", "list"]).lines().count(),
        1,
        "worktrees left"
    );
    assert_eq!(repo.git(&["branch", "--list", "cp/*"]), "", "branches left");
    assert!(
        !root
            .join(".context-pilot/worktrees")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some()),
        "worktree directories left"
    );
}

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
    let mut out = Vec::new();
    let mut main = EchoDriver::new(&project);
    let code = run_headless(&project, &args, &mut main, &mut &b""[..], &mut out);
    let text = String::from_utf8(out).unwrap();
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
    assert_eq!(outcome.context.checkpoints[0].phase, "api");
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

/// The `cp/*` branches, sorted.
fn phase_branches(repo: &Repo) -> Vec<String> {
    let mut branches: Vec<String> = repo
        .git(&["branch", "--list", "cp/*", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect();
    branches.sort();
    branches
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
