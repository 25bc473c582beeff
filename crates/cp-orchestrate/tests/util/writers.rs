//! A scripted [`DriverFactory`] for workflows with `depends_on`: each phase's driver writes
//! one file in the tree it was made for (or `shared.txt`, for conflicts), and can be told to
//! meet the phases beside it, commit by hand, hold until stopped, or wait for another phase
//! to start again; with the helpers that set up such a run and check what it left.

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]

use std::path::Path;
use std::sync::{Arc, Barrier};

use cp_orchestrate::{
    DriverError, DriverFactory, Handoff, PhaseAgent, RunOptions, SessionControl, SessionDriver,
    SessionEnd,
};

use super::Repo;

/// Writes one file per phase (or `shared.txt` for conflicts) in the tree it was made for;
/// the phases named in `meet` wait for each other first, so they provably run at once.
pub struct Writer {
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
        cp_e2e::eventually(
            &format!("{phase}'s stop"),
            std::time::Duration::from_secs(120),
            || stop.is_cancelled(),
        );
        SessionEnd::Failed("stopped".into())
    }
}

impl SessionDriver for Writer {
    fn run(&mut self, _prompt: &str, control: &SessionControl) -> SessionEnd {
        if let Some(stop) = &self.hold {
            return self.hold(control.phase_id(), stop);
        }
        if let Some((made, phase)) = &self.awaits_rerun {
            let again = cp_e2e::within(std::time::Duration::from_secs(60), || {
                (made.lock().unwrap().iter().filter(|p| p == phase).count() >= 2).then_some(())
            });
            if again.is_none() {
                return SessionEnd::Failed(format!("{phase} never started again"));
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
pub struct Writers {
    pub shared: bool,
    pub meet: Option<Arc<Barrier>>,
    pub workers: std::sync::Mutex<Vec<String>>,
    /// The phases a driver was made for, in order.
    pub phases: Arc<std::sync::Mutex<Vec<String>>>,
    pub commits: Vec<String>,
    /// The phase whose first run holds until it is stopped ([`Writer::hold`]).
    pub hold_first: Option<&'static str>,
    /// `(phase, other)`: `phase`'s first run finishes once `other` has started again.
    pub first_awaits_rerun: Option<(&'static str, &'static str)>,
}

impl DriverFactory for Writers {
    fn driver(
        &self,
        spec: &PhaseAgent<'_>,
    ) -> Result<Box<dyn SessionDriver + Send>, cp_orchestrate::DriverError> {
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

pub const GRAPH: &str = "\
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

pub fn workflow(repo: &Repo, yaml: &str) -> std::path::PathBuf {
    let rel = ".context-pilot/workflows/graph.yaml";
    repo.write(rel, yaml);
    repo.commit_all("add workflow");
    repo.root().join(rel)
}

pub fn options(factory: Arc<dyn DriverFactory>) -> RunOptions {
    RunOptions {
        drivers: Some(factory),
        ..RunOptions::default()
    }
}

pub fn no_leftovers(root: &Path, repo: &Repo) {
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

/// The `cp/*` branches, sorted.
pub fn phase_branches(repo: &Repo) -> Vec<String> {
    let mut branches: Vec<String> = repo
        .git(&["branch", "--list", "cp/*", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect();
    branches.sort();
    branches
}
