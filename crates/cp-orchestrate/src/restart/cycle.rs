//! The restart loop: run a phase in sessions until it completes, restarting with
//! a handoff whenever a session reaches its limit.

use std::collections::HashSet;
use std::path::PathBuf;

use cp_base::{Project, WorkerId};

use super::config::RestartConfig;
use super::error::RestartError;
use super::estimator::ContextEstimator;
use super::event::{HandoffSource, RestartEvent, RestartObserver};
use super::fallback::fallback_handoff;
use super::git::{
    changed_files, commit_all, commit_identity, ensure_clean, head_state, repo_relative,
};
use super::prompt::{RestartContext, restart_prompt};
use super::session::{HANDOFF_REQUEST, SessionControl, SessionDriver, SessionEnd};
use crate::handoff::{Handoff, HandoffStore};

/// What a completed phase went through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseReport {
    /// The phase.
    pub phase_id: String,
    /// Restarts used.
    pub restarts: u32,
    /// Hashes of the commits made (before restarts and at the end), oldest first.
    pub commits: Vec<String>,
    /// Handoff records written or received at each stop, oldest first.
    pub handoffs: Vec<PathBuf>,
    /// Input tokens of every request of every session, summed.
    pub tokens: u64,
}

/// Runs phases through sessions of a [`SessionDriver`], restarting them per the policy.
///
/// ```no_run
/// # use cp_base::Project;
/// # use cp_orchestrate::{RestartConfig, RestartEvent, RestartLoop, SessionDriver};
/// # fn f(project: Project, driver: &mut dyn SessionDriver) -> Result<(), Box<dyn std::error::Error>> {
/// let restart = RestartLoop::new(project, RestartConfig::default());
/// restart.preflight(&[])?;
/// let mut status = |event: &RestartEvent| eprintln!("{event}");
/// let report = restart.run_phase("implement", "Implement the parser.", driver, &mut status)?;
/// println!("done after {} restarts", report.restarts);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RestartLoop {
    project: Project,
    config: RestartConfig,
    worker: WorkerId,
    /// Commit when a phase completes (workflows); interactive turns only commit on restarts.
    commit_completed: bool,
}

impl RestartLoop {
    /// A loop over `project` with `config` (already merged with the CLI flags), acting for the
    /// default worker.
    pub fn new(project: Project, config: RestartConfig) -> Self {
        Self {
            project,
            config,
            worker: WorkerId::default(),
            commit_completed: true,
        }
    }

    /// No commit when the session completes, only before restarts: for interactive turns,
    /// where the person decides when to commit.
    #[must_use]
    pub fn without_completion_commit(mut self) -> Self {
        self.commit_completed = false;
        self
    }

    /// Acts for `worker`: fallback handoffs carry its id, and only its `Checkpoint_handoff`
    /// records count as the agent's handoff.
    #[must_use]
    pub fn with_worker(mut self, worker: WorkerId) -> Self {
        self.worker = worker;
        self
    }

    /// The policy in use.
    pub fn config(&self) -> &RestartConfig {
        &self.config
    }

    /// Checks before the first phase: with auto-commit, git must work, the project must be in
    /// a repository, git must have an identity to commit as (or `commit_as_context_pilot`
    /// allow Context Pilot's), and (unless `allow_dirty`) the tree must be clean apart from paths
    /// starting with one of `ignore` (relative to the project root, e.g. the run's own
    /// `.context-pilot/runs/<id>/`).
    pub fn preflight(&self, ignore: &[&str]) -> Result<(), RestartError> {
        self.config.validate()?;
        let ignore: Vec<String> = ignore
            .iter()
            .map(|p| repo_relative(&self.project, p))
            .collect();
        let ignore = ignore.as_slice();
        if !self.config.auto_commit {
            return Ok(());
        }
        if self.config.allow_dirty {
            // Still make sure git and the repository are there, so the first restart does not
            // fail after an hour of work.
            changed_files(&self.project, ignore).map(drop)?;
        } else {
            ensure_clean(&self.project, ignore)?;
        }
        // Nor for want of a name to commit as.
        commit_identity(&self.project, self.config.commit_as_context_pilot).map(drop)
    }

    /// Runs `phase_id` with `prompt` until a session completes. Each session that stops at a
    /// threshold gets a turn to submit its handoff (else a fallback is built), the work is
    /// auto-committed, and a fresh session starts with the handoff before `prompt`. After
    /// `max_restarts` restarts, one more stop fails the phase.
    pub fn run_phase(
        &self,
        phase_id: &str,
        prompt: &str,
        driver: &mut dyn SessionDriver,
        observer: &mut dyn RestartObserver,
    ) -> Result<PhaseReport, RestartError> {
        let store = HandoffStore::new(&self.project);
        let mut report = PhaseReport {
            phase_id: phase_id.to_owned(),
            ..PhaseReport::default()
        };
        let mut current_prompt = prompt.to_owned();
        let mut attempt = 0u32;
        // Every session of the phase is checked against where the phase began, so what a
        // restart auto-committed is still the phase's work.
        let base = head_state(&self.project);
        loop {
            let known: HashSet<PathBuf> = store.list()?.into_iter().collect();
            let control =
                SessionControl::new(phase_id, attempt, ContextEstimator::new(&self.config))
                    .with_base(base.clone());
            tracing::info!(phase = phase_id, attempt, "starting session");
            observer.on_event(&RestartEvent::SessionStarted {
                phase: phase_id.to_owned(),
                attempt,
            });
            let end = driver.run(&current_prompt, &control);
            report.tokens = report.tokens.saturating_add(control.tokens_used());
            match end {
                SessionEnd::Completed => {
                    if self.commit_completed {
                        self.commit(
                            &format!("context-pilot: phase {phase_id} completed"),
                            phase_id,
                            &mut report,
                            observer,
                        )?;
                    }
                    tracing::info!(
                        phase = phase_id,
                        restarts = report.restarts,
                        "phase completed"
                    );
                    observer.on_event(&RestartEvent::PhaseCompleted {
                        phase: phase_id.to_owned(),
                        restarts: report.restarts,
                    });
                    return Ok(report);
                }
                SessionEnd::Failed(message) => {
                    tracing::error!(phase = phase_id, "session failed: {message}");
                    if self.config.commit_on_failure {
                        self.commit(
                            &format!("context-pilot: auto-commit after phase {phase_id} failed"),
                            phase_id,
                            &mut report,
                            observer,
                        )?;
                    }
                    return Err(RestartError::SessionFailed {
                        phase: phase_id.to_owned(),
                        message,
                    });
                }
                SessionEnd::Stopped => {}
            }

            current_prompt = self.after_stop(
                &store,
                &known,
                driver,
                &control,
                prompt,
                &mut report,
                observer,
            )?;
            attempt += 1;
        }
    }

    /// Handles a stopped session: handoff, counter, commit; returns the next prompt.
    #[expect(
        clippy::too_many_arguments,
        reason = "private step of run_phase; bundling its locals in a struct would only hide them"
    )]
    fn after_stop(
        &self,
        store: &HandoffStore,
        known: &HashSet<PathBuf>,
        driver: &mut dyn SessionDriver,
        control: &SessionControl,
        prompt: &str,
        report: &mut PhaseReport,
        observer: &mut dyn RestartObserver,
    ) -> Result<String, RestartError> {
        let phase_id = control.phase_id();
        let trigger = control.trigger();
        observer.on_event(&RestartEvent::Stopped {
            phase: phase_id.to_owned(),
            trigger,
        });
        // Changes as the stopped session left them, before any commit.
        let changed = match changed_files(&self.project, &[]) {
            Ok(files) => files,
            Err(e) => {
                tracing::warn!(phase = phase_id, "cannot list changes for the handoff: {e}");
                Vec::new()
            }
        };
        let (handoff, path, source, why) =
            self.collect_handoff(store, known, driver, control, &changed)?;
        // Taken after the handoff turn, whose calls are part of the session's progress.
        let history = control.tool_history();
        report.handoffs.push(path.clone());
        observer.on_event(&RestartEvent::Handoff {
            phase: phase_id.to_owned(),
            source,
            path: path.clone(),
            why,
        });

        let restart = control.attempt() + 1;
        let max = self.config.max_restarts;
        if restart > max {
            tracing::error!(
                phase = phase_id,
                hits = restart,
                max,
                "max restarts exceeded"
            );
            observer.on_event(&RestartEvent::LimitExceeded {
                phase: phase_id.to_owned(),
                hits: restart,
                max,
            });
            if self.config.commit_on_failure {
                self.commit(
                    &format!("context-pilot: auto-commit after phase {phase_id} failed"),
                    phase_id,
                    report,
                    observer,
                )?;
            }
            return Err(RestartError::MaxRestartsExceeded {
                phase: phase_id.to_owned(),
                hits: restart,
                max,
                handoff: Some(path),
            });
        }
        let commit = self.commit(
            &format!("context-pilot: auto-commit before restart {restart} of phase {phase_id}"),
            phase_id,
            report,
            observer,
        )?;
        report.restarts = restart;
        tracing::warn!(
            phase = phase_id,
            restart,
            max,
            "restarting the phase with a handoff"
        );
        observer.on_event(&RestartEvent::Restarting {
            phase: phase_id.to_owned(),
            restart,
            max,
        });
        let context = RestartContext {
            phase_id: phase_id.to_owned(),
            restart,
            max_restarts: max,
            trigger,
            changed_files: changed,
            commit,
            history,
        };
        Ok(restart_prompt(&handoff, &context, prompt))
    }

    /// The stopped session's handoff: returned by the driver, or the newest record this
    /// worker saved since the session started, or else a fallback (saved too) with why the
    /// agent gave none.
    fn collect_handoff(
        &self,
        store: &HandoffStore,
        known: &HashSet<PathBuf>,
        driver: &mut dyn SessionDriver,
        control: &SessionControl,
        changed: &[cp_git::ChangedFile],
    ) -> Result<(Handoff, PathBuf, HandoffSource, Option<String>), RestartError> {
        let phase = control.phase_id();
        let why = match driver.request_handoff(HANDOFF_REQUEST, control) {
            Ok(Some(handoff)) => {
                let path = store.save(&handoff)?;
                return Ok((handoff, path, HandoffSource::Agent, None));
            }
            Ok(None) => "its handoff turn ended without calling Checkpoint_handoff".to_owned(),
            Err(e) => {
                tracing::warn!(phase, "the handoff turn failed: {e}");
                e.to_string()
            }
        };
        for path in store.list()?.into_iter().rev() {
            if known.contains(&path) {
                continue;
            }
            match store.load(&path) {
                Ok(handoff) if handoff.agent_id == self.worker.as_str() => {
                    return Ok((handoff, path, HandoffSource::Agent, None));
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(phase, "skipping unreadable handoff: {e}"),
            }
        }
        let handoff = fallback_handoff(self.worker.as_str(), changed, &control.tool_history());
        let path = store.save(&handoff)?;
        tracing::warn!(phase, path = %path.display(), "no handoff from the agent ({why}); built a fallback");
        Ok((handoff, path, HandoffSource::Fallback, Some(why)))
    }

    fn commit(
        &self,
        message: &str,
        phase_id: &str,
        report: &mut PhaseReport,
        observer: &mut dyn RestartObserver,
    ) -> Result<Option<String>, RestartError> {
        if !self.config.auto_commit {
            return Ok(None);
        }
        let identity = commit_identity(&self.project, self.config.commit_as_context_pilot)?;
        let commit = commit_all(&self.project, message, identity)?;
        tracing::info!(phase = phase_id, commit = ?commit, "{message}");
        if let Some(hash) = &commit {
            report.commits.push(hash.clone());
        }
        observer.on_event(&RestartEvent::Committed {
            phase: phase_id.to_owned(),
            message: message.to_owned(),
            commit: commit.clone(),
        });
        Ok(commit)
    }
}
