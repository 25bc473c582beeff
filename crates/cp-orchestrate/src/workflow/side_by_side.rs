//! Phases that run side by side, each in its worktree on a thread of its own: as each
//! finishes, its approval gate is asked and the finished branches are merged in the file's
//! order, up to the first phase still running, so the result does not depend on timing; the
//! phases those merges made ready start while the others still run.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use cp_base::{Project, STATE_DIR};
use cp_git::Repository;

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::PhaseStatus;
use super::phase_tree::{Launched, WORKTREES, project_in};
use super::prompter::WorkflowEvent;
use super::store::RunStatus;
use super::waves::{Stop, millis};
use crate::restart::changed_files;
use crate::restart::{PhaseReport, RestartError, RestartEvent};

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

impl Engine<'_> {
    /// Merges the finished phases in the file's order, up to the first phase still running:
    /// a phase listed earlier holds back the merge of later ones, so the result does not
    /// depend on which finished first.
    pub(super) fn merge_in_order(&mut self, repo: &Repository) -> Result<Stop, WorkflowError> {
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
    pub(super) fn run_side_by_side(
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
                self.phase_stops.remove(&index);
                if self.record(index).superseding {
                    // Stopped because its input changed: its work is set aside, and it waits
                    // to run again from the new base.
                    let record = self.record(index);
                    record.elapsed_ms = record.elapsed_ms.saturating_add(millis(elapsed));
                    if let Ok(report) = &result {
                        record.tokens = record.tokens.saturating_add(report.tokens);
                    }
                    let reason = record.error.clone().unwrap_or_default();
                    self.supersede(index, &reason)?;
                } else if result.is_err() && self.interrupted() {
                    // Ctrl-C: the others are stopping too; nothing more starts or merges.
                    self.interrupt(index)?;
                    self.release(repo, index);
                    stop = stop.or(Some(RunStatus::Running));
                    continue;
                } else if self.finished(repo, index, result, elapsed)? && stop.is_none() {
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
                    let room = self.parallel.max.saturating_sub(running);
                    start = self.sent_back(deps, room);
                    let room = room.saturating_sub(start.len());
                    start.extend(self.ready(deps, room)?);
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

    /// Phases a `repeat_phase` sent back while others run (recorded as running, with no
    /// thread), whose dependencies are merged, in file order, up to `limit`: they start now
    /// rather than once the phases beside them are done.
    fn sent_back(&self, deps: &[Vec<usize>], limit: usize) -> Vec<usize> {
        (0..self.workflow.phases.len())
            .filter(|&index| {
                self.status_of(&self.workflow.phases[index].id) == PhaseStatus::Running
                    && !self.phase_stops.contains_key(&index)
                    && deps[index].iter().all(|&d| {
                        self.status_of(&self.workflow.phases[d].id)
                            .lets_dependents_run()
                    })
            })
            .take(limit)
            .collect()
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
}
