//! Background runs in flight, and how they outlive the process that started them.
//!
//! The host reloads by `exec`: every thread of this process dies, while the console server
//! keeps running the scripts. So each background run is recorded here from the moment it is
//! started until its result is delivered, and [`Firing::save_runs`] puts those records (and
//! the coalesced queue of `one_at_a_time` callbacks) into the module's saved state.
//! [`Firing::resume_runs`], in the next process, attaches to each run's console session and
//! waits for it with the same waiter as a fresh run, so the agent gets the same notification
//! and a failed run opens its panel.
//!
//! Exactly once: a record leaves the registry in the same critical section that delivers its
//! result, and a save reads the registry under that lock. A result delivered after the save
//! is lost with the old process's notice queue, and the saved record reports it again in the
//! new one. A dropped module delivers nothing more: what it left running belongs to whoever
//! loads its saved state.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cp_base::now_ms;
use cp_base::{Level, Notification, Notifier, Panel as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{Firing, Job, Shared, Waiter, await_run, run_chain, snapshot};
use crate::model::CallbackDef;
use crate::queue::Admission;
use crate::report::{RunOutcome, RunReport};
use crate::run_panel::RunPanel;

/// How long a save waits for runs whose console session is still being created (a few
/// milliseconds with a server running; kept short because the host saves on its UI thread).
const SAVE_WAIT: Duration = Duration::from_secs(2);
/// Pause between two looks at runs being created.
const SAVE_POLL: Duration = Duration::from_millis(5);

/// Content fingerprints of a run's files, as [`snapshot`] takes them.
type Prints = BTreeMap<String, Option<u64>>;

/// One background run, as saved: enough to attach to it again and report it as the process
/// that started it would have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct SavedRun {
    run_id: Uuid,
    /// Its console session; `None` while (or if) it was never started.
    console: Option<Uuid>,
    /// The definition it was fired with.
    def: CallbackDef,
    files: Vec<String>,
    /// Labels of the edits that triggered it.
    triggers: Vec<String>,
    /// When it started, in milliseconds since the Unix epoch.
    started_at_ms: u64,
    /// Fingerprints of `files` before the script ran, to report the files it rewrote.
    #[serde(default)]
    before: Option<Prints>,
}

/// The pending run of a `one_at_a_time` callback, queued behind a saved run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct SavedQueued {
    run_id: Uuid,
    /// The definition of the run it waits for, which it runs with, as queued runs do.
    def: CallbackDef,
    files: Vec<String>,
    triggers: Vec<String>,
}

/// The `runs` part of the module's saved state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SavedRuns {
    #[serde(default)]
    runs: Vec<SavedRun>,
    #[serde(default)]
    queued: Vec<SavedQueued>,
}

/// Where a re-attached run picks up.
#[derive(Debug, Clone)]
pub(super) struct Resume {
    console: Uuid,
    started_at_ms: u64,
    before: Option<Prints>,
}

#[derive(Debug, Default)]
struct Records {
    runs: BTreeMap<Uuid, SavedRun>,
    /// The module was dropped: deliver nothing more.
    closed: bool,
}

/// The background runs of this process that have not delivered their result yet.
#[derive(Debug, Default)]
pub(super) struct Inflight {
    records: Mutex<Records>,
}

fn record(job: &Job) -> SavedRun {
    SavedRun {
        run_id: job.run_id,
        console: job.resume.as_ref().map(|r| r.console),
        def: job.def.clone(),
        files: job.files.clone(),
        triggers: job.triggers.clone(),
        started_at_ms: job.resume.as_ref().map_or_else(now_ms, |r| r.started_at_ms),
        before: job.resume.as_ref().and_then(|r| r.before.clone()),
    }
}

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, Records> {
        // A panicked runner thread must not stop saving or delivering the others.
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `job` (a background one) as in flight.
    pub(super) fn begin(&self, job: &Job) {
        if !job.def.blocking {
            self.lock().runs.insert(job.run_id, record(job));
        }
    }

    /// Drops the record of a run that will never run (its thread could not start).
    pub(super) fn forget(&self, run_id: Uuid) {
        self.lock().runs.remove(&run_id);
    }

    pub(super) fn took_snapshot(&self, run_id: Uuid, before: &Prints) {
        if let Some(r) = self.lock().runs.get_mut(&run_id) {
            r.before = Some(before.clone());
        }
    }

    pub(super) fn spawned(&self, run_id: Uuid, console: Uuid) {
        if let Some(r) = self.lock().runs.get_mut(&run_id) {
            r.console = Some(console);
        }
    }

    /// Runs `deliver` (which reports a finished run and returns the queued run to go on
    /// with) and swaps the finished run's record for the next one's, all under the lock a
    /// save takes. After the module was dropped nothing is delivered and nothing goes on.
    pub(super) fn settle(
        &self,
        run_id: Uuid,
        deliver: impl FnOnce() -> Option<Job>,
    ) -> Option<Job> {
        let mut records = self.lock();
        if records.closed {
            return None;
        }
        records.runs.remove(&run_id);
        let next = deliver();
        if let Some(job) = next.as_ref().filter(|j| !j.def.blocking) {
            records.runs.insert(job.run_id, record(job));
        }
        next
    }

    /// How many background runs are watched.
    pub(super) fn count(&self) -> usize {
        self.lock().runs.len()
    }
}

impl Drop for Firing {
    fn drop(&mut self) {
        self.shared.inflight.lock().closed = true;
    }
}

impl Firing {
    /// Background runs being watched (running, or starting).
    pub fn watched(&self) -> usize {
        self.shared.inflight.count()
    }

    /// The background runs in flight and the triggers queued behind them, for a later
    /// process to [`Firing::resume_runs`]. Waits a moment for runs whose session is being
    /// created, so their console is known; one still unknown is started again on resume.
    pub fn save_runs(&self) -> Value {
        let deadline = Instant::now() + SAVE_WAIT;
        let saved = loop {
            let records = self.shared.inflight.lock();
            let starting = records.runs.values().any(|r| r.console.is_none());
            if !starting || Instant::now() >= deadline {
                break self.saved(&records);
            }
            drop(records);
            std::thread::sleep(SAVE_POLL);
        };
        serde_json::to_value(saved).unwrap_or_else(|e| {
            tracing::error!("cannot save the callback runs in flight: {e}");
            Value::Null
        })
    }

    fn saved(&self, records: &Records) -> SavedRuns {
        let runs: Vec<SavedRun> = records.runs.values().cloned().collect();
        let mut seen = BTreeSet::new();
        let queued = runs
            .iter()
            .filter(|r| r.def.one_at_a_time && seen.insert(r.def.id))
            .filter_map(|r| {
                let (run_id, files, triggers) = self.shared.queue.pending(r.def.id)?;
                Some(SavedQueued {
                    run_id,
                    def: r.def.clone(),
                    files: files.into_iter().collect(),
                    triggers: triggers.into_iter().collect(),
                })
            })
            .collect();
        SavedRuns { runs, queued }
    }

    /// Takes over the runs an earlier process saved with [`Firing::save_runs`]: attaches to
    /// each one's console session and reports it through `notifier` when it ends (at once if
    /// it already has), then starts what was queued behind it.
    pub fn resume_runs(&mut self, state: &Value, notifier: &Notifier) {
        let saved: SavedRuns = match serde_json::from_value(state.clone()) {
            Ok(s) => s,
            Err(e) => {
                notifier.notify(Notification::new(
                    "callback",
                    Level::Warning,
                    format!(
                        "The callback runs saved before the reload could not be read ({e}); their results will not be reported. Their output is in .context-pilot/run/consoles/."
                    ),
                ));
                return;
            }
        };
        let mut jobs = Vec::new();
        for run in saved.runs {
            if self.shared.inflight.lock().runs.contains_key(&run.run_id) {
                continue;
            }
            let panel = RunPanel::new(run.run_id, &run.def.name);
            let job = Job {
                run_id: run.run_id,
                def: run.def.clone(),
                files: run.files.clone(),
                triggers: run.triggers.clone(),
                panel: panel.clone(),
                waiters: Vec::new(),
                notifier: notifier.clone(),
                resume: run.console.map(|console| Resume {
                    console,
                    started_at_ms: run.started_at_ms,
                    before: run.before.clone(),
                }),
            };
            if run.def.one_at_a_time {
                let waiter = Waiter { panel, tx: None };
                let admitted = self.shared.queue.admit(
                    run.def.id,
                    run.run_id,
                    &run.files,
                    &run.triggers.join(" and "),
                    waiter,
                );
                if !matches!(admitted, Admission::Start(_)) {
                    // Saved twice (a hand-edited state): its trigger joined the queue.
                    continue;
                }
            }
            self.panels.push(job.panel.clone());
            self.shared.inflight.begin(&job);
            jobs.push(job);
        }
        for q in saved.queued {
            if let Some(job) = self.requeue(q, notifier) {
                self.shared.inflight.begin(&job);
                jobs.push(job);
            }
        }
        for job in jobs {
            let _ = spawn_chain(&self.shared, job);
        }
    }

    /// Puts a saved pending run back in the queue; returns it as a job to start now when
    /// nothing of its callback runs any more.
    fn requeue(&mut self, q: SavedQueued, notifier: &Notifier) -> Option<Job> {
        let panel = RunPanel::new(q.run_id, &q.def.name);
        let mut admitted = None;
        let triggers: Vec<&str> = if q.triggers.is_empty() {
            vec![""]
        } else {
            q.triggers.iter().map(String::as_str).collect()
        };
        for (i, trigger) in triggers.into_iter().enumerate() {
            let files: &[String] = if i == 0 { &q.files } else { &[] };
            let waiter = Waiter {
                panel: panel.clone(),
                tx: None,
            };
            let admission = self
                .shared
                .queue
                .admit(q.def.id, q.run_id, files, trigger, waiter);
            admitted.get_or_insert(admission);
        }
        self.panels.push(panel.clone());
        match admitted {
            Some(Admission::Start(_)) => Some(Job {
                run_id: q.run_id,
                def: q.def,
                files: q.files,
                triggers: q.triggers,
                panel,
                waiters: Vec::new(),
                notifier: notifier.clone(),
                resume: None,
            }),
            _ => None,
        }
    }
}

/// Runs `job` and what queues behind it on a thread of its own.
///
/// When no thread can be started (the process is at its thread limit), the run is reported
/// as not started — to a blocking edit's result, or as an error notification — instead of
/// vanishing while the edit says OK. Returns whether the run started.
pub(super) fn spawn_chain(shared: &Arc<Shared>, job: Job) -> bool {
    let name = job.def.name.clone();
    let run_id = job.run_id;
    let shared_for_thread = Arc::clone(shared);
    // The job goes back to us if the thread cannot start (spawn drops the closure then).
    let slot = Arc::new(Mutex::new(Some(job)));
    let for_thread = Arc::clone(&slot);
    if let Err(e) = std::thread::Builder::new()
        .name(format!("callback-{name}"))
        .spawn(move || {
            let job = for_thread
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(job) = job {
                run_chain(&shared_for_thread, job);
            }
        })
    {
        shared.inflight.forget(run_id);
        tracing::error!("cannot start a thread for callback '{name}': {e}");
        let job = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(job) = job {
            let reason = format!(
                "Context Pilot cannot start a thread for it ({e}); too many runs at once. \
                 It did not run: retry when fewer callbacks run"
            );
            super::deliver(&job, &not_started(&job, reason));
        }
        return false;
    }
    true
}

/// The report of a run that never started.
fn not_started(job: &Job, reason: String) -> RunReport {
    RunReport {
        run_id: job.run_id,
        console: None,
        callback: job.def.id,
        name: job.def.name.clone(),
        outcome: RunOutcome::NotStarted { reason },
        elapsed: Duration::ZERO,
        tail: String::new(),
        files: job.files.clone(),
        modified: Vec::new(),
        triggers: job.triggers.clone(),
        success_message: job.def.success_message.clone(),
        panel_id: job.panel.id(),
    }
}

/// Waits for a run started by an earlier process and reports it like [`super::execute`].
pub(super) fn resume(shared: &Shared, job: &Job, from: &Resume) -> RunReport {
    let mut report = RunReport {
        run_id: job.run_id,
        console: Some(from.console),
        callback: job.def.id,
        name: job.def.name.clone(),
        outcome: RunOutcome::Passed,
        elapsed: Duration::ZERO,
        tail: String::new(),
        files: job.files.clone(),
        modified: Vec::new(),
        triggers: job.triggers.clone(),
        success_message: job.def.success_message.clone(),
        panel_id: job.panel.id(),
    };
    "running".clone_into(&mut job.panel.view().status);
    // Background runs have no fallback timeout; the server enforces the one they have.
    let timeout = job.def.timeout;
    let deadline = timeout.and_then(|t| {
        let end_ms = from.started_at_ms.saturating_add(t.saturating_mul(1000));
        super::deadline_after(Duration::from_millis(end_ms.saturating_sub(now_ms())))
    });
    let mut ended_at_ms = None;
    report.outcome = match shared
        .client()
        .and_then(|c| c.attach(from.console).map_err(|e| e.to_string()))
    {
        Ok(session) => {
            let outcome = await_run(&session, job.run_id, timeout, deadline, &mut report);
            ended_at_ms = session.info().ok().and_then(|i| i.ended_at_ms);
            outcome
        }
        Err(e) => RunOutcome::Failed {
            status: format!(
                "lost: its console session {} cannot be found after the reload ({e})",
                from.console
            ),
        },
    };
    if let Some(before) = &from.before {
        let after = snapshot(shared.project.root(), &job.files);
        report.modified = before
            .iter()
            .filter(|(file, print)| after.get(*file) != Some(*print))
            .map(|(file, _)| file.clone())
            .collect();
    }
    crate::env::remove_nul_list(&crate::env::nul_list_path(&shared.project, job.run_id));
    let end = ended_at_ms.unwrap_or_else(now_ms);
    report.elapsed = Duration::from_millis(end.saturating_sub(from.started_at_ms));
    job.panel.view().output.clone_from(&report.tail);
    report
}
