//! The batch's hold: blocking runs must all report (or time out) before any tool result of
//! the batch goes back to the agent; each result goes to the call whose edit triggered it.

use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use cp_base::CallNote;
use uuid::Uuid;

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
}

/// Waits for every blocking run and turns the results into notes.
pub(super) fn hold(waits: Vec<BlockingWait>, labels: &HashMap<usize, String>) -> Vec<CallNote> {
    let started = Instant::now();
    waits
        .into_iter()
        .flat_map(|wait| wait.notes(started, labels))
        .collect()
}

impl BlockingWait {
    /// Waits for the report (the runs go on in parallel, so the limit counts from the
    /// hold's `started`) and returns the notes for the triggering calls.
    fn notes(self, started: Instant, labels: &HashMap<usize, String>) -> Vec<CallNote> {
        let Some(&last) = self.calls.last() else {
            return Vec::new();
        };
        let left = self.limit.saturating_sub(started.elapsed());
        let mut text = match self.rx.recv_timeout(left) {
            Ok(report) => report.note(),
            Err(_) => format!(
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
