//! Firing: runs planned callbacks through consoles, in parallel, and reports back.
//!
//! [`Firing`] owns the life of every run. In order:
//!
//! 1. **queued or started** ([`start`]): a `one_at_a_time` run that finds one of its callback
//!    going waits in the [`RunQueue`](crate::RunQueue) as a [`QueuedRun`](crate::QueuedRun);
//!    any other run becomes an [`active::ActiveRun`]: a background run on a thread of its own
//!    ([`lifecycle`]), a blocking run on the thread of the batch's hold, which waits for it
//!    anyway ([`hold`]). Background runs are recorded in [`watch::WatchedRuns`] until
//!    reported.
//! 2. **finished, timed out or not started** ([`execute`]): the script runs in a console
//!    (the console server owns the process, so the output survives this process),
//!    and its end becomes a [`RunReport`](crate::RunReport).
//! 3. **reported** ([`deliver`]): to the run's panel, to the blocking batch waiting for it
//!    (its [`hold::BlockingWait`]) or, for a background run, as a notification. Then the
//!    run queued behind it starts on the same thread.
//! 4. **handed over** on reload ([`watch`], [`resume`]), or **cancelled** when the module is
//!    dropped: nothing more is delivered.

mod active;
mod deliver;
mod error;
mod execute;
mod fingerprint;
mod hold;
mod last;
mod lifecycle;
mod resume;
mod running;
mod runtime;
mod start;
mod watch;

use std::collections::HashMap;
use std::sync::Arc;

use cp_base::{BatchChanges, BatchResponse, Notifier, Panel, Project, ToolEnv};
use cp_mod_console::ClientConfig;
use serde_json::Value;

use crate::plan::PlannedRun;
use crate::run_panel::RunPanel;
use hold::hold;
use runtime::Runtime;
use start::{BatchReply, start};

/// Failed-run panels kept; older ones are dropped from the sidebar (their logs stay on disk).
const MAX_PANELS: usize = 20;

/// The module's firing machinery: what the run threads share, and the panels of the runs.
pub struct Firing {
    runtime: Arc<Runtime>,
    panels: Vec<RunPanel>,
}

impl Firing {
    pub fn new(project: Project, console: ClientConfig) -> Self {
        Self {
            runtime: Arc::new(Runtime::new(project, console)),
            panels: Vec::new(),
        }
    }

    /// Panels of failed runs, oldest first: the newest failure of each callback only, so
    /// a callback failing again replaces its panel instead of adding one.
    /// Clones of a run panel share the state its runner updates.
    pub fn panels(&self) -> impl Iterator<Item = Arc<dyn Panel>> {
        let shown: Vec<(usize, String)> = self
            .panels
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let v = p.view();
                v.visible.then(|| (i, v.name.clone()))
            })
            .collect();
        let newest = move |i: usize, name: &str| !shown.iter().any(|(j, n)| *j > i && n == name);
        self.panels
            .iter()
            .enumerate()
            .filter(move |(i, p)| {
                let v = p.view();
                v.visible && newest(*i, &v.name)
            })
            .map(|(_, p)| Arc::new(p.clone()) as Arc<dyn Panel>)
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// Drops a run panel from the sidebar, with the older failures of its callback it
    /// replaced (they would show again otherwise).
    pub fn close_panel(&mut self, panel_id: &str) -> bool {
        let Some(name) = self
            .panels
            .iter()
            .find(|p| p.id() == panel_id)
            .map(|p| p.view().name.clone())
        else {
            return false;
        };
        self.panels.retain(|p| {
            let v = p.view();
            p.id() != panel_id && !(v.visible && v.finished && v.name == name)
        });
        true
    }

    /// Keeps unfinished runs and the newest failed ones.
    fn prune(&mut self) {
        self.panels.retain(|p| {
            let v = p.view();
            !v.finished || v.visible
        });
        let visible = self.panels.iter().filter(|p| p.view().visible).count();
        let mut excess = visible.saturating_sub(MAX_PANELS);
        self.panels.retain(|p| {
            if excess > 0 && p.view().visible {
                excess -= 1;
                false
            } else {
                true
            }
        });
    }

    /// Starts the planned runs. Background runs get a note now; blocking runs come back as
    /// the response's hold, which returns each run's result for the call that triggered it.
    pub fn fire(
        &mut self,
        runs: Vec<PlannedRun>,
        batch: &BatchChanges,
        env: &ToolEnv,
    ) -> BatchResponse {
        self.prune();
        let labels: HashMap<usize, String> = batch
            .calls
            .iter()
            .map(|c| (c.call_index, c.label.clone()))
            .collect();
        let mut notes = Vec::new();
        let mut waits = Vec::new();
        for run in runs {
            let Some(started) = start(&self.runtime, &run, &labels, env) else {
                continue;
            };
            self.panels.extend(started.panel);
            match started.reply {
                BatchReply::Note(note) => notes.push(note),
                BatchReply::Wait(wait) => waits.push(wait),
            }
        }
        if waits.is_empty() {
            return BatchResponse { notes, hold: None };
        }
        BatchResponse {
            notes,
            hold: Some(Box::new(move || hold(waits, &labels))),
        }
    }

    /// Background runs being watched (running, or starting).
    pub fn watched(&self) -> usize {
        self.runtime.watched.count()
    }

    /// The blocking callbacks running now, by name, oldest first.
    pub fn running(&self) -> Vec<String> {
        self.runtime.running.names()
    }

    /// The callbacks whose latest run in this process failed, by id.
    pub fn failing(&self) -> Vec<crate::model::CallbackId> {
        self.runtime.last.failing()
    }

    /// The background runs in flight and the triggers queued behind them, for a later
    /// process to [`Firing::resume_runs`].
    pub fn save_runs(&self) -> Value {
        self.runtime.watched.save(&self.runtime.queue)
    }

    /// Takes over the runs an earlier process saved with [`Firing::save_runs`]: attaches to
    /// each one's console and reports it through `notifier` when it ends (at once if
    /// it already has), then starts what was queued behind it.
    pub fn resume_runs(&mut self, state: &Value, notifier: &Notifier) {
        let panels = resume::resume(&self.runtime, state, notifier);
        self.panels.extend(panels);
    }
}

impl Drop for Firing {
    fn drop(&mut self) {
        self.runtime.watched.close();
    }
}
