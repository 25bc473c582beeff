//! Starting one planned run for a batch: start it now, or queue it behind the running run of
//! its `one_at_a_time` callback, and tell the batch what to expect (a note now for a
//! background run, a [`BlockingWait`] for a blocking one).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use cp_base::{CallNote, CancelToken, ToolEnv};
use uuid::Uuid;

use super::active::{ActiveRun, Requester};
use super::execute::{FALLBACK_TIMEOUT_SECS, REPORT_GRACE};
use super::hold::{BlockingWait, PendingRun};
use super::lifecycle::start_thread;
use super::runtime::Runtime;
use crate::plan::PlannedRun;
use crate::queue::Admission;
use crate::report::RunReport;
use crate::run_panel::RunPanel;

/// What the batch gets for one run.
pub(super) enum BatchReply {
    /// A background run: the note for the call that triggered it.
    Note(CallNote),
    /// A blocking run: the batch's hold waits for it.
    Wait(BlockingWait),
}

/// A planned run, started or queued.
pub(super) struct StartedRun {
    /// Its panel, to list once it fails; `None` when the trigger joined a run queued before.
    pub(super) panel: Option<RunPanel>,
    pub(super) reply: BatchReply,
}

/// Where a run went: started at once, or queued.
struct Placement {
    /// The run the batch hears about (the queued run, for one that had to queue).
    run_id: Uuid,
    /// The run it waits for, if queued.
    behind: Option<Uuid>,
    /// What a background run's trigger is told.
    note: String,
    /// Whether it has a panel of its own (a trigger merged into a queued run has not).
    own_panel: bool,
}

/// Starts or queues `run`. `None` for a run that no call triggered.
pub(super) fn start(
    runtime: &Arc<Runtime>,
    run: &PlannedRun,
    labels: &HashMap<usize, String>,
    env: &ToolEnv,
) -> Option<StartedRun> {
    let &last_call = run.calls.last()?;
    let run_id = Uuid::new_v4();
    let triggers = trigger_labels(&run.calls, labels);
    let panel = RunPanel::new(run_id, &run.def.name);
    let (reply, rx) = reply_channel(run.def.blocking);
    let requester = Requester {
        panel: panel.clone(),
        reply,
    };
    let mut here = None;
    let placement = match admit(runtime, run, run_id, &triggers, requester) {
        Admission::Start(requester) => {
            let active = ActiveRun {
                run_id,
                def: run.def.clone(),
                files: run.files.clone(),
                triggers,
                panel: requester.panel,
                replies: requester.reply.into_iter().collect(),
                notifier: env.notifier.clone(),
                reattach: None,
                cancel: run.def.blocking.then(|| env.cancel.clone()),
            };
            if run.def.blocking {
                // The batch's hold runs it (see `PendingRun`).
                here = Some(PendingRun::new(runtime, active));
                Placement {
                    run_id,
                    behind: None,
                    note: String::new(),
                    own_panel: true,
                }
            } else {
                launch(runtime, active)
            }
        }
        Admission::Queued {
            behind,
            run_id: queued,
            merged,
        } => Placement {
            run_id: queued,
            behind: Some(behind),
            note: queued_note(&run.def.name, behind, queued, merged),
            own_panel: !merged,
        },
    };
    let reply = match rx {
        Some(rx) => BatchReply::Wait(blocking_wait(run, &placement, rx, &env.cancel, here)),
        None => BatchReply::Note(CallNote {
            call_index: last_call,
            text: placement.note,
        }),
    };
    Some(StartedRun {
        panel: placement.own_panel.then_some(panel),
        reply,
    })
}

/// The labels of the triggering calls, e.g. `File_edit src/a.rs`.
fn trigger_labels(calls: &[usize], labels: &HashMap<usize, String>) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            labels
                .get(c)
                .cloned()
                .unwrap_or_else(|| format!("call {c}"))
        })
        .collect()
}

/// A channel for the report, for a blocking run.
fn reply_channel(blocking: bool) -> (Option<mpsc::Sender<RunReport>>, Option<Receiver<RunReport>>) {
    if blocking {
        let (tx, rx) = mpsc::channel();
        (Some(tx), Some(rx))
    } else {
        (None, None)
    }
}

/// Asks the queue whether a `one_at_a_time` run may start; any other run starts at once.
fn admit(
    runtime: &Runtime,
    run: &PlannedRun,
    run_id: Uuid,
    triggers: &[String],
    requester: Requester,
) -> Admission<Requester> {
    if run.def.one_at_a_time {
        let trigger = triggers.join(" and ");
        runtime
            .queue
            .admit(run.def.id, run_id, &run.files, &trigger, requester)
    } else {
        Admission::Start(requester)
    }
}

/// Starts `active` on its thread (recorded as watched if it runs in the background).
fn launch(runtime: &Arc<Runtime>, active: ActiveRun) -> Placement {
    let (name, run_id) = (active.def.name.clone(), active.run_id);
    runtime.watched.begin(&active);
    tracing::debug!(%run_id, %name, "background run starting");
    let note = if start_thread(runtime, active) {
        format!(
            "Callback '{name}' started in background (run {run_id}); you will be notified when it finishes."
        )
    } else {
        format!(
            "Callback '{name}' could NOT start (run {run_id}): Context Pilot cannot start another thread right now."
        )
    };
    Placement {
        run_id,
        behind: None,
        note,
        own_panel: true,
    }
}

/// What the trigger of a queued background run is told.
fn queued_note(name: &str, behind: Uuid, queued: Uuid, merged: bool) -> String {
    format!(
        "Callback '{name}' is already running (run {behind}); this trigger is queued as run {queued}{} and starts when that one finishes. You will be notified.",
        if merged {
            ", merged with triggers queued earlier"
        } else {
            ""
        }
    )
}

/// The batch's wait for a blocking run.
fn blocking_wait(
    run: &PlannedRun,
    placement: &Placement,
    rx: Receiver<RunReport>,
    cancel: &CancelToken,
    start: Option<PendingRun>,
) -> BlockingWait {
    let timeout = Duration::from_secs(run.def.timeout.unwrap_or(FALLBACK_TIMEOUT_SECS));
    // A queued run may first wait for the whole run ahead of it.
    let rounds = if placement.behind.is_some() { 2 } else { 1 };
    BlockingWait {
        name: run.def.name.clone(),
        run_id: placement.run_id,
        calls: run.calls.clone(),
        rx,
        limit: timeout.saturating_add(REPORT_GRACE).saturating_mul(rounds),
        behind: placement.behind,
        cancel: cancel.clone(),
        start,
    }
}
