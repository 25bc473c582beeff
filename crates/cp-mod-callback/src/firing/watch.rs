//! Watched background runs: each one is recorded from the moment it starts until its result
//! is delivered, so it outlives the process that started it.
//!
//! The host reloads by `exec`: every thread of this process dies, while the console server
//! keeps running the scripts. [`WatchedRuns::save`] puts the records (and the coalesced
//! queue of `one_at_a_time` callbacks) into the module's saved state; `resume`, in
//! the next process, attaches to each run's console and waits for it like a fresh
//! run, so the agent gets the same notification and a failed run opens its panel.
//!
//! Exactly once: a record leaves the registry in the same critical section that delivers its
//! result ([`WatchedRuns::settle`]), and a save reads the registry under that lock. A result
//! delivered after the save is lost with the old process's notice queue, and the saved record
//! reports it again in the new one. A closed registry (the module was dropped) delivers
//! nothing more: what it left running belongs to whoever loads its saved state.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cp_base::now_ms;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::active::{ActiveRun, Reattach, Requester};
use super::fingerprint::Prints;
use crate::model::CallbackDef;
use crate::queue::RunQueue;

/// How long a save waits for runs whose console is still being created (a few
/// milliseconds with a server running; kept short because the host saves on its UI thread).
const SAVE_WAIT: Duration = Duration::from_secs(2);
/// Pause between two looks at runs being created.
const SAVE_POLL: Duration = Duration::from_millis(5);

/// One background run, as saved: enough to attach to it again and report it as the process
/// that started it would have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SavedRun {
    pub(super) run_id: Uuid,
    /// Its console; `None` while (or if) it was never started.
    pub(super) console: Option<Uuid>,
    /// The definition it was fired with.
    pub(super) def: CallbackDef,
    pub(super) files: Vec<String>,
    /// Labels of the edits that triggered it.
    pub(super) triggers: Vec<String>,
    /// When it started, in milliseconds since the Unix epoch.
    pub(super) started_at_ms: u64,
    /// Fingerprints of `files` before the script ran, to report the files it rewrote.
    #[serde(default)]
    pub(super) before: Option<Prints>,
}

impl SavedRun {
    /// Where to pick the run up: `None` if its console was never created (run it again).
    pub(super) fn reattach(&self) -> Option<Reattach> {
        self.console.map(|console| Reattach {
            console,
            started_at_ms: self.started_at_ms,
            before: self.before.clone(),
        })
    }
}

/// The queued run of a `one_at_a_time` callback, waiting behind a saved run. The serde name
/// `queued` is the saved state's format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SavedQueuedRun {
    pub(super) run_id: Uuid,
    /// The definition of the run it waits for, which it runs with, as queued runs do.
    pub(super) def: CallbackDef,
    pub(super) files: Vec<String>,
    pub(super) triggers: Vec<String>,
}

/// The `runs` part of the module's saved state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct SavedRuns {
    #[serde(default)]
    pub(super) runs: Vec<SavedRun>,
    #[serde(default)]
    pub(super) queued: Vec<SavedQueuedRun>,
}

#[derive(Debug, Default)]
struct Records {
    runs: BTreeMap<Uuid, SavedRun>,
    /// The module was dropped: deliver nothing more.
    closed: bool,
}

/// The background runs of this process that have not delivered their result yet.
#[derive(Debug, Default)]
pub(super) struct WatchedRuns {
    records: Mutex<Records>,
}

fn record(run: &ActiveRun) -> SavedRun {
    SavedRun {
        run_id: run.run_id,
        console: run.reattach.as_ref().map(|r| r.console),
        def: run.def.clone(),
        files: run.files.clone(),
        triggers: run.triggers.clone(),
        started_at_ms: run
            .reattach
            .as_ref()
            .map_or_else(now_ms, |r| r.started_at_ms),
        before: run.reattach.as_ref().and_then(|r| r.before.clone()),
    }
}

impl WatchedRuns {
    fn lock(&self) -> MutexGuard<'_, Records> {
        // A panicked runner thread must not stop saving or delivering the others.
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `run` (a background one) as in flight.
    pub(super) fn begin(&self, run: &ActiveRun) {
        if !run.def.blocking {
            self.lock().runs.insert(run.run_id, record(run));
        }
    }

    /// Drops the record of a run that will never run (its thread could not start).
    pub(super) fn forget(&self, run_id: Uuid) {
        self.lock().runs.remove(&run_id);
    }

    /// Whether `run_id` is watched already.
    pub(super) fn contains(&self, run_id: Uuid) -> bool {
        self.lock().runs.contains_key(&run_id)
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
    /// save takes. After [`WatchedRuns::close`] nothing is delivered and nothing goes on.
    pub(super) fn settle(
        &self,
        run_id: Uuid,
        deliver: impl FnOnce() -> Option<ActiveRun>,
    ) -> Option<ActiveRun> {
        let mut records = self.lock();
        if records.closed {
            tracing::debug!(%run_id, "run ended after its module closed: left to the saved state");
            return None;
        }
        records.runs.remove(&run_id);
        let next = deliver();
        if let Some(run) = next.as_ref().filter(|r| !r.def.blocking) {
            records.runs.insert(run.run_id, record(run));
        }
        next
    }

    /// Stops delivering: the module is gone.
    pub(super) fn close(&self) {
        self.lock().closed = true;
    }

    /// How many background runs are watched.
    pub(super) fn count(&self) -> usize {
        self.lock().runs.len()
    }

    /// The runs in flight and the triggers queued behind them, as saved state. Waits a
    /// moment for runs whose console is being created, so its id is known; one still
    /// unknown is started again on resume.
    pub(super) fn save(&self, queue: &RunQueue<Requester>) -> Value {
        let deadline = Instant::now() + SAVE_WAIT;
        let saved = loop {
            let records = self.lock();
            let starting = records.runs.values().any(|r| r.console.is_none());
            if !starting || Instant::now() >= deadline {
                break saved(&records, queue);
            }
            drop(records);
            std::thread::sleep(SAVE_POLL);
        };
        serde_json::to_value(saved).unwrap_or_else(|e| {
            tracing::error!("cannot save the callback runs in flight: {e}");
            Value::Null
        })
    }
}

fn saved(records: &Records, queue: &RunQueue<Requester>) -> SavedRuns {
    let runs: Vec<SavedRun> = records.runs.values().cloned().collect();
    let mut seen = BTreeSet::new();
    let queued = runs
        .iter()
        .filter(|r| r.def.one_at_a_time && seen.insert(r.def.id))
        .filter_map(|r| {
            let (run_id, files, triggers) = queue.queued(r.def.id)?;
            Some(SavedQueuedRun {
                run_id,
                def: r.def.clone(),
                files: files.into_iter().collect(),
                triggers: triggers.into_iter().collect(),
            })
        })
        .collect();
    SavedRuns { runs, queued }
}
