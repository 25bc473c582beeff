//! What a worker's hooks left for the agent while the agent is idle: the background runs its
//! hooks started that ended since (nobody watched them, so nobody reported them), and the
//! notifications kept in its outbox for the next hook call.
//!
//! The TUI with the person's agent CLI (`--agent claude|gemini|codex`) collects them between turns,
//! as a hook call would: it re-attaches to the carried runs, lets those that ended report,
//! saves back those still going, and takes the outbox. So a failed background callback
//! reaches the person (and wakes the agent) without waiting for the agent's next edit.

use cp_base::{Notification, Project, WorkerId};

use crate::carry::{Carried, MODULES_FILE};
use crate::outbox::{OUTBOX_FILE, Outbox};
use crate::{Host, HostError};

/// Takes what waits for the agent of `worker`; nothing (and no work) when nothing is carried
/// and the outbox is empty.
pub fn collect_waiting(
    project: &Project,
    worker: &WorkerId,
) -> Result<Vec<Notification>, HostError> {
    let dir = project.state_dir(worker);
    if !dir.join(MODULES_FILE).exists() && !dir.join(OUTBOX_FILE).exists() {
        return Ok(Vec::new());
    }
    // A host of its own, as a hook process has: the runs are loaded into its modules only for
    // this call, and what still runs is saved back for the next one.
    let host = Host::new(project.clone(), worker.clone())?;
    let carried = Carried::resume(&host);
    carried.settle(&host);
    // The runs that reported are kept in the outbox, with what was there already.
    for problem in carried.suspend(&host) {
        tracing::warn!("carried background runs: {problem}");
    }
    Outbox::new(project, worker).take().map_err(HostError::from)
}
