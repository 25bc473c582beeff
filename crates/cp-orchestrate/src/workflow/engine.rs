//! The engine of a workflow run: the run's state and what drives it. A plain list of phases
//! runs here, one phase after another through the restart loop, each followed by its approval
//! gate (`gate.rs`); a workflow with `depends_on` is driven by `waves.rs`. Every step is saved,
//! so a crashed run resumes where it stopped.

use std::collections::HashMap;
use std::sync::Arc;

use cp_base::{CancelToken, Project, WorkerId};

use super::agents::DriverFactory;
use super::alert::{Alert, Alerter};
use super::error::WorkflowError;
use super::prompter::{ApprovalPrompter, WorkflowEvent};
use super::queue_state::MergeQueue;
use super::schema::{Action, Workflow};
use super::store::{Position, RunState, RunStatus, RunStore, Stage};
use super::tester::TreeTester;
use crate::restart::{RestartConfig, RestartEvent, RestartLoop, SessionDriver};

pub(super) struct Engine<'a> {
    pub(super) workflow: &'a Workflow,
    pub(super) store: RunStore,
    pub(super) restart: RestartLoop,
    pub(super) driver: &'a mut dyn SessionDriver,
    pub(super) prompter: &'a mut dyn ApprovalPrompter,
    pub(super) state: RunState,
    pub(super) project: Project,
    pub(super) config: RestartConfig,
    pub(super) parallel: Parallel,
    /// Added to the next approval gate's prompt (a phase's `git diff --stat`).
    pub(super) gate_note: Option<String>,
    /// The stop of each phase running on a thread of its own, by index.
    pub(super) phase_stops: HashMap<usize, CancelToken>,
    /// The merge queue's candidates and the tests in flight.
    pub(super) queue: MergeQueue,
}

/// How phases of a graph run side by side.
pub(super) struct Parallel {
    /// At most this many at once.
    pub(super) max: usize,
    /// Keep worktrees and branches after their merge.
    pub(super) keep_worktrees: bool,
    /// Makes a phase's agent; `None`: one phase at a time with the run's agent.
    pub(super) drivers: Option<Arc<dyn DriverFactory>>,
    /// The run's worker.
    pub(super) worker: WorkerId,
    /// Tells the person when the run needs them.
    pub(super) alerter: Option<Arc<dyn Alerter>>,
    /// The run's agent, recorded for phases without their own.
    pub(super) agent: Option<String>,
    /// Tests combined trees for the merge queue and the run's end; `None`: nothing is tested
    /// (merges land as before, their proof says so).
    pub(super) tester: Option<Arc<dyn TreeTester>>,
    /// How many combined trees the queue tests at once.
    pub(super) speculate: usize,
}

impl Engine<'_> {
    /// Tells the person (through the host's alerter) that `phase` needs them.
    pub(super) fn alert(&self, event: &'static str, phase: &str, message: &str) {
        if let Some(alerter) = &self.parallel.alerter {
            alerter.alert(&Alert {
                event,
                run_id: self.state.run_id.clone(),
                workflow: self.state.workflow.clone(),
                phase: phase.to_owned(),
                message: message.to_owned(),
            });
        }
    }

    pub(super) fn save(&mut self) -> Result<(), WorkflowError> {
        self.store.save(&mut self.state)
    }

    /// The phase that runs after the one at `index`, in the workflow's run order.
    /// Whether phase `target` may run once more (`repeat_phase`); the error names the cap.
    pub(super) fn check_iteration_cap(&self, target: &str) -> Result<(), WorkflowError> {
        let cap = self.workflow.max_iterations(target);
        let runs = self.state.context.iteration(target);
        if runs >= cap {
            return Err(WorkflowError::IterationCap {
                run_id: self.state.run_id.clone(),
                phase: target.to_owned(),
                runs,
                cap,
            });
        }
        Ok(())
    }

    pub(super) fn position_after(&self, index: usize) -> Option<Position> {
        let order = self.workflow.run_order();
        let next = order
            .iter()
            .position(|&i| i == index)
            .and_then(|at| order.get(at + 1));
        next.map(|&i| &self.workflow.phases[i]).map(|p| Position {
            phase: p.id.clone(),
            stage: Stage::Phase,
            counted: false,
        })
    }

    pub(super) fn drive(&mut self, resumed: bool) -> Result<RunStatus, WorkflowError> {
        if self.workflow.is_graph() {
            return self.drive_graph(resumed);
        }
        while let Some(position) = self.state.position.clone() {
            let Some(index) = self.workflow.index_of(&position.phase) else {
                return Err(WorkflowError::Invalid {
                    path: self.state.workflow_file.clone(),
                    phase: Some(position.phase),
                    message: "the run is at a phase the workflow does not have".into(),
                });
            };
            match position.stage {
                Stage::Phase => self.run_phase(index, position.counted)?,
                Stage::Approval => {
                    if self.approval_gate(index)? == Some(Action::Abort) {
                        return Ok(RunStatus::Aborted);
                    }
                }
            }
        }
        self.state.status = RunStatus::Completed;
        self.save()?;
        Ok(RunStatus::Completed)
    }

    fn run_phase(&mut self, index: usize, counted: bool) -> Result<(), WorkflowError> {
        let phase = &self.workflow.phases[index];
        // A phase scheduled by repeat_phase (counted) runs even if it is on the skip list: the
        // person asked for it explicitly.
        if !counted && self.state.context.skip_phases.contains(&phase.id) {
            tracing::info!(phase = %phase.id, "skipping phase");
            self.prompter.on_event(&WorkflowEvent::PhaseSkipped {
                phase: phase.id.clone(),
            });
            self.state.position = self.position_after(index);
            return self.save();
        }
        if !counted {
            self.state.context.bump(&phase.id);
            self.state.position = Some(Position {
                phase: phase.id.clone(),
                stage: Stage::Phase,
                counted: true,
            });
            self.save()?;
        }
        let prompt = self.phase_prompt(index)?;
        let iteration = self.state.context.iteration(&phase.id);
        tracing::info!(phase = %phase.id, iteration, "phase started");
        self.prompter.on_event(&WorkflowEvent::PhaseStarted {
            phase: phase.id.clone(),
            iteration,
        });
        let prompter = &mut *self.prompter;
        let mut forward = |event: &RestartEvent| {
            prompter.on_event(&WorkflowEvent::Restart(event.clone()));
        };
        let result = self
            .restart
            .run_phase(&phase.id, &prompt, &mut *self.driver, &mut forward);
        let report = match result {
            Ok(report) => report,
            Err(source) => {
                tracing::error!(phase = %phase.id, "phase failed: {source}");
                self.alert("phase_failed", &phase.id, &source.to_string());
                self.state.status = RunStatus::Failed;
                self.state.error = Some(source.to_string());
                self.save()?;
                return Err(WorkflowError::Phase {
                    run_id: self.state.run_id.clone(),
                    source,
                });
            }
        };
        self.state.pending_feedback = None;
        self.state.position = Some(Position {
            phase: phase.id.clone(),
            stage: Stage::Approval,
            counted: true,
        });
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::PhaseCompleted {
            phase: phase.id.clone(),
            restarts: report.restarts,
        });
        Ok(())
    }
}
