//! A workflow with `depends_on`, scheduled: a phase starts as soon as its dependencies are
//! merged (up to `max_parallel` at once). This file picks each wave and keeps each phase's
//! place in the run's `phase_runs`; a phase that runs alone works in the project's own tree
//! (`alone.rs`), phases that run together each get a worktree (`phase_tree.rs`) and a thread
//! (`side_by_side.rs`), and their branches are merged in the file's order (`merge.rs`).
//! Ctrl-C (the driver factory's `interrupted`) stops every phase, which is recorded as
//! interrupted, so `--resume` continues running or interrupted phases in their worktrees and
//! runs the merges not made.

use std::time::Duration;

use cp_git::Repository;

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::{PhaseRecord, PhaseStatus};
use super::prompter::WorkflowEvent;
use super::store::RunStatus;

/// How a wave ended the run early (`None`: the run goes on).
pub(super) type EarlyEnd = Option<RunStatus>;

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
            // A phase stopped because its input changed, when the run ended before its work
            // was set aside: that is finished first.
            for index in 0..self.workflow.phases.len() {
                if self.record(index).superseding {
                    let reason = self.record(index).error.clone().unwrap_or_default();
                    self.supersede(index, &reason)?;
                }
            }
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
            // A phase the person kept aside is their decision, not a phase left undone; the
            // phases that depend on it are.
            .filter(|p| {
                let status = self.status_of(&p.id);
                !status.lets_dependents_run() && status != PhaseStatus::KeptAside
            })
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
    pub(super) fn interrupted(&self) -> bool {
        self.parallel
            .drivers
            .as_ref()
            .is_some_and(|drivers| drivers.interrupted())
    }

    /// Records phase `index` as interrupted and the run as resumable; the [`EarlyEnd`] for the
    /// caller.
    pub(super) fn interrupt(&mut self, index: usize) -> Result<EarlyEnd, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        tracing::info!(phase = %id, "phase interrupted");
        let record = self.record(index);
        record.status = PhaseStatus::Interrupted;
        record.error =
            Some("interrupted by the person (Ctrl-C, SIGTERM, or Esc in the TUI)".into());
        self.state.status = RunStatus::Running;
        self.state.error = Some(format!(
            "interrupted; continue it with: context-pilot run --resume {}",
            self.state.run_id
        ));
        self.save()?;
        Ok(Some(RunStatus::Running))
    }

    pub(super) fn status_of(&self, phase: &str) -> PhaseStatus {
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
                        | PhaseStatus::Red
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
    pub(super) fn ready(
        &mut self,
        deps: &[Vec<usize>],
        limit: usize,
    ) -> Result<Vec<usize>, WorkflowError> {
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
    fn run_wave(&mut self, wave: &[usize], deps: &[Vec<usize>]) -> Result<EarlyEnd, WorkflowError> {
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

    /// Marks phase `index` running (counting the run unless it was running already).
    pub(super) fn begin(&mut self, index: usize) -> Result<(), WorkflowError> {
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

    pub(super) fn git_error(&self, index: usize, source: cp_git::WorktreeError) -> WorkflowError {
        WorkflowError::Worktree {
            run_id: self.state.run_id.clone(),
            phase: self.workflow.phases[index].id.clone(),
            source: Box::new(source),
        }
    }
}

pub(super) fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}
