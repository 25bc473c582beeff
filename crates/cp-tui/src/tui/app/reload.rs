//! Live reload requests: when a reload may happen, and what happens when it fails.

use std::time::SystemTime;

use cp_base::Level;

use cp_agent::StopReason;

use crate::tui::conversation::Entry;

use super::App;
use crate::tui::workflow_thread::WorkflowRun;

impl App {
    /// Asks for a reload; it happens after the running batch or turn step finishes.
    pub fn request_reload(&mut self) {
        if self.reload.is_none() {
            self.reload = Some(SystemTime::now());
        }
        if let Some(turn) = &self.agent.turn {
            turn.stop.request(StopReason::Reload);
        }
        if let Some(turn) = self
            .workflow
            .as_ref()
            .filter(|w| w.active())
            .and_then(|w| w.turn.as_ref())
        {
            turn.stop.request(StopReason::Reload);
        }
    }

    /// Picks up a `system_reload` request made through the tool.
    pub fn poll_reload_request(&mut self) -> bool {
        if self.host.take_reload_request() {
            self.request_reload();
            return true;
        }
        false
    }

    /// When the reload can happen now: it was requested and nothing is running.
    pub fn reload_due(&self) -> Option<SystemTime> {
        self.reload.filter(|_| {
            self.jobs.running() == 0
                && !self.agent.running()
                && !self.workflow.as_ref().is_some_and(WorkflowRun::active)
        })
    }

    /// The new binary did not start: stay up, say why, and go on where the agent was.
    pub fn reload_failed(&mut self, why: &str) {
        self.reload = None;
        self.conversation.push(Entry::Notice {
            level: Level::Error,
            text: format!("Reload failed: {why}. Still running the current binary."),
        });
        if std::mem::take(&mut self.stopped_for_reload) {
            self.start_turn();
        }
    }
}
