//! The life of a started run, on a thread of its own: run (or re-attach) → report → go on
//! with the run queued behind it, if any.

use std::sync::{Arc, Mutex, PoisonError};

use super::active::ActiveRun;
use super::deliver::deliver;
use super::error::RunError;
use super::execute::{execute, reattach};
use super::runtime::Runtime;
use crate::report::RunOutcome;

/// Runs `run`, then what queues behind it, on a thread of its own.
///
/// When no thread can be started (the process is at its thread limit), the run is reported
/// as not started — to a blocking edit's result, or as an error notification — instead of
/// vanishing while the edit says OK. Returns whether the run started.
pub(super) fn start_thread(runtime: &Arc<Runtime>, run: ActiveRun) -> bool {
    let name = run.def.name.clone();
    let run_id = run.run_id;
    let runtime_for_thread = Arc::clone(runtime);
    // The run comes back to us if the thread cannot start (spawn drops the closure then).
    let slot = Arc::new(Mutex::new(Some(run)));
    let for_thread = Arc::clone(&slot);
    if let Err(e) = std::thread::Builder::new()
        .name(format!("callback-{name}"))
        .spawn(move || {
            let run = for_thread
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(run) = run {
                run_in_turn(&runtime_for_thread, run);
            }
        })
    {
        runtime.watched.forget(run_id);
        tracing::error!("cannot start a thread for callback '{name}': {e}");
        let run = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(run) = run {
            let reason = RunError::NoThread(e).to_string();
            deliver(
                runtime,
                &run,
                &run.report(None, RunOutcome::NotStarted { reason }),
            );
        }
        return false;
    }
    true
}

/// Runs `run`, then whatever got queued behind it for the same callback.
fn run_in_turn(runtime: &Runtime, mut run: ActiveRun) {
    while let Some(next) = run_one(runtime, run) {
        run = next;
    }
}

/// Runs a blocking run on the thread that waits for it (the batch's hold), which would
/// otherwise only wait: no thread to start, and no hand-over of the report between threads
/// before the hold sees it. A run queued behind it goes on on a thread of its own, so the
/// hold waits for its own run only.
pub(super) fn run_here(runtime: &Arc<Runtime>, run: ActiveRun) {
    if let Some(next) = run_one(runtime, run) {
        start_thread(runtime, next);
    }
}

/// Runs `run` (or picks it up again after a reload) and reports it; returns the run of the
/// same callback queued behind it, now due.
fn run_one(runtime: &Runtime, mut run: ActiveRun) -> Option<ActiveRun> {
    if run.def.blocking {
        runtime.running.begin(run.run_id, &run.def.name);
    }
    let report = match run.reattach.take() {
        Some(from) => reattach(runtime, &run, &from),
        None => execute(runtime, &run),
    };
    tracing::debug!(run_id = %run.run_id, name = %run.def.name, outcome = ?report.outcome, "callback run ended");
    // Delivering and moving on to the queued run happen in one step against a save.
    let finished = run.run_id;
    let next = runtime.watched.settle(run.run_id, || {
        runtime.running.end(run.run_id);
        deliver(runtime, &run, &report);
        if !run.def.one_at_a_time {
            return None;
        }
        runtime
            .queue
            .finish(run.def.id)
            .map(|queued| ActiveRun::after(&run, queued))
    });
    // The run's file list goes once it is reported: a blocking edit need not wait for
    // the unlink.
    crate::env::remove_nul_list(&crate::env::nul_list_path(&runtime.project, finished));
    next
}
