//! What one frame draws: a borrowed, read-only picture of the [`App`] plus the modules'
//! published panel snapshots.
//!
//! The view layer (`tui/view/`) sees only a [`ViewModel`]. It holds no [`crate::host::Host`]
//! and no [`cp_base::Registry`], so drawing cannot reach a module, let alone wait for one that
//! a tool holds.

use std::sync::Arc;

use cp_base::{Panel, PanelView, ToolDef};
use ratatui::Frame;

use super::agent_state::AgentState;
use super::app::{App, Confirm, Focus, WorkflowRun};
use super::conversation::Conversation;
use super::dialog::CheckpointDialog;
use super::input::InputBox;
use super::navigation::{SidebarEntry, sidebar};
use super::palette::Palette;

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
    /// The selected module panel's snapshot (`None` for the conversation or a gone panel).
    pub panel: Option<Arc<dyn Panel>>,
    pub panel_view: PanelView,
    pub confirm: Option<&'a Confirm>,
    pub dialog: Option<&'a CheckpointDialog>,
    pub agent: &'a AgentState,
    pub workflow: Option<&'a WorkflowRun>,
    pub flash: Option<&'a str>,
    pub reload_pending: bool,
    /// Tool batches started from the UI and still running.
    pub running_jobs: usize,
}

impl<'a> ViewModel<'a> {
    /// The picture of `app` now. Reads only published module views.
    pub fn of(app: &'a App) -> Self {
        let views = app.host.registry().views();
        let selected = app.nav.selected();
        Self {
            project: app.host.project().root().display().to_string(),
            worker: app.host.worker().to_string(),
            conversation: &app.conversation,
            input: &app.input,
            palette: app
                .palette
                .as_ref()
                .map(|p| (p, app.host.registry().tool_defs())),
            focus: app.focus,
            selected,
            sidebar: sidebar(&app.conversation, &views),
            panel: views.panel(selected),
            panel_view: app.view(selected),
            confirm: app.confirm.as_ref(),
            dialog: app.dialog.as_ref(),
            agent: &app.agent,
            workflow: app.workflow.as_ref(),
            flash: app.flash.as_deref(),
            reload_pending: app.reload.is_some(),
            running_jobs: app.jobs.len(),
        }
    }
}

/// Draws `app`'s screen from its view model.
pub fn render(app: &App, frame: &mut Frame) {
    super::view::draw(&ViewModel::of(app), frame);
}
