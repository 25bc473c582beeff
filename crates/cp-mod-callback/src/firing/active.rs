//! A started run: what it runs, on whose behalf, and whom it reports to.

use std::sync::mpsc::Sender;
use std::time::Duration;

use cp_base::{CancelToken, Notifier, Panel as _};
use uuid::Uuid;

use super::fingerprint::Prints;
use crate::model::CallbackDef;
use crate::queue::QueuedRun;
use crate::report::{RunOutcome, RunReport};
use crate::run_panel::RunPanel;

/// One trigger's stake in a run: the panel created with it, and the channel of the blocking
/// batch waiting for the result (`None` for a background run).
pub(super) struct Requester {
    pub(super) panel: RunPanel,
    pub(super) reply: Option<Sender<RunReport>>,
}

/// Where a run started by an earlier process (before a reload) is picked up again.
#[derive(Debug, Clone)]
pub(super) struct Reattach {
    /// Its console.
    pub(super) console: Uuid,
    /// When it started, in milliseconds since the Unix epoch.
    pub(super) started_at_ms: u64,
    /// Fingerprints of its files before the script ran, if taken.
    pub(super) before: Option<Prints>,
}

/// A run that has left the queue: it runs on its own thread until it is reported.
pub(super) struct ActiveRun {
    /// `CP_RUN_ID`.
    pub(super) run_id: Uuid,
    /// The definition it runs with.
    pub(super) def: CallbackDef,
    /// `CP_CHANGED_FILES`.
    pub(super) files: Vec<String>,
    /// Labels of the edits that triggered it.
    pub(super) triggers: Vec<String>,
    pub(super) panel: RunPanel,
    /// Blocking batches waiting for its report.
    pub(super) replies: Vec<Sender<RunReport>>,
    /// Where background results and panel openings go.
    pub(super) notifier: Notifier,
    /// Set for a run started by an earlier process: attach to its console instead of
    /// starting the script.
    pub(super) reattach: Option<Reattach>,
    /// The turn's cancel flag, for a blocking run: once set, the run is killed and reported
    /// as cancelled. `None` for background runs, which outlive the turn.
    pub(super) cancel: Option<CancelToken>,
}

impl ActiveRun {
    /// The run that was queued behind `prev` (a run of the same callback), ready to start.
    pub(super) fn after(prev: &Self, queued: QueuedRun<Requester>) -> Self {
        let mut replies = Vec::new();
        let mut panel = None;
        for r in queued.requesters {
            if panel.is_none() {
                panel = Some(r.panel);
            }
            replies.extend(r.reply);
        }
        Self {
            run_id: queued.run_id,
            def: prev.def.clone(),
            files: queued.files.into_iter().collect(),
            triggers: queued.triggers.into_iter().collect(),
            panel: panel.unwrap_or_else(|| RunPanel::new(queued.run_id, &prev.def.name)),
            replies,
            notifier: prev.notifier.clone(),
            reattach: None,
            // Its triggers may come from another turn; it runs to its end.
            cancel: None,
        }
    }

    /// The report of this run ending with `outcome`: the one place a [`RunReport`] is made.
    /// Output, timing and rewritten files are filled in by whoever watched it end.
    pub(super) fn report(&self, console: Option<Uuid>, outcome: RunOutcome) -> RunReport {
        RunReport {
            run_id: self.run_id,
            console,
            callback: self.def.id,
            name: self.def.name.clone(),
            outcome,
            elapsed: Duration::ZERO,
            tail: String::new(),
            files: self.files.clone(),
            modified: Vec::new(),
            triggers: self.triggers.clone(),
            success_message: self.def.success_message.clone(),
            panel_id: self.panel.id(),
        }
    }

    /// Shows the run as running in its panel.
    pub(super) fn show_running(&self) {
        "running".clone_into(&mut self.panel.view().status);
    }

    /// Gives the run's panel the end of its raw output, drawn as a terminal (colours kept);
    /// `skipped` bytes before it were left out.
    pub(super) fn show_terminal(&self, raw: &[u8], skipped: u64) {
        self.panel.set_terminal(raw, skipped);
    }

    /// Puts the end of the run's output in its panel.
    pub(super) fn show_output(&self, tail: &str) {
        tail.clone_into(&mut self.panel.view().output);
    }
}
