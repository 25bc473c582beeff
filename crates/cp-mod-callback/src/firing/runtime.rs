//! What the firing side and the run threads share: the project, the console client, the
//! `one_at_a_time` queue and the registry of watched background runs.

use std::sync::{Mutex, PoisonError};

use cp_base::Project;
use cp_mod_console::{ClientConfig, ConsoleClient};

use super::active::Requester;
use super::error::RunError;
use super::last::LastOutcomes;
use super::running::RunningNames;
use super::watch::WatchedRuns;
use crate::queue::RunQueue;

/// Shared by `Firing` and every run thread (behind an `Arc`).
pub(super) struct Runtime {
    pub(super) project: Project,
    console: ClientConfig,
    /// Connected on first use, then reused.
    client: Mutex<Option<ConsoleClient>>,
    /// Runs of `one_at_a_time` callbacks: the running one and the one queued behind it.
    pub(super) queue: RunQueue<Requester>,
    /// Background runs not reported yet (what a reload hands over).
    pub(super) watched: WatchedRuns,
    /// Whether each callback's latest finished run failed (the panel's badge shows it).
    pub(super) last: LastOutcomes,
    /// The blocking runs in progress, by name (the TUI's progress line names them).
    pub(super) running: RunningNames,
}

impl Runtime {
    pub(super) fn new(project: Project, console: ClientConfig) -> Self {
        Self {
            project,
            console,
            client: Mutex::new(None),
            queue: RunQueue::default(),
            watched: WatchedRuns::default(),
            last: LastOutcomes::default(),
            running: RunningNames::default(),
        }
    }

    /// The console client, connecting (and starting the server) on first use.
    pub(super) fn client(&self) -> Result<ConsoleClient, RunError> {
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let client =
            ConsoleClient::new(self.console.clone()).map_err(RunError::ConsoleUnreachable)?;
        *slot = Some(client.clone());
        Ok(client)
    }
}
