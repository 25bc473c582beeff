//! Live reload requests: when a reload may happen, what happens when it fails, and the sign
//! a finished reload leaves.

use std::time::{Duration, SystemTime};

use cp_base::Level;

use cp_orchestrate::StopReason;

use crate::conversation::Entry;

use super::App;

/// How a reload's marker in the conversation starts.
const RELOADED: &str = "↻ Reloaded:";
use crate::workflow::WorkflowRun;

impl App {
    /// Asks for a reload; it happens after the running batch or turn step finishes.
    pub fn request_reload(&mut self) {
        if self.life.reload.is_none() {
            self.life.reload = Some(SystemTime::now());
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
        self.life.reload.filter(|_| {
            self.jobs.running() == 0
                && !self.agent.running()
                && !self.workflow.as_ref().is_some_and(WorkflowRun::active)
        })
    }

    /// In the process a reload started: say so, in the conversation (a marker that replaces
    /// the previous one when nothing happened in between, so reloads do not pile up) and in
    /// the status bar. `took` is the time from the request to now, when known.
    pub fn note_reloaded(&mut self, took: Option<Duration>) {
        let took = took.map_or_else(String::new, |d| format!(" in {} ms", d.as_millis()));
        let text = format!(
            "{RELOADED} context-pilot {}{took}; everything was kept.",
            env!("CARGO_PKG_VERSION")
        );
        match self.conversation.last_entry_mut() {
            Some(Entry::System(last)) if last.starts_with(RELOADED) => last.clone_from(&text),
            _ => {
                self.conversation.push_system(text);
            }
        }
        self.ui.flash = Some("reloaded".into());
        self.life.autosave.mark();
    }

    /// The new binary did not start: stay up, say why, and go on where the agent was.
    pub fn reload_failed(&mut self, why: &str) {
        self.life.reload = None;
        self.conversation.push(Entry::Notice {
            level: Level::Error,
            text: format!("Reload failed: {why}. Still running the current binary."),
        });
        if std::mem::take(&mut self.life.stopped_for_reload) {
            self.start_turn();
        }
    }
}
