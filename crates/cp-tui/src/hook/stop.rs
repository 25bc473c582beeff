//! When the agent ends its turn: the stop checkpoint, plus any failure still undelivered.

use cp_base::lock_module;
use cp_mod_checkpoint::{Decision, StopCheckpoint, StopInput};

use super::outbox::Deliveries;
use super::reply::Reply;
use crate::host::Host;

/// Runs the stop checkpoint. `stop_hook_active` is the agent's "this stop follows a blocked
/// stop" flag, which turns the checkpoint into the commit gate.
///
/// Background failures not yet delivered also keep the agent going on its first stop (a
/// failed background callback wakes an idle agent). Other notifications stay in the outbox
/// for the next call. Errors (a broken checkpoint config) are returned for the caller to
/// report; the agent is never blocked because of them.
pub fn at_stop(host: &Host, stop_hook_active: bool) -> Result<Reply, String> {
    for module in host.registry().modules() {
        lock_module(module).on_tick(host.env());
    }
    let checkpoint = StopCheckpoint::for_project(host.project())
        .map_err(|e| format!("stop checkpoint skipped: {e}"))?;
    let outcome = checkpoint.evaluate(&StopInput {
        project: host.project().clone(),
        worker: host.worker().clone(),
        stop_hook_active,
    });
    if let Some(why) = &outcome.report.skipped {
        tracing::info!("stop checkpoint passed without checking: {why}");
    }
    let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
    let collected = deliveries.collect();
    Ok(match outcome.decision {
        Decision::Block { reason } => match collected.text() {
            Some(notes) => Reply::Block(format!("{reason}\n\n{notes}")),
            None => Reply::Block(reason),
        },
        Decision::Pass => match collected.text() {
            Some(notes) if collected.failed && !stop_hook_active => Reply::Block(notes),
            _ => {
                deliveries.keep(&collected.notes);
                Reply::Nothing
            }
        },
    })
}
