//! When the agent ends its turn: the stop gate, plus any failure still undelivered.

use cp_git::Head;
use cp_mod_checkpoint::{CheckpointError, StopPhase};
use cp_orchestrate::{Decision, StopInput};

use cp_agent_cli::Reply;
use cp_host::Deliveries;
use cp_host::Host;

/// The checkpoint's configuration could not be used; the agent is let stop.
#[derive(Debug, thiserror::Error)]
#[error("stop gate skipped: {0}")]
pub struct StopSkipped(#[from] CheckpointError);

/// Runs the stop gate for the agent session `session` (the payload's `session_id`), which
/// began with HEAD at `base` when that is known.
/// The checkpoint counts the session's blocks itself, in its state file, so it never relies
/// on the agent's `stop_hook_active`. When its limit lets the agent stop with work left, the
/// person gets a [`Reply::Notice`].
///
/// Background failures not yet delivered also keep the agent going on its first stop (a
/// failed background callback wakes an idle agent). Other notifications stay in the outbox
/// for the next call. Errors (a broken checkpoint config) are returned for the caller to
/// report; the agent is never blocked because of them.
pub fn at_stop(host: &Host, session: &str, base: Option<Head>) -> Result<Reply, StopSkipped> {
    host.registry().tick(host.env());
    let outcome = host.judge_stop(&StopInput {
        project: host.project().clone(),
        worker: host.worker().clone(),
        session: session.to_owned(),
        gate_commits: true,
        base,
    })?;
    let first_stop = outcome.report.phase == StopPhase::First;
    if let Some(why) = &outcome.report.skipped {
        tracing::info!("stop gate passed without checking: {why}");
    }
    let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
    let collected = deliveries.collect();
    Ok(match outcome.decision {
        Decision::Block { reason } => match collected.text() {
            Some(notes) => Reply::Block(format!("{reason}\n\n{notes}")),
            None => Reply::Block(reason),
        },
        Decision::Pass => match (collected.text(), outcome.notice) {
            (_, Some(notice)) => {
                deliveries.keep(&collected.notes);
                Reply::Notice(notice)
            }
            (Some(notes), None) if collected.failed && first_stop => Reply::Block(notes),
            _ => {
                deliveries.keep(&collected.notes);
                Reply::Nothing
            }
        },
    })
}
