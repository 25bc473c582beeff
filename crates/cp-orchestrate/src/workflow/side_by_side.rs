//! Phases that run side by side, each in its worktree on a thread of its own: as each
//! finishes, its approval gate is asked and it joins the merge queue (`queue.rs`), which
//! tests each combined tree before the run's branch moves and lands the merges in the file's
//! order, so the result does not depend on timing; the phases those merges made ready start
//! while the others still run, and a phase whose merge was red works again beside them.

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
use super::tester::TreeTest;
use super::waves::{EarlyEnd, millis};
use crate::restart::changed_files;
use crate::restart::{PhaseReport, RestartError, RestartEvent};

/// What a phase's thread, or a merge test's, tells the engine's thread.
pub(super) enum Report {
    /// A step of its restart loop, for the prompter.
    Event(WorkflowEvent),
    /// It is done.
    Done {
        index: usize,
        result: Result<PhaseReport, RestartError>,
        elapsed: Duration,
    },
    /// A combined tree's test ended (candidate `id` of the merge queue).
    Tested {
        id: u64,
        test: TreeTest,
        elapsed: Duration,
    },
    /// What a green test left running in phase `index`'s worktree has ended.
    Released { index: usize },
}

/// Where the side-by-side loop stands between two reports.
struct Progress {
    /// Phase threads still running.
    running: usize,
    /// A phase that could not launch: no more start, and the run reports it at the end.
    failure: Option<WorkflowError>,
    /// How the run ends, once that is known.
    end: EarlyEnd,
    /// The phases to start next.
    start: Vec<usize>,
    /// Before the first round: `start` is the wave itself.
    first: bool,
}

impl Progress {
    fn new(wave: &[usize]) -> Self {
        Self {
            running: 0,
            failure: None,
            end: None,
            start: wave.to_vec(),
            first: true,
        }
    }
}

impl Engine<'_> {
    /// The phases of the wave in their worktrees, each on its own thread. As each finishes,
    /// its approval gate is asked and it joins the merge queue; a phase whose dependencies
    /// have landed then starts at once (up to `max_parallel`), while the others still run.
    /// Returns how the run ended, when it did.
    pub(super) fn run_side_by_side(
        &mut self,
        repo: &Repository,
        wave: &[usize],
        deps: &[Vec<usize>],
    ) -> Result<EarlyEnd, WorkflowError> {
        let prefix = repo
            .prefix()
            .map_err(|source| self.git_error(wave[0], source))?;
        repo.exclude_locally(&format!("/{prefix}{STATE_DIR}/{WORKTREES}/"))
            .map_err(|source| self.git_error(wave[0], source))?;
        let (tx, rx) = mpsc::channel::<Report>();
        let mut progress = Progress::new(wave);
        std::thread::scope(|scope| -> Result<(), WorkflowError> {
            loop {
                self.advance_merges(repo, scope, &tx, &mut progress)?;
                self.start_phases(repo, scope, &tx, deps, &mut progress)?;
                if progress.running == 0 && self.queue.in_flight() == 0 {
                    break;
                }
                let Ok(report) = rx.recv() else { break };
                self.on_report(repo, report, &mut progress)?;
            }
            progress.failure.take().map_or(Ok(()), Err)
        })?;
        self.tidy_landed(repo)?;
        let mut end = progress.end;
        if end.is_none() && self.interrupted() {
            // Interrupted while the last phases were finishing: the run is resumable.
            self.state.error = Some(format!(
                "interrupted; continue it with: context-pilot run --resume {}",
                self.state.run_id
            ));
            self.save()?;
            end = Some(RunStatus::Running);
        }
        Ok(end)
    }

    /// Moves the merge queue on, unless the run is ending; once it is, the tests in progress
    /// are stopped, since nothing more lands.
    fn advance_merges<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope std::thread::Scope<'scope, '_>,
        tx: &mpsc::Sender<Report>,
        progress: &mut Progress,
    ) -> Result<(), WorkflowError> {
        if progress.end.is_none() && !self.interrupted() {
            match self.advance_queue(repo, scope, tx) {
                Ok(ended) => progress.end = ended,
                Err(e) => {
                    self.stop_queue();
                    // What landed is tidied; a failure here is the resume's to finish.
                    let _ = self.tidy_landed(repo);
                    return Err(e);
                }
            }
        }
        if progress.end.is_some() || self.interrupted() {
            self.stop_queue();
        }
        Ok(())
    }

    /// Starts the phases that may run now: the wave at first; later, those that merges made
    /// ready and those sent back, beside the ones still running. When nothing runs and nothing
    /// is tested, none start here: the next wave is chosen afresh (one alone runs in the
    /// project's tree). A phase that cannot launch stops further starts; the phases already
    /// started finish, and the run then reports it.
    fn start_phases<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope std::thread::Scope<'scope, '_>,
        tx: &mpsc::Sender<Report>,
        deps: &[Vec<usize>],
        progress: &mut Progress,
    ) -> Result<(), WorkflowError> {
        let ending = progress.end.is_some() || progress.failure.is_some() || self.interrupted();
        if !std::mem::take(&mut progress.first) && !ending {
            progress.start.clear();
            let busy = progress.running + self.queue.testing();
            if busy > 0 {
                let room = self.parallel.max.saturating_sub(progress.running);
                progress.start = self.sent_back(deps, room);
                let room = room.saturating_sub(progress.start.len());
                progress.start.extend(self.ready(deps, room)?);
            }
        }
        if ending {
            return Ok(());
        }
        for index in std::mem::take(&mut progress.start) {
            let startable = matches!(
                self.record(index).status,
                PhaseStatus::Running | PhaseStatus::Waiting
            );
            // A phase whose worktree is busy is chosen again once it is free (the next report).
            if !startable || self.queue.busy_in(index) {
                continue;
            }
            match self.launch(repo, index) {
                Ok(launched) => {
                    self.spawn(scope, tx, index, launched)?;
                    progress.running += 1;
                }
                Err(e) => {
                    progress.failure = Some(e);
                    break;
                }
            }
        }
        Ok(())
    }

    /// Handles one report of a phase's thread or a merge test's.
    fn on_report(
        &mut self,
        repo: &Repository,
        report: Report,
        progress: &mut Progress,
    ) -> Result<(), WorkflowError> {
        match report {
            Report::Event(event) => self.prompter.on_event(&event),
            Report::Tested { id, test, elapsed } => self.tested(id, test, elapsed),
            Report::Released { index } => self.queue.released(index),
            Report::Done {
                index,
                result,
                elapsed,
            } => {
                progress.running -= 1;
                self.phase_done(repo, index, result, elapsed, &mut progress.end)?;
            }
        }
        Ok(())
    }

    /// Phase `index`'s thread ended with `result`: its work is set aside (its input
    /// changed), recorded as interrupted (Ctrl-C), or finished and its gate asked; `end`
    /// is set when the run ends with it.
    fn phase_done(
        &mut self,
        repo: &Repository,
        index: usize,
        result: Result<PhaseReport, RestartError>,
        elapsed: Duration,
        end: &mut EarlyEnd,
    ) -> Result<(), WorkflowError> {
        self.phase_stops.remove(&index);
        if self.record(index).superseding {
            // Stopped because its input changed: its work is set aside, and it waits to run
            // again from the new base.
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
            *end = end.or(Some(RunStatus::Running));
        } else if self.finished(repo, index, result, elapsed)? && end.is_none() {
            self.state.status = RunStatus::Aborted;
            self.save()?;
            *end = Some(RunStatus::Aborted);
        }
        Ok(())
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
                if !self.record(index).red_merges.is_empty() {
                    // Back from a red merge: its gate was answered for this work already;
                    // the queue tests it again.
                    return Ok(false);
                }
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
