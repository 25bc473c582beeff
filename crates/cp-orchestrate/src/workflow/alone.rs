//! A phase of a graph that runs alone (nothing else running or ready): in the project's own
//! tree, as a plain sequence runs it, with its own agent when the host gives a factory. What
//! it leaves is tested before anything depends on it (`verdict.rs`); a red tree sends it back
//! to work there.

use std::time::Instant;

use cp_base::CancelToken;
use cp_git::Repository;

use super::agents::PhaseAgent;
use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::PhaseStatus;
use super::prompter::WorkflowEvent;
use super::store::RunStatus;
use super::verdict::Verified;
use super::waves::{EarlyEnd, millis};
use crate::restart::{RestartEvent, SessionDriver};

impl Engine<'_> {
    /// A phase alone in the project's tree, as a plain sequence runs it; again while its
    /// tree is red and tries are left.
    pub(super) fn run_alone(&mut self, index: usize) -> Result<EarlyEnd, WorkflowError> {
        let repo = Repository::at(self.project.root());
        let base = repo.head().ok();
        loop {
            if let Some(stop) = self.work_alone(index, base.as_deref())? {
                return Ok(Some(stop));
            }
            match self.verify_alone(&repo, index, base.as_deref())? {
                Verified::Done => break,
                Verified::Again => {}
                Verified::Stop(status) => return Ok(Some(status)),
            }
        }
        // Its work is on the run's branch, tested: its dependents may start from it.
        self.record(index).status = PhaseStatus::Merged;
        self.save()?;
        Ok(self.gate(index)?.then_some(RunStatus::Aborted))
    }

    /// One run of phase `index`'s agent in the project's tree, which was at `base` before the
    /// phase's first run.
    fn work_alone(&mut self, index: usize, base: Option<&str>) -> Result<EarlyEnd, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let id = phase.id.clone();
        let repo = Repository::at(self.project.root());
        let base = base.map(str::to_owned);
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
                // In the project's tree: on the run's machine.
                host: None,
                // Nothing runs beside it: no change can come from under it.
                stop: &CancelToken::new(),
            };
            own = Some(drivers.driver(&spec).map_err(|e| WorkflowError::Agent {
                run_id: self.state.run_id.clone(),
                phase: id.clone(),
                message: e.to_string(),
            })?);
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
        self.state.pending_feedback = None;
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::PhaseCompleted {
            phase: id,
            restarts: report.restarts,
        });
        Ok(None)
    }
}
