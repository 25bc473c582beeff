//! Taking over, after a reload, the background runs an earlier process saved
//! (`WatchedRuns::save`): attach to each one's console and report it
//! when it ends (at once if it already has), then start what was queued behind it.

use std::sync::Arc;

use cp_base::{Level, Notification, Notifier};
use serde_json::Value;

use super::active::{ActiveRun, Requester};
use super::lifecycle::start_thread;
use super::runtime::Runtime;
use super::watch::{SavedQueuedRun, SavedRun, SavedRuns};
use crate::queue::Admission;
use crate::run_panel::RunPanel;

/// Resumes the runs saved in `state`, reporting through `notifier`. Returns their panels.
pub(super) fn resume(runtime: &Arc<Runtime>, state: &Value, notifier: &Notifier) -> Vec<RunPanel> {
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
            return Vec::new();
        }
    };
    let mut panels = Vec::new();
    let mut runs = Vec::new();
    for saved_run in saved.runs {
        if let Some(run) = readmit(runtime, saved_run, notifier) {
            panels.push(run.panel.clone());
            runtime.watched.begin(&run);
            runs.push(run);
        }
    }
    for queued in saved.queued {
        // Listed whether it starts now or waits behind a resumed run.
        let panel = RunPanel::new(queued.run_id, &queued.def.name);
        panels.push(panel.clone());
        if let Some(run) = requeue(runtime, queued, panel, notifier) {
            runtime.watched.begin(&run);
            runs.push(run);
        }
    }
    for run in runs {
        let _ = start_thread(runtime, run);
    }
    panels
}

/// A saved run, to watch again; `None` if it is watched already or was saved twice.
fn readmit(runtime: &Runtime, run: SavedRun, notifier: &Notifier) -> Option<ActiveRun> {
    if runtime.watched.contains(run.run_id) {
        return None;
    }
    let panel = RunPanel::new(run.run_id, &run.def.name);
    if run.def.one_at_a_time {
        let requester = Requester {
            panel: panel.clone(),
            reply: None,
        };
        let admitted = runtime.queue.admit(
            run.def.id,
            run.run_id,
            &run.files,
            &run.triggers.join(" and "),
            requester,
        );
        if !matches!(admitted, Admission::Start(_)) {
            // Saved twice (a hand-edited state): its trigger joined the queue.
            return None;
        }
    }
    Some(ActiveRun {
        reattach: run.reattach(),
        run_id: run.run_id,
        def: run.def,
        files: run.files,
        triggers: run.triggers,
        panel,
        replies: Vec::new(),
        notifier: notifier.clone(),
        cancel: None,
    })
}

/// Puts a saved queued run back in the queue; returns it as a run to start now when nothing
/// of its callback runs any more.
fn requeue(
    runtime: &Runtime,
    q: SavedQueuedRun,
    panel: RunPanel,
    notifier: &Notifier,
) -> Option<ActiveRun> {
    let mut admitted = None;
    let triggers: Vec<&str> = if q.triggers.is_empty() {
        vec![""]
    } else {
        q.triggers.iter().map(String::as_str).collect()
    };
    for (i, trigger) in triggers.into_iter().enumerate() {
        let files: &[String] = if i == 0 { &q.files } else { &[] };
        let requester = Requester {
            panel: panel.clone(),
            reply: None,
        };
        let admission = runtime
            .queue
            .admit(q.def.id, q.run_id, files, trigger, requester);
        admitted.get_or_insert(admission);
    }
    match admitted {
        Some(Admission::Start(_)) => Some(ActiveRun {
            run_id: q.run_id,
            def: q.def,
            files: q.files,
            triggers: q.triggers,
            panel,
            replies: Vec::new(),
            notifier: notifier.clone(),
            reattach: None,
            cancel: None,
        }),
        _ => None,
    }
}
