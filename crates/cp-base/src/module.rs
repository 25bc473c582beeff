//! The module contract: a plain struct that owns its state and offers tools and panels.

use std::sync::Arc;

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::notify::Notifier;
use crate::panel::Panel;
use crate::project::Project;
use crate::tool::{FileChange, ToolDef, ToolOutcome};
use crate::worker::WorkerId;

/// What every tool handler and hook gets to work with.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    pub project: Project,
    pub worker: WorkerId,
    pub notifier: Notifier,
    /// Set when the person cancels the turn (Esc): blocking work of the batch (callback runs
    /// it holds for) is killed and reported as cancelled. Never set outside a turn.
    pub cancel: CancelToken,
}

impl ToolEnv {
    pub fn new(project: Project, worker: WorkerId, notifier: Notifier) -> Self {
        Self {
            project,
            worker,
            notifier,
            cancel: CancelToken::new(),
        }
    }

    /// The same environment, with `cancel` as the turn's cancel flag.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }
}

/// The file changes of one call in a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallChanges {
    /// Position of the call in the batch.
    pub call_index: usize,
    /// Name of the tool that made the changes, e.g. `File_edit`.
    pub tool: String,
    /// A short description of the call for messages, e.g. `File_edit src/main.rs`.
    pub label: String,
    pub changes: Vec<FileChange>,
}

/// All file changes of one batch (one assistant message's tool calls), by call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchChanges {
    pub calls: Vec<CallChanges>,
}

impl BatchChanges {
    pub fn is_empty(&self) -> bool {
        self.calls.iter().all(|c| c.changes.is_empty())
    }

    /// Every change with the index of the call that made it.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &FileChange)> {
        self.calls
            .iter()
            .flat_map(|c| c.changes.iter().map(move |ch| (c.call_index, ch)))
    }
}

/// Text a module adds to the result of one call of the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallNote {
    pub call_index: usize,
    pub text: String,
}

/// Work that holds the batch's results back until it ends (blocking callbacks).
pub type BatchHold = Box<dyn FnOnce() -> Vec<CallNote> + Send>;

/// A module's answer to a batch: notes now, and optionally work the batch must wait for.
#[derive(Default)]
pub struct BatchResponse {
    pub notes: Vec<CallNote>,
    /// Runs with the module released; its notes are added when it returns.
    pub hold: Option<BatchHold>,
}

impl std::fmt::Debug for BatchResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchResponse")
            .field("notes", &self.notes)
            .field("hold", &self.hold.is_some())
            .finish()
    }
}

/// A feature of the host: tools, panels, and reactions to batches and background events.
///
/// Three methods are required; everything else has a default. The host registers modules
/// from an explicit list and never lets one reach into another.
pub trait Module: Send {
    /// Stable id, e.g. `callback`. Also the key of its saved state.
    fn id(&self) -> &'static str;

    /// The tools this module offers, as data.
    fn tools(&self) -> Vec<ToolDef>;

    /// Runs one of this module's tools. `args` has already passed schema validation.
    fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome;

    /// Snapshots of the panels to list in the sidebar, fixed ones and dynamic ones.
    ///
    /// The registry calls this after every call into the module and publishes the result;
    /// the UI draws those snapshots and never waits for the module.
    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        Vec::new()
    }

    /// Keyboard input passed through to a panel (bytes as a terminal would send them).
    /// Returns whether the panel took it.
    fn panel_input(&mut self, _panel_id: &str, _input: &[u8]) -> bool {
        false
    }

    /// Closes a dynamic panel at the user's request. Returns whether one was closed.
    fn close_panel(&mut self, _panel_id: &str) -> bool {
        false
    }

    /// Called after a batch of tool calls with the file changes it made.
    fn on_batch(&mut self, _batch: &BatchChanges, _env: &ToolEnv) -> BatchResponse {
        BatchResponse::default()
    }

    /// Called regularly by the host (about once a second, and after notices) to pick up
    /// background results and on-disk changes. Returns whether anything visible changed.
    fn on_tick(&mut self, _env: &ToolEnv) -> bool {
        false
    }

    /// State to persist across restarts and reloads.
    fn save_state(&self) -> Option<Value> {
        None
    }

    /// Restores what `save_state` returned in an earlier process.
    fn load_state(&mut self, _state: &Value, _env: &ToolEnv) {}
}
