//! The application state ([`App`], its fields grouped by what changes together) and the
//! wiring: each feature keeps its state, its keys and its drawing in a folder of its own
//! (`conversation/`, `changes/`, `search/`, …), and the files here apply actions and events
//! to the whole app, one job a file: `commands.rs` (the command table that actions dispatch
//! through), `frame.rs` (what the next frame draws), `event_handling.rs` (background events
//! and ticks), `input_edit.rs` (the message line and the palette), `tools.rs` (tool batches
//! from the palette), `offer_keys.rs` (the no-model screen), `save_restore.rs`,
//! `keys_page.rs` (the key reference page), and the agent, changes, workflow, search, scroll,
//! mouse, trust and reload files.
//!
//! Only the event loop touches an `App`. Slow work runs as background jobs and comes back as
//! [`AppEvent`]s, so the UI thread never waits on I/O.

use std::sync::mpsc::Sender;
use std::time::SystemTime;

use cp_base::{Level, PanelView};

use crate::agent::AgentState;
use crate::conversation::{Conversation, Entry, NO_PROVIDER_HELP};
use crate::events::AppEvent;
use crate::keymap::KeyContext;
use crate::palette::Palette;
use crate::palette::tool_jobs::ToolJobs;
use crate::panels::{Focus, Navigation, SidebarEntry, sidebar};
use crate::popup::Confirm;
use crate::saved_state::state_writer::StateWriter;
use crate::saved_state::{Autosave, OnDisk};
use crate::workflow::WorkflowRun;
use crate::workflow::dialog::ApprovalDialog;
use config_watch::ConfigWatch;
use cp_host::Host;

mod agent;
mod changes;
mod cli_turn;
pub(crate) mod commands;
pub(crate) mod config_watch;
mod event_handling;
mod external_edit;
mod frame;
mod git_actions;
mod input_edit;
pub(crate) mod keys_page;
pub(crate) mod models;
mod mouse;
mod offer_keys;
mod reload;
mod save_restore;
mod scroll;
mod search;
mod tools;
mod trust;
mod workflow;

/// The whole UI state, in groups of fields that change together.
pub struct App {
    host: Host,
    conversation: Conversation,
    input: crate::input::InputBox,
    agent: AgentState,
    /// With no provider: the agent CLIs found, which F5/F6 start.
    offer: Option<crate::agent_offer::AgentOffer>,
    /// The agent F5/F6 started, which a live reload passes on as `--agent`.
    picked_agent: Option<cp_agent_cli::AgentKind>,
    /// Where the job F5/F6 start leaves the agent CLI it started.
    started_agent: crate::agent_offer::agent_start::StartedSlot,
    /// Tool batches started from the UI and not yet finished: job id → conversation entries.
    jobs: ToolJobs,
    /// The workflow run driven from this TUI, if any.
    workflow: Option<WorkflowRun>,
    /// The Changes panel: the work tree's diff, review comments, the panel's prompt.
    pub(crate) changes: crate::changes::Changes,
    /// Where background jobs report (see `background::spawn`).
    tx: Sender<AppEvent>,
    /// What takes the keys before the main screen.
    pub(crate) modal: Modal,
    ui: Ui,
    life: Lifecycle,
}

/// What takes the keys before the main screen, in this order: a yes/no question, the help
/// overlay, the palette, the search prompt, a workflow's approval dialog.
#[derive(Default)]
pub(crate) struct Modal {
    pub(crate) confirm: Option<Confirm>,
    /// The key help overlay, when open (F1, or `?` on an empty input).
    pub(crate) help: Option<crate::help::Help>,
    pub(crate) palette: Option<Palette>,
    /// `/` search in the selected panel: the prompt, or the query last found.
    pub(crate) search: Option<crate::search::Search>,
    /// A workflow approval waiting for the person.
    pub(crate) dialog: Option<ApprovalDialog>,
}

/// Where the person is on the screen, and what the last frame drew.
pub(crate) struct Ui {
    pub(crate) focus: Focus,
    pub(crate) nav: Navigation,
    /// A short message in the status bar.
    pub(crate) flash: Option<String>,
    /// Where the last frame drew what, for mouse clicks.
    pub(crate) hits: crate::hit_map::HitMap,
    /// The terminal's size at the last frame: scrolling is bounded by what a panel shows.
    pub(crate) size: ratatui::layout::Rect,
}

impl Default for Ui {
    fn default() -> Self {
        Self {
            focus: Focus::Input,
            nav: Navigation::default(),
            flash: None,
            hits: crate::hit_map::HitMap::default(),
            // Until the first frame reports the real size.
            size: ratatui::layout::Rect::new(0, 0, 80, 24),
        }
    }
}

/// What the event loop does for the app besides drawing: quitting, reloading, handing text
/// to `$EDITOR`, saving, watching the config.
#[derive(Default)]
pub(crate) struct Lifecycle {
    pub(crate) quit: bool,
    /// When a reload was requested; it happens once no batch or turn is running.
    pub(crate) reload: Option<SystemTime>,
    /// The agent's turn was paused for the reload and continues in the new process.
    pub(crate) stopped_for_reload: bool,
    /// Text to hand to `$EDITOR` before the next frame (the event loop does it).
    pub(crate) external_edit: Option<cp_base::ExternalEdit>,
    /// Something worth saving happened since the last save.
    pub(crate) autosave: Autosave,
    /// The thread that writes the saved state, started by the first save.
    pub(crate) writer: Option<StateWriter>,
    /// What the restored state left on disk, for the writer to append to.
    pub(crate) on_disk: OnDisk,
    /// The model's messages from this index on changed since the last save.
    pub(crate) messages_unsaved_from: usize,
    /// The callbacks config problems already shown.
    pub(crate) config_watch: ConfigWatch,
}

impl App {
    pub fn new(host: Host, tx: Sender<AppEvent>, agent: AgentState) -> Self {
        let mut conversation = Conversation::default();
        if let Some(error) = &agent.provider_error {
            conversation.push(Entry::Notice {
                level: Level::Error,
                text: error.clone(),
            });
        }
        if !agent.has_agent() {
            conversation.push(Entry::System(NO_PROVIDER_HELP.to_owned()));
        }
        Self {
            host,
            conversation,
            input: crate::input::InputBox::default(),
            agent,
            offer: None,
            started_agent: crate::agent_offer::agent_start::StartedSlot::default(),
            picked_agent: None,
            jobs: ToolJobs::default(),
            workflow: None,
            changes: crate::changes::Changes::default(),
            tx,
            modal: Modal::default(),
            ui: Ui::default(),
            life: Lifecycle::default(),
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The id of the selected panel.
    pub fn selected(&self) -> &str {
        self.ui.nav.selected()
    }

    pub fn agent(&self) -> &AgentState {
        &self.agent
    }

    /// The workflow run this TUI drove, if any (after the event loop ends).
    pub fn into_workflow(self) -> Option<WorkflowRun> {
        self.workflow
    }

    /// Test access to the parts a screen test sets up directly.
    #[cfg(test)]
    pub(crate) fn parts_for_test(
        &mut self,
    ) -> (
        &mut Conversation,
        &mut Option<ApprovalDialog>,
        &mut AgentState,
    ) {
        (
            &mut self.conversation,
            &mut self.modal.dialog,
            &mut self.agent,
        )
    }

    pub fn should_quit(&self) -> bool {
        self.life.quit
    }

    /// Whether work is in flight (quitting then asks first).
    pub fn busy(&self) -> bool {
        self.jobs.running() > 0
            || self.agent.running()
            || self.workflow.as_ref().is_some_and(WorkflowRun::active)
    }

    /// The key context for the current state.
    pub fn key_context(&self) -> KeyContext {
        if self.modal.confirm.is_some() {
            KeyContext::Confirm
        } else if self.modal.palette.is_some()
            || self.ui.focus == Focus::Input
            || self.dialog_visible()
            || self.modal.search.as_ref().is_some_and(|s| s.editing)
            || self.review_prompt_open()
        {
            KeyContext::Text
        } else if self.changes_focused() {
            KeyContext::Changes
        } else {
            KeyContext::Sidebar
        }
    }

    /// Sidebar rows, from the modules' published views.
    pub fn sidebar(&self) -> Vec<SidebarEntry> {
        sidebar(
            &self.conversation,
            &self.changes,
            self.workflow.as_ref().map(|w| &w.phases),
            &self.host.registry().views(),
        )
    }

    pub fn view(&self, id: &str) -> PanelView {
        self.ui.nav.view(id, self.ui.focus == Focus::Sidebar)
    }

    pub fn select(&mut self, id: &str) {
        self.ui.nav.select(id);
    }
}
