//! The batch's hold: blocking runs must all report (or time out) before any tool result of
//! the batch goes back to the agent; each result goes to the call whose edit triggered it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use cp_base::{CallNote, CancelToken};
use uuid::Uuid;

use super::active::ActiveRun;
use super::lifecycle::{run_here, start_thread};
use super::runtime::Runtime;
use crate::report::RunReport;

/// A blocking run the batch waits for.
pub(super) struct BlockingWait {
    /// The callback's name.
    pub(super) name: String,
    /// The run the batch hears about (the queued one, for a run that had to queue).
    pub(super) run_id: Uuid,
    /// The triggering calls; the last one gets the result, the others a pointer to it.
    pub(super) calls: Vec<usize>,
    /// Where the run's report arrives.
    pub(super) rx: Receiver<RunReport>,
    /// How long to wait, counted from the start of the hold.
    pub(super) limit: Duration,
    /// The run it had to wait for first, if it was queued.
    pub(super) behind: Option<Uuid>,
    /// The turn's cancel flag (Esc): the wait ends soon after it is set.
    pub(super) cancel: CancelToken,
    /// The run itself, when it is the hold's to start (it was not queued).
    pub(super) start: Option<PendingRun>,
}

/// A blocking run not started yet: the hold runs it on its own thread. Every run starts: one
/// whose hold is dropped uncalled starts on a thread of its own then, as it would have at once.
pub(super) struct PendingRun(Option<(Arc<Runtime>, Box<ActiveRun>)>);

impl PendingRun {
    pub(super) fn new(runtime: &Arc<Runtime>, run: ActiveRun) -> Self {
        Self(Some((Arc::clone(runtime), Box::new(run))))
    }

    /// Starts the run on a thread of its own.
    fn start_thread(mut self) {
        if let Some((runtime, run)) = self.0.take() {
            start_thread(&runtime, *run);
        }
    }

    /// Runs it on this thread, until it is reported.
    fn run_here(mut self) {
        if let Some((runtime, run)) = self.0.take() {
            run_here(&runtime, *run);
        }
    }
}

impl Drop for PendingRun {
    fn drop(&mut self) {
        if let Some((runtime, run)) = self.0.take() {
            start_thread(&runtime, *run);
        }
    }
}

/// How often the wait looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// After a cancel, how long the wait still gives the killed run to report (the kill's grace
/// period). Past it the call is answered anyway, so the turn ends promptly.
const AFTER_CANCEL: Duration = Duration::from_secs(3);

/// Runs the batch's blocking runs, waits for every one, and turns the results into notes.
/// They run side by side as ever: all but one on threads of their own, the last on this
/// thread, which would otherwise only wait.
pub(super) fn hold(mut waits: Vec<BlockingWait>, labels: &HashMap<usize, String>) -> Vec<CallNote> {
    let started = Instant::now();
    let mut pending: Vec<PendingRun> = waits.iter_mut().filter_map(|w| w.start.take()).collect();
    let here = pending.pop();
    for run in pending {
        run.start_thread();
    }
    if let Some(run) = here {
        run.run_here();
    }
    waits
        .into_iter()
        .flat_map(|wait| wait.notes(started, labels))
        .collect()
}

impl BlockingWait {
    /// The run's report, or `None` when it did not come within the limit, or within
    /// [`AFTER_CANCEL`] of a cancel (the run itself kills its console when cancelled).
    fn receive(&self, started: Instant) -> Option<RunReport> {
        let mut cancelled_at: Option<Instant> = None;
        loop {
            let left = match cancelled_at {
                Some(at) => AFTER_CANCEL.saturating_sub(at.elapsed()),
                None => self.limit.saturating_sub(started.elapsed()),
            };
            if left.is_zero() {
                return None;
            }
            match self.rx.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(report) => return Some(report),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) => {
                    if cancelled_at.is_none() && self.cancel.is_cancelled() {
                        cancelled_at = Some(Instant::now());
                    }
                }
            }
        }
    }

    /// Waits for the report (the runs go on in parallel, so the limit counts from the
    /// hold's `started`) and returns the notes for the triggering calls.
    fn notes(self, started: Instant, labels: &HashMap<usize, String>) -> Vec<CallNote> {
        let Some(&last) = self.calls.last() else {
            return Vec::new();
        };
        let mut text = match self.receive(started) {
            Some(report) => report.note(),
            None if self.cancel.is_cancelled() => format!(
                "Callback '{}' CANCELLED by the user (run {}); the batch stopped waiting for it. The edit itself was applied; the check did not finish.",
                self.name, self.run_id
            ),
            None => format!(
                "Callback '{}' (run {}) did not report back within {}s; its output is in the console server's log for that run. The edit itself was applied.",
                self.name,
                self.run_id,
                self.limit.as_secs()
            ),
        };
        if let Some(ahead) = self.behind {
            text = format!("(waited for the earlier run {ahead} to finish first)\n{text}");
        }
        let last_label = labels.get(&last).cloned().unwrap_or_default();
        let mut notes: Vec<CallNote> = self
            .calls
            .iter()
            .filter(|&&call| call != last)
            .map(|&call| CallNote {
                call_index: call,
                text: format!(
                    "Callback '{}' ran for this edit too; its result is reported with {last_label}.",
                    self.name
                ),
            })
            .collect();
        notes.push(CallNote {
            call_index: last,
            text,
        });
        notes
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn wait(rx: Receiver<RunReport>, cancel: &CancelToken) -> BlockingWait {
        BlockingWait {
            name: "slow".into(),
            run_id: Uuid::nil(),
            calls: vec![0],
            rx,
            limit: Duration::from_secs(3600),
            behind: None,
            cancel: cancel.clone(),
            start: None,
        }
    }

    #[test]
    fn a_cancel_ends_the_wait_and_answers_the_call_as_cancelled() {
        // The run never reports (its sender stays alive): only the cancel ends the wait.
        let (_tx, rx) = mpsc::channel();
        let cancel = CancelToken::new();
        cancel.cancel();
        let notes = hold(vec![wait(rx, &cancel)], &HashMap::new());
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].call_index, 0);
        assert!(
            notes[0]
                .text
                .starts_with("Callback 'slow' CANCELLED by the user"),
            "{}",
            notes[0].text
        );
    }

    #[test]
    fn without_a_cancel_a_vanished_run_is_not_called_cancelled() {
        let (tx, rx) = mpsc::channel::<RunReport>();
        drop(tx);
        let notes = hold(vec![wait(rx, &CancelToken::new())], &HashMap::new());
        assert!(
            notes[0].text.contains("did not report back"),
            "{}",
            notes[0].text
        );
    }
}
