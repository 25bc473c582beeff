//! What one frame draws: a borrowed, read-only picture of the app's state plus the modules'
//! published panel snapshots (built by `App::view_model`).
//!
//! Drawing sees only a [`ViewModel`]: `view.rs` lays the screen out from it and hands each
//! feature's `*_view.rs` its part. It holds no [`cp_host::Host`] and no [`cp_base::Registry`],
//! so drawing cannot reach a module, let alone wait for one that a tool holds.

use std::sync::Arc;

use cp_base::{Panel, PanelView, ToolDef};

use crate::agent::AgentState;
use crate::changes::Changes;
use crate::conversation::Conversation;
use crate::help::Help;
use crate::input::InputBox;
use crate::palette::Palette;
use crate::panels::{Focus, SidebarEntry};
use crate::popup::Confirm;
use crate::search::Search;
use crate::workflow::WorkflowRun;
use crate::workflow::dialog::ApprovalDialog;

/// Everything a frame draws.
pub struct ViewModel<'a> {
    pub project: String,
    pub worker: String,
    pub conversation: &'a Conversation,
    pub input: &'a InputBox,
    /// The open palette and the tools it matches against.
    pub palette: Option<(&'a Palette, Vec<ToolDef>)>,
    pub focus: Focus,
    pub selected: &'a str,
    pub sidebar: Vec<SidebarEntry>,
    /// The Changes panel's state (drawn when it is selected).
    pub changes: &'a Changes,
    /// Review comments wait for the agent's turn to end.
    pub review_queued: bool,
    /// The selected module panel's snapshot (`None` for the conversation or a gone panel).
    pub panel: Option<Arc<dyn Panel>>,
    pub panel_view: PanelView,
    pub confirm: Option<&'a Confirm>,
    pub dialog: Option<&'a ApprovalDialog>,
    pub agent: &'a AgentState,
    pub workflow: Option<&'a WorkflowRun>,
    pub flash: Option<&'a str>,
    pub reload_pending: bool,
    /// Tool batches started from the UI and still running.
    pub running_jobs: usize,
    /// The key help overlay, when open.
    pub help: Option<&'a Help>,
    /// Its rows: the keys of its focus and what they do (the commands' docs); empty when it
    /// is closed.
    pub help_rows: Vec<(&'static str, &'static str)>,
    /// `/` search in the selected panel: its prompt, and the query to highlight.
    pub search: Option<&'a Search>,
}
