//! A workflow with `depends_on`: a phase starts as soon as its dependencies are merged (up to
//! `max_parallel` at once). A phase that runs alone works in the project's own tree, as in a
//! plain sequence. When two or more run at once, each gets a worktree
//! (`.context-pilot/worktrees/<run>/<phase>/`) on its own branch (`cp/<run>/<phase>`) made
//! from the run's branch, its own agent and worker id, and its own thread. As each finishes,
//! the finished branches are merged into the run's branch in the file's order, up to the first
//! phase still running, so the result does not depend on timing; the phases those merges made
//! ready start while the others still run. A conflict is aborted and put to the person
//! (`merge.rs`). Ctrl-C (the driver factory's `interrupted`) stops every phase, which is
//! recorded as interrupted. Every step is saved in the run's `phase_runs`, so `--resume`
//! continues running or interrupted phases in their worktrees and runs the merges not made.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cp_base::{Project, STATE_DIR};
use cp_git::Repository;

use super::agents::{PhaseAgent, phase_worker};
use super::engine::{Decided, Engine};
use super::error::WorkflowError;
use super::phase_record::{PhaseRecord, PhaseStatus};
use super::prompter::WorkflowEvent;
use super::schema::Action;
use super::store::RunStatus;
use crate::restart::changed_files;
use crate::restart::{PhaseReport, RestartError, RestartEvent, RestartLoop, SessionDriver};

/// Where phase worktrees live, under the project root.
const WORKTREES: &str = "worktrees";

/// What a phase's thread tells the engine's thread.
enum Report {
    /// A step of its restart loop, for the prompter.
    Event(WorkflowEvent),
    /// It is done.
    Done {
        index: usize,
        result: Result<PhaseReport, RestartError>,
        elapsed: Duration,
    },
}

/// A phase ready to run on its own thread: its restart loop, its agent, its prompt.
type Launched = (RestartLoop, Box<dyn SessionDriver + Send>, String);

/// How a wave ended the run early.
pub(super) type Stop = Option<RunStatus>;

impl Engine<'_> {
    /// Runs a workflow with `depends_on`: waves until no phase is ready.
    pub(super) fn drive_graph(&mut self, resumed: bool) -> Result<RunStatus, WorkflowError> {
        for phase in &self.workflow.phases {
            self.state
                .phase_runs
                .entry(phase.id.clone())
                .or_insert_with(|| PhaseRecord {
                    agent: phase.agent.clone().or_else(|| self.parallel.agent.clone()),
                    ..PhaseRecord::default()
                });
        }
        if resumed {
            self.clear_merged(&Repository::at(self.project.root()))?;
            // A failed or interrupted phase runs again, in its worktree when it had one.
            for record in self.state.phase_runs.values_mut() {
                if matches!(
                    record.status,
                    PhaseStatus::Failed | PhaseStatus::Interrupted
                ) {
                    record.status = PhaseStatus::Running;
                    record.error = None;
                }
            }
        }
        self.save()?;
        let deps = self.workflow.dependencies();
        loop {
            if self.interrupted() {
                self.state.error = Some(format!(
                    "interrupted; continue it with: context-pilot run --resume {}",
                    self.state.run_id
                ));
                self.save()?;
                return Ok(RunStatus::Running);
            }
            let wave = self.next_wave(&deps)?;
            if wave.is_empty() {
                break;
            }
            if let Some(status) = self.run_wave(&wave, &deps)? {
                return Ok(status);
            }
        }
        let stuck: Vec<String> = self
            .workflow
            .phases
            .iter()
            .filter(|p| !self.status_of(&p.id).lets_dependents_run())
            .map(|p| format!("{} ({})", p.id, self.status_of(&p.id).as_str()))
            .collect();
        if stuck.is_empty() {
            self.state.status = RunStatus::Completed;
            self.save()?;
            return Ok(RunStatus::Completed);
        }
        self.state.status = RunStatus::Failed;
        self.state.error = Some(format!(
            "not every phase finished: {}; fix the cause and --resume {}",
            stuck.join(", "),
            self.state.run_id
        ));
        self.save()?;
        Ok(RunStatus::Failed)
    }

    /// Whether the person interrupted the run (Ctrl-C): nothing more starts or merges.
    fn interrupted(&self) -> bool {
        self.parallel
            .drivers
            .as_ref()
            .is_some_and(|drivers| drivers.interrupted())
    }

    /// Records phase `index` as interrupted and the run as resumable; `Stop` for the caller.
    fn interrupt(&mut self, index: usize) -> Result<Stop, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        tracing::info!(phase = %id, "phase interrupted");
        let record = self.record(index);
        record.status = PhaseStatus::Interrupted;
        record.error = Some("interrupted (Ctrl-C)".into());
        self.state.status = RunStatus::Running;
        self.state.error = Some(format!(
            "interrupted; continue it with: context-pilot run --resume {}",
            self.state.run_id
        ));
        self.save()?;
        Ok(Some(RunStatus::Running))
    }

    fn status_of(&self, phase: &str) -> PhaseStatus {
        self.state
            .phase_runs
            .get(phase)
            .map_or(PhaseStatus::Waiting, |r| r.status)
    }

    pub(super) fn record(&mut self, index: usize) -> &mut PhaseRecord {
        let id = self.workflow.phases[index].id.clone();
        self.state.phase_runs.entry(id).or_default()
    }

    /// The next wave: phases left running or unmerged by an earlier process first; else the
    /// waiting phases whose dependencies are all merged, in file order, up to `max_parallel`.
    /// Phases on the skip list are marked skipped on the way.
    fn next_wave(&mut self, deps: &[Vec<usize>]) -> Result<Vec<usize>, WorkflowError> {
        let left: Vec<usize> = (0..self.workflow.phases.len())
            .filter(|&i| {
                matches!(
                    self.status_of(&self.workflow.phases[i].id),
                    PhaseStatus::Running
                        | PhaseStatus::Interrupted
                        | PhaseStatus::Finished
                        | PhaseStatus::Conflict
                )
            })
            .collect();
        if !left.is_empty() {
            return Ok(left);
        }
        self.ready(deps, self.parallel.max)
    }

    /// The waiting phases whose dependencies are all merged, in file order, up to `limit`.
    /// Phases on the skip list are marked skipped on the way.
    fn ready(&mut self, deps: &[Vec<usize>], limit: usize) -> Result<Vec<usize>, WorkflowError> {
        let mut wave = Vec::new();
        let mut index = 0;
        while index < self.workflow.phases.len() && wave.len() < limit {
            let id = self.workflow.phases[index].id.clone();
            let ready = self.status_of(&id) == PhaseStatus::Waiting
                && deps[index].iter().all(|&d| {
                    self.status_of(&self.workflow.phases[d].id)
                        .lets_dependents_run()
                });
            if ready && self.state.context.skip_phases.contains(&id) {
                self.record(index).status = PhaseStatus::Skipped;
                self.save()?;
                self.prompter
                    .on_event(&WorkflowEvent::PhaseSkipped { phase: id });
                // Its dependents may be ready now: look again from the top.
                wave.clear();
                index = 0;
                continue;
            }
            if ready {
                wave.push(index);
            }
            index += 1;
        }
        Ok(wave)
    }

    /// Runs one wave; `Some(status)` when the run ends with it (aborted at a gate, a
    /// conflict no one resolved).
    fn run_wave(&mut self, wave: &[usize], deps: &[Vec<usize>]) -> Result<Stop, WorkflowError> {
        let in_worktrees =
            wave.len() > 1 || wave.iter().any(|&i| self.record(i).worktree.is_some());
        let own_trees = wave.iter().any(|&i| self.record(i).worktree.is_some());
        if own_trees && self.parallel.drivers.is_none() {
            // Started headless; this front-end cannot make the phases' agents.
            return Err(WorkflowError::Agent {
                run_id: self.state.run_id.clone(),
                phase: self.workflow.phases[wave[0]].id.clone(),
                message: format!(
                    "its work is in a worktree of its own, which this front-end cannot drive; \
                     resume the run headless: context-pilot run --resume {} --headless",
                    self.state.run_id
                ),
            });
        }
        if !in_worktrees || self.parallel.drivers.is_none() {
            for &index in wave {
                if let Some(status) = self.run_alone(index)? {
                    return Ok(Some(status));
                }
            }
            return Ok(None);
        }
        let repo = Repository::at(self.project.root());
        self.run_side_by_side(&repo, wave, deps)
    }

    /// Merges the finished phases in the file's order, up to the first phase still running:
    /// a phase listed earlier holds back the merge of later ones, so the result does not
    /// depend on which finished first.
    fn merge_in_order(&mut self, repo: &Repository) -> Result<Stop, WorkflowError> {
        for index in 0..self.workflow.phases.len() {
            match self.record(index).status {
                PhaseStatus::Running | PhaseStatus::Interrupted => return Ok(None),
                PhaseStatus::Finished | PhaseStatus::Conflict => {
                    if let Some(status) = self.merge(repo, index)? {
                        return Ok(Some(status));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The phases of the wave in their worktrees, each on its own thread. As each finishes,
    /// its approval gate is asked and the finished phases are merged in order; a phase whose
    /// dependencies are merged then starts at once (up to `max_parallel`), while the others
    /// still run. Returns how the run ended, when it did.
    fn run_side_by_side(
        &mut self,
        repo: &Repository,
        wave: &[usize],
        deps: &[Vec<usize>],
    ) -> Result<Stop, WorkflowError> {
        let prefix = repo
            .prefix()
            .map_err(|source| self.git_error(wave[0], source))?;
        repo.exclude_locally(&format!("/{prefix}{STATE_DIR}/{WORKTREES}/"))
            .map_err(|source| self.git_error(wave[0], source))?;
        let (tx, rx) = mpsc::channel::<Report>();
        // Work an earlier process finished but did not merge goes home first.
        let mut stop = self.merge_in_order(repo)?;
        std::thread::scope(|scope| -> Result<(), WorkflowError> {
            let mut running = 0usize;
            let mut failure = None;
            let mut start = wave.to_vec();
            loop {
                if stop.is_none() && failure.is_none() && !self.interrupted() {
                    for index in std::mem::take(&mut start) {
                        if !matches!(
                            self.record(index).status,
                            PhaseStatus::Running | PhaseStatus::Waiting
                        ) {
                            continue;
                        }
                        match self.launch(repo, index) {
                            Ok(launched) => {
                                self.spawn(scope, &tx, index, launched)?;
                                running += 1;
                            }
                            Err(e) => {
                                // The phases already started finish; the run then reports this.
                                failure = Some(e);
                                break;
                            }
                        }
                    }
                }
                if running == 0 {
                    break;
                }
                let Ok(report) = rx.recv() else { break };
                let Report::Done {
                    index,
                    result,
                    elapsed,
                } = report
                else {
                    if let Report::Event(event) = report {
                        self.prompter.on_event(&event);
                    }
                    continue;
                };
                running -= 1;
                if result.is_err() && self.interrupted() {
                    // Ctrl-C: the others are stopping too; nothing more starts or merges.
                    self.interrupt(index)?;
                    self.release(repo, index);
                    stop = stop.or(Some(RunStatus::Running));
                    continue;
                }
                if self.finished(repo, index, result, elapsed)? && stop.is_none() {
                    self.state.status = RunStatus::Aborted;
                    self.save()?;
                    stop = Some(RunStatus::Aborted);
                }
                if stop.is_none() && !self.interrupted() {
                    stop = self.merge_in_order(repo)?;
                }
                // With others still running, the phases their merges made ready start now;
                // when none runs, the next wave is chosen afresh (one alone runs in the
                // project's tree).
                if stop.is_none() && failure.is_none() && running > 0 {
                    start = self.ready(deps, self.parallel.max.saturating_sub(running))?;
                }
            }
            failure.map_or(Ok(()), Err)
        })?;
        if stop.is_none() && self.interrupted() {
            // Interrupted while the last phases were finishing: the run is resumable.
            self.state.error = Some(format!(
                "interrupted; continue it with: context-pilot run --resume {}",
                self.state.run_id
            ));
            self.save()?;
            stop = Some(RunStatus::Running);
        }
        Ok(stop)
    }

    /// Ends what an interrupted phase's host left running in its worktree (its console
    /// server); the worktree and branch stay for `--resume`.
    fn release(&mut self, repo: &Repository, index: usize) {
        let Some(tree) = self.record(index).worktree.clone() else {
            return;
        };
        if let Some(drivers) = &self.parallel.drivers {
            drivers.release(&project_in(repo, &self.project.root().join(tree)));
        }
    }

    /// Runs a launched phase on its own thread, which reports its steps and its end on `tx`
    /// (a panic included, so the engine never waits for a phase that is gone).
    fn spawn<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        tx: &mpsc::Sender<Report>,
        index: usize,
        (restart, mut driver, prompt): Launched,
    ) -> Result<(), WorkflowError> {
        let tx = tx.clone();
        let id = self.workflow.phases[index].id.clone();
        std::thread::Builder::new()
            .name(format!("cp-phase-{id}"))
            .spawn_scoped(scope, move || {
                let started = Instant::now();
                let events = tx.clone();
                let mut forward = |event: &RestartEvent| {
                    let _ = events.send(Report::Event(WorkflowEvent::Restart(event.clone())));
                };
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    restart.run_phase(&id, &prompt, driver.as_mut(), &mut forward)
                }))
                .unwrap_or_else(|_| {
                    Err(RestartError::SessionFailed {
                        phase: id.clone(),
                        message: "its thread panicked; the log has the cause".into(),
                    })
                });
                let _ = tx.send(Report::Done {
                    index,
                    result,
                    elapsed: started.elapsed(),
                });
            })
            .map_err(|e| WorkflowError::Agent {
                run_id: self.state.run_id.clone(),
                phase: self.workflow.phases[index].id.clone(),
                message: format!("cannot start its thread: {e}"),
            })?;
        Ok(())
    }

    /// Marks phase `index` running (counting the run unless it was running already).
    fn begin(&mut self, index: usize) -> Result<(), WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        if self.status_of(&id) != PhaseStatus::Running {
            self.state.context.bump(&id);
            self.record(index).status = PhaseStatus::Running;
        }
        self.save()?;
        let iteration = self.state.context.iteration(&id);
        tracing::info!(phase = %id, iteration, "phase started");
        self.prompter.on_event(&WorkflowEvent::PhaseStarted {
            phase: id,
            iteration,
        });
        Ok(())
    }

    /// A phase alone in the project's tree, as a plain sequence runs it.
    fn run_alone(&mut self, index: usize) -> Result<Stop, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let id = phase.id.clone();
        let repo = Repository::at(self.project.root());
        let base = repo.head().ok();
        self.begin(index)?;
        let prompt = self.phase_prompt(index)?;
        // With a factory, every phase of a graph gets its own agent (its `agent:`, its progress
        // lines marked with its id), alone or not; without one, the run's driver runs it.
        let mut own: Option<Box<dyn SessionDriver + Send>> = None;
        if let Some(drivers) = &self.parallel.drivers {
            let spec = PhaseAgent {
                phase: &id,
                root: self.project.root(),
                worker: &self.parallel.worker,
                agent: phase.agent.as_deref(),
            };
            own = Some(
                drivers
                    .driver(&spec)
                    .map_err(|message| WorkflowError::Agent {
                        run_id: self.state.run_id.clone(),
                        phase: id.clone(),
                        message,
                    })?,
            );
        }
        let started = Instant::now();
        let prompter = &mut *self.prompter;
        let mut forward = |event: &RestartEvent| {
            prompter.on_event(&WorkflowEvent::Restart(event.clone()));
        };
        let driver: &mut dyn SessionDriver = match own.as_mut() {
            Some(driver) => driver.as_mut(),
            None => &mut *self.driver,
        };
        let result = self.restart.run_phase(&id, &prompt, driver, &mut forward);
        let elapsed = millis(started.elapsed());
        let record = self.record(index);
        record.elapsed_ms = record.elapsed_ms.saturating_add(elapsed);
        record.base_commit = record.base_commit.take().or(base.clone());
        let report = match result {
            Ok(report) => report,
            Err(_) if self.interrupted() => return self.interrupt(index),
            Err(source) => {
                tracing::error!(phase = %id, "phase failed: {source}");
                self.alert("phase_failed", &id, &source.to_string());
                let record = self.record(index);
                record.status = PhaseStatus::Failed;
                record.error = Some(source.to_string());
                self.state.status = RunStatus::Failed;
                self.state.error = Some(source.to_string());
                self.save()?;
                return Err(WorkflowError::Phase {
                    run_id: self.state.run_id.clone(),
                    source,
                });
            }
        };
        let commits = base
            .as_deref()
            .and_then(|base| repo.commits_between(base, "HEAD").ok())
            .unwrap_or(0);
        let record = self.record(index);
        record.tokens = record.tokens.saturating_add(report.tokens);
        record.commits = commits;
        record.status = PhaseStatus::Merged;
        self.state.pending_feedback = None;
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::PhaseCompleted {
            phase: id,
            restarts: report.restarts,
        });
        Ok(self.gate(index)?.then_some(RunStatus::Aborted))
    }

    /// Makes (or, on a resume, finds) phase `index`'s worktree and its agent.
    fn launch(&mut self, repo: &Repository, index: usize) -> Result<Launched, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let id = phase.id.clone();
        let agent = phase.agent.clone();
        let run_id = self.state.run_id.clone();
        let path = self.project.dir().join(WORKTREES).join(&run_id).join(&id);
        let branch = format!("cp/{run_id}/{id}");
        if !repo.has_branch(&branch) {
            let base = repo.head().map_err(|e| self.git_error(index, e))?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| cp_base::StoreError::io(parent, e))?;
            }
            repo.add_worktree(&path, &branch, &base)
                .map_err(|e| self.git_error(index, e))?;
            self.record(index).base_commit = Some(base);
        } else if !path.join(".git").exists() {
            // The branch survived but its worktree was removed: check it out again.
            repo.checkout_worktree(&path, &branch)
                .map_err(|e| self.git_error(index, e))?;
        }
        let relative = relative_to(&path, self.project.root());
        let record = self.record(index);
        record.branch = Some(branch);
        record.worktree = Some(relative);
        record.error = None;
        self.begin(index)?;
        let worker = phase_worker(&id, &self.parallel.worker);
        // A project in a subdirectory of its repository is in the same subdirectory there.
        let root = project_in(repo, &path);
        let spec = PhaseAgent {
            phase: &id,
            root: &root,
            worker: &worker,
            agent: agent.as_deref(),
        };
        let drivers = self.parallel.drivers.clone();
        let driver = drivers
            .as_ref()
            .ok_or_else(|| WorkflowError::Agent {
                run_id: run_id.clone(),
                phase: id.clone(),
                message: "no driver factory".into(),
            })?
            .driver(&spec)
            .map_err(|message| WorkflowError::Agent {
                run_id: run_id.clone(),
                phase: id.clone(),
                message,
            })?;
        let prompt = self.phase_prompt(index)?;
        let restart = RestartLoop::new(Project::at(&root), self.config.clone()).with_worker(worker);
        Ok((restart, driver, prompt))
    }

    /// Records how phase `index` ended in its worktree and asks its approval gate. Returns
    /// whether the gate aborted the run.
    fn finished(
        &mut self,
        repo: &Repository,
        index: usize,
        result: Result<PhaseReport, RestartError>,
        elapsed: Duration,
    ) -> Result<bool, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let record = self.record(index).clone();
        let tree = record.worktree.as_ref().map_or_else(
            || self.project.root().to_path_buf(),
            |w| self.project.root().join(w),
        );
        let base = record.base_commit.clone().unwrap_or_default();
        let branch = record.branch.clone().unwrap_or_default();
        let commits = repo.commits_between(&base, &branch).unwrap_or(0);
        let outcome = match result {
            Ok(report) => {
                let record = self.record(index);
                record.tokens = record.tokens.saturating_add(report.tokens);
                let left = changed_files(&Project::at(&tree), &[]).unwrap_or_default();
                if left.is_empty() {
                    Ok(report.restarts)
                } else {
                    let files: Vec<String> = left.iter().take(5).map(|f| f.path.clone()).collect();
                    Err(format!(
                        "uncommitted work in {} ({})",
                        tree.display(),
                        files.join(", ")
                    ))
                }
            }
            Err(e) => Err(e.to_string()),
        };
        let record = self.record(index);
        record.elapsed_ms = record.elapsed_ms.saturating_add(millis(elapsed));
        record.commits = commits;
        match outcome {
            Ok(restarts) => {
                record.status = PhaseStatus::Finished;
                self.save()?;
                self.prompter.on_event(&WorkflowEvent::PhaseCompleted {
                    phase: id.clone(),
                    restarts,
                });
                if self.workflow.phases[index].approval.is_some() {
                    self.gate_note = repo
                        .diff_stat(&base, &branch)
                        .ok()
                        .filter(|s| !s.is_empty())
                        .map(|stat| format!("Changes on {branch} since its base:\n{stat}"));
                }
                self.gate(index)
            }
            Err(error) => {
                tracing::error!(phase = %id, "phase failed: {error}");
                record.status = PhaseStatus::Failed;
                record.error = Some(error.clone());
                self.save()?;
                self.alert("phase_failed", &id, &error);
                self.prompter
                    .on_event(&WorkflowEvent::PhaseFailed { phase: id, error });
                Ok(false)
            }
        }
    }

    /// Asks phase `index`'s approval gate and applies the answer; true when it aborts.
    fn gate(&mut self, index: usize) -> Result<bool, WorkflowError> {
        let Some(decided) = self.ask(index)? else {
            return Ok(false);
        };
        let id = self.workflow.phases[index].id.clone();
        self.remember(&id, &decided);
        let abort = self.apply(index, &decided)?;
        self.save()?;
        tracing::info!(phase = %id, option = %decided.label, action = decided.action.as_str(), "approval gate decision");
        self.prompter.on_event(&WorkflowEvent::Decision {
            phase: id,
            label: decided.label,
            action: decided.action,
        });
        Ok(abort)
    }

    /// What a decision does to the graph: a repeated phase runs again (in its worktree, when
    /// it has one), skipped phases are marked when their turn comes, abort ends the run.
    fn apply(&mut self, index: usize, decided: &Decided) -> Result<bool, WorkflowError> {
        match decided.action {
            Action::Continue => Ok(false),
            Action::Abort => Ok(true),
            Action::SkipPhases => {
                for phase in &decided.skipped {
                    if !self.state.context.skip_phases.contains(phase) {
                        self.state.context.skip_phases.push(phase.clone());
                    }
                }
                Ok(false)
            }
            Action::RepeatPhase => {
                let own = self.workflow.phases[index].id.clone();
                let target = decided.target.clone().unwrap_or(own);
                let cap = self.workflow.max_iterations(&target);
                let runs = self.state.context.iteration(&target);
                if runs >= cap {
                    return Err(WorkflowError::IterationCap {
                        run_id: self.state.run_id.clone(),
                        phase: target,
                        runs,
                        cap,
                    });
                }
                let Some(target_index) = self.workflow.index_of(&target) else {
                    return Ok(false);
                };
                self.state.context.bump(&target);
                let record = self.record(target_index);
                // Counted above; `Running` keeps `begin` from counting it again.
                record.status = if record.worktree.is_some() && record.status != PhaseStatus::Merged
                {
                    PhaseStatus::Running
                } else {
                    *record = PhaseRecord {
                        agent: record.agent.clone(),
                        tokens: record.tokens,
                        elapsed_ms: record.elapsed_ms,
                        ..PhaseRecord::default()
                    };
                    PhaseStatus::Running
                };
                self.rerun_dependents(target_index)?;
                Ok(false)
            }
        }
    }

    /// The phases that depend on `target`, directly or not, and already ran (merged) run again
    /// after it, since their input changed: they wait again, counted anew when they start.
    /// Those still running or finished but unmerged are left to end as they are.
    fn rerun_dependents(&mut self, target: usize) -> Result<(), WorkflowError> {
        let deps = self.workflow.dependencies();
        let mut reached = vec![false; deps.len()];
        reached[target] = true;
        // Phases may list dependencies below them: repeat until nothing new is reached.
        let mut grew = true;
        while grew {
            grew = false;
            for (index, its) in deps.iter().enumerate() {
                if !reached[index] && its.iter().any(|&d| reached[d]) {
                    reached[index] = true;
                    grew = true;
                }
            }
        }
        for index in (0..deps.len()).filter(|&i| reached[i] && i != target) {
            let record = self.record(index);
            if record.status == PhaseStatus::Merged {
                *record = PhaseRecord {
                    agent: record.agent.clone(),
                    tokens: record.tokens,
                    elapsed_ms: record.elapsed_ms,
                    ..PhaseRecord::default()
                };
                tracing::info!(phase = %self.workflow.phases[index].id, "runs again after the repeated phase");
            }
        }
        self.save()
    }

    pub(super) fn git_error(&self, index: usize, source: cp_git::WorktreeError) -> WorkflowError {
        WorkflowError::Worktree {
            run_id: self.state.run_id.clone(),
            phase: self.workflow.phases[index].id.clone(),
            source: Box::new(source),
        }
    }
}

/// The project's root inside the worktree at `tree`: the same subdirectory of the repository
/// as the project's own root.
pub(super) fn project_in(repo: &Repository, tree: &Path) -> PathBuf {
    match repo.prefix() {
        Ok(prefix) if !prefix.is_empty() => tree.join(prefix),
        _ => tree.to_path_buf(),
    }
}

/// `path` relative to `root` when inside it.
fn relative_to(path: &Path, root: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}
