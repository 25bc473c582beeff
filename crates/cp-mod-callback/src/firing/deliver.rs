//! The last step of a run: its report goes to its panel, to the blocking batches waiting for
//! it and, for a background run, to the agent as a notification.

use cp_base::{Level, Notification, Panel as _};

use super::active::ActiveRun;
use super::runtime::Runtime;
use crate::report::{RunOutcome, RunReport};

/// Reports a finished run. A failed run's panel is listed and opened, and the callback
/// counts as failing (in the panel's badge) until a run of it passes. A cancelled run opens
/// no panel (the person stopped it on purpose) and leaves the badge as it was.
pub(super) fn deliver(runtime: &Runtime, run: &ActiveRun, report: &RunReport) {
    let cancelled = report.outcome == RunOutcome::Cancelled;
    let failed = !report.passed() && !cancelled;
    if !cancelled {
        runtime.last.record(run.def.id, failed);
    }
    {
        let mut view = run.panel.view();
        view.status = match &report.outcome {
            RunOutcome::Passed => "passed".to_owned(),
            RunOutcome::Failed { status } => format!("FAILED ({status})"),
            RunOutcome::TimedOut { after_secs } => {
                format!("TIMED OUT after {after_secs}s (process group killed)")
            }
            RunOutcome::NotStarted { reason } => format!("could not start: {reason}"),
            RunOutcome::Cancelled => "CANCELLED (process group killed)".to_owned(),
        };
        view.console = report.console;
        view.finished = true;
        view.visible = failed;
    }
    if failed {
        run.notifier.open_panel(run.panel.id());
    }
    for tx in &run.replies {
        // A hold that gave up waiting has dropped its receiver; nothing to do then.
        let _ = tx.send(report.clone());
    }
    if !run.def.blocking {
        let level = if failed { Level::Error } else { Level::Success };
        let mut note = Notification::new("callback", level, report.note());
        if failed {
            note = note.waking();
        }
        tracing::debug!(run_id = %run.run_id, "background run reported to the notifier");
        run.notifier.notify(note);
    }
    run.notifier.refresh();
}
