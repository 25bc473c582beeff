//! The application state and how actions and events change it.
//!
//! Only the event loop touches an `App`. Slow work (tool batches) runs on worker threads and
//! comes back as [`AppEvent`]s, so the UI thread never waits on I/O.

use std::sync::mpsc::Sender;
use std::time::SystemTime;

use cp_base::{Level, Notice, PanelView, ToolCall};

use cp_llm::Message;

use super::agent_state::AgentState;
use super::background;
use super::config_watch::ConfigWatch;
use super::confirm::Confirm;
use super::conversation::{Conversation, Entry, NO_PROVIDER_HELP};
use super::dialog::ApprovalDialog;
use super::events::{AppEvent, SignalKind};
use super::keymap::{Action, KeyContext};
use super::navigation::{Close, Focus, Navigation, SidebarEntry, sidebar};
use super::palette::{Palette, PaletteStep};
use super::saved_state::Autosave;
use super::tool_jobs::{BatchJob, ToolJobs};
use super::view_model::ViewModel;
use super::workflow_thread::WorkflowRun;
use crate::host::Host;

mod agent;
mod cli_turn;
mod external_edit;
pub(crate) mod models;
mod mouse;
mod reload;
mod saved_state;
mod scroll;
mod search;
mod workflow;

/// The whole UI state.
pub struct App {
    host: Host,
    conversation: Conversation,
    input: super::input::InputBox,
    palette: Option<Palette>,
    focus: Focus,
    nav: Navigation,
    confirm: Option<Confirm>,
    /// Tool batches started from the UI and not yet finished: job id → conversation entries.
    jobs: ToolJobs,
    quit: bool,
    /// A short message in the status bar.
    flash: Option<String>,
    agent: AgentState,
    /// When a reload was requested; it happens once no batch or turn is running.
    reload: Option<SystemTime>,
    /// The agent's turn was paused for the reload and continues in the new process.
    stopped_for_reload: bool,
    /// The workflow run driven from this TUI, if any.
    workflow: Option<WorkflowRun>,
    /// A workflow checkpoint waiting for the person.
    dialog: Option<ApprovalDialog>,
    /// Something worth saving happened since the last save.
    autosave: Autosave,
    tx: Sender<AppEvent>,
    /// The callbacks config problems already shown.
    config_watch: ConfigWatch,
    /// The key help overlay, when open (F1, or `?` on an empty input).
    pub(crate) help: Option<super::help::Help>,
    /// Where the last frame drew what, for mouse clicks.
    hits: super::hit_map::HitMap,
    /// Text to hand to `$EDITOR` before the next frame (the event loop does it).
    external_edit: Option<cp_base::ExternalEdit>,
    /// The terminal's size at the last frame: scrolling is bounded by what a panel shows.
    screen: ratatui::layout::Rect,
    /// `/` search in the selected panel: the prompt, or the query last found.
    search: Option<super::search::Search>,
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
            agent,
            reload: None,
            stopped_for_reload: false,
            autosave: Autosave::default(),
            config_watch: ConfigWatch::default(),
            workflow: None,
            dialog: None,
            help: None,
            hits: super::hit_map::HitMap::default(),
            external_edit: None,
            // Until the first frame reports the real size.
            screen: ratatui::layout::Rect::new(0, 0, 80, 24),
            search: None,
            host,
            conversation,
            input: super::input::InputBox::default(),
            palette: None,
            focus: Focus::Input,
            nav: Navigation::default(),
            confirm: None,
            jobs: ToolJobs::default(),
            quit: false,
            flash: None,
            tx,
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The id of the selected panel.
    pub fn selected(&self) -> &str {
        self.nav.selected()
    }

    pub fn agent(&self) -> &AgentState {
        &self.agent
    }

    /// The workflow run this TUI drove, if any (after the event loop ends).
    pub fn into_workflow(self) -> Option<WorkflowRun> {
        self.workflow
    }

    /// What the next frame draws: this state and the modules' published panel snapshots.
    pub fn view_model(&self) -> ViewModel<'_> {
        let views = self.host.registry().views();
        let selected = self.nav.selected();
        let mut model = ViewModel {
            project: self.host.project().root().display().to_string(),
            worker: self.host.worker().to_string(),
            conversation: &self.conversation,
            input: &self.input,
            palette: self
                .palette
                .as_ref()
                .map(|p| (p, self.host.registry().tool_defs())),
            focus: self.focus,
            selected,
            sidebar: sidebar(&self.conversation, &views),
            panel: views.panel(selected),
            panel_view: self.view(selected),
            confirm: self.confirm.as_ref(),
            dialog: self.dialog.as_ref(),
            agent: &self.agent,
            workflow: self.workflow.as_ref(),
            flash: self.flash.as_deref(),
            reload_pending: self.reload.is_some(),
            running_jobs: self.jobs.running(),
            help: self.help.as_ref(),
            search: self.search.as_ref(),
        };
        // A module panel's content can shrink under a kept offset; never draw past it. (The
        // conversation clamps while drawing, and its extent costs a full wrap.)
        if model.panel.is_some() && model.panel_view.scroll > 0 {
            let max = scroll::extent_in(&model, self.screen).max;
            model.panel_view.scroll = model.panel_view.scroll.min(max);
        }
        model
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
        (&mut self.conversation, &mut self.dialog, &mut self.agent)
    }

    /// Asks whether to trust the project when it is not trusted and has something to trust
    /// (callbacks, a configured test command, an `llm.base_url`). Called once at start.
    pub fn ask_trust_if_needed(&mut self) {
        let project = self.host.project();
        if project.is_trusted() {
            return;
        }
        let what = match cp_base::Grant::of(project) {
            Ok(grant) => grant.describe(),
            Err(e) => format!("(cannot read what it allows: {e})\n"),
        };
        self.confirm = Some(Confirm::Trust(format!(
            "{}\n\nTrusting {} allows:\n\n{what}",
            project.trust_state().advice(project.root()),
            project.root().display()
        )));
    }

    fn trust_project(&mut self) {
        let text = match self.host.project().grant_trust() {
            Ok(_) => "Trusted this project: its callbacks, configured test command and \
                      llm.base_url are on (a change made outside Context Pilot turns them off \
                      again). A provider from llm.base_url starts at the next start."
                .to_owned(),
            Err(e) => format!("Could not trust this project: {e}"),
        };
        self.flash = Some(text.clone());
        self.conversation.push(Entry::System(text));
    }

    fn decline_trust(&mut self) {
        let text = format!(
            "Not trusted: this project's callbacks and configured test command stay off and its \
             llm.base_url is ignored. Trust it later with `context-pilot trust --project {}`.",
            self.host.project().root().display()
        );
        self.flash = Some(text.clone());
        self.conversation.push(Entry::System(text));
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether work is in flight (quitting then asks first).
    pub fn busy(&self) -> bool {
        self.jobs.running() > 0
            || self.agent.running()
            || self.workflow.as_ref().is_some_and(WorkflowRun::active)
    }

    /// The key context for the current state.
    pub fn key_context(&self) -> KeyContext {
        if self.confirm.is_some() {
            KeyContext::Confirm
        } else if self.palette.is_some()
            || self.focus == Focus::Input
            || self.dialog_visible()
            || self.search.as_ref().is_some_and(|s| s.editing)
        {
            KeyContext::Text
        } else {
            KeyContext::Sidebar
        }
    }

    /// Sidebar rows, from the modules' published views.
    pub fn sidebar(&self) -> Vec<SidebarEntry> {
        sidebar(&self.conversation, &self.host.registry().views())
    }

    pub fn view(&self, id: &str) -> PanelView {
        self.nav.view(id, self.focus == Focus::Sidebar)
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) {
        if let Action::Click { column, row } = action {
            self.click(column, row);
            return;
        }
        if let Some(confirm) = self.confirm.take() {
            match (confirm, action) {
                (Confirm::QuitWhileBusy, Action::Yes | Action::Quit) => self.quit = true,
                (Confirm::QuitWhileBusy, _) => self.flash = Some("Quit cancelled.".into()),
                (Confirm::Trust(_), Action::Yes) => self.trust_project(),
                (Confirm::Trust(_), Action::Quit) => {
                    self.decline_trust();
                    self.request_quit();
                }
                (Confirm::Trust(_), _) => self.decline_trust(),
            }
            return;
        }
        if let Some(help) = &mut self.help {
            if !help.apply(&action) {
                self.help = None;
            }
            return;
        }
        if action == Action::Help {
            self.help = Some(super::help::Help::new(self.key_context()));
            return;
        }
        if self.palette.is_some() {
            self.apply_palette(action);
            return;
        }
        if self.search.as_ref().is_some_and(|s| s.editing) {
            self.apply_search_prompt(action);
            return;
        }
        if self.dialog_visible() {
            self.apply_dialog(action);
            return;
        }
        match action {
            Action::Quit => self.request_quit(),
            Action::OpenPalette => self.palette = Some(Palette::default()),
            Action::Submit if self.focus == Focus::Input => self.submit_input(),
            Action::Back if self.agent.running() || self.workflow_turn().is_some() => {
                self.cancel_turn();
            }
            // Esc first forgets a finished search (and its highlight), then leaves the sidebar.
            Action::Back if self.search.is_some() => self.search = None,
            Action::Search => self.open_search(),
            Action::SearchNext => self.search_jump(true, false),
            Action::SearchPrev => self.search_jump(false, false),
            Action::Back | Action::Submit => self.focus = Focus::Input,
            Action::FocusNext | Action::FocusPrev => {
                self.focus = match self.focus {
                    Focus::Input => Focus::Sidebar,
                    Focus::Sidebar => Focus::Input,
                };
            }
            Action::SelectPanel(n) => self.nav.select_index(&self.sidebar(), n),
            Action::SelectNext => self.nav.select_offset(&self.sidebar(), 1),
            Action::SelectPrev => self.nav.select_offset(&self.sidebar(), -1),
            Action::ScrollUp(n) => self.scroll_by(n, true),
            Action::ScrollDown(n) => self.scroll_by(n, false),
            Action::ScrollToStart => self.scroll_to_start(),
            Action::ScrollToEnd => self.scroll_to_end(),
            Action::ToggleExpand => {
                // Show the block that changed: the conversation, at its bottom, where the
                // conversation keeps the toggled block in view.
                self.conversation.toggle_last_tool();
                self.nav.select("conversation");
                self.scroll_to_end();
            }
            Action::ShowDialog => {
                if let Some(dialog) = &mut self.dialog {
                    dialog.hidden = false;
                }
            }
            Action::ClosePanel => self.close_selected(),
            Action::EditExternally => self.request_external_edit(),
            Action::Yes | Action::No => {}
            text => self.edit_input(text),
        }
    }

    fn edit_input(&mut self, action: Action) {
        match action {
            Action::Char(':') if self.input.is_empty() => self.palette = Some(Palette::default()),
            Action::Char('?') if self.input.is_empty() => {
                self.help = Some(super::help::Help::new(KeyContext::Text));
            }
            Action::Edit(op) => self.input.edit(op),
            Action::Char(c) => self.input.insert(c),
            Action::Paste(s) => self.input.insert_str(&s),
            Action::Newline => self.input.insert('\n'),
            Action::Backspace => self.input.backspace(),
            Action::Delete => self.input.delete(),
            Action::Left => self.input.left(),
            Action::Right => self.input.right(),
            Action::Home => self.input.home(),
            Action::End => self.input.end(),
            Action::Up if self.input.on_first_line() => self.input.history_prev(),
            Action::Down if self.input.on_last_line() => self.input.history_next(),
            _ => {}
        }
    }

    fn apply_palette(&mut self, action: Action) {
        let tools = self.host.registry().tool_defs();
        let Some(palette) = self.palette.as_mut() else {
            return;
        };
        match palette.apply(action, &tools) {
            PaletteStep::Stay => {}
            PaletteStep::Close => self.palette = None,
            PaletteStep::Run(name, args) => {
                self.palette = None;
                self.run_tools(vec![ToolCall::new("palette", name, args)]);
            }
        }
    }

    fn request_quit(&mut self) {
        if self.busy() {
            self.confirm = Some(Confirm::QuitWhileBusy);
        } else {
            self.quit = true;
        }
    }

    fn submit_input(&mut self) {
        if self.agent.running() {
            self.flash = Some("The agent is working; Esc cancels the turn.".into());
            return;
        }
        // The run's sessions have the agent (an agent CLI cannot run two at once, and two
        // built-in loops would interleave in the conversation).
        if self.workflow_turn().is_some() {
            self.flash =
                Some("A workflow phase is running; Esc cancels it, then you can talk.".into());
            return;
        }
        let text = self.input.submit();
        if text.trim().is_empty() {
            return;
        }
        self.conversation.push(Entry::User(text.clone()));
        self.select("conversation");
        if !self.agent.has_agent() {
            self.conversation
                .push(Entry::System(NO_PROVIDER_HELP.to_owned()));
            return;
        }
        Message::push_user_text(&mut self.agent.messages, text);
        self.start_turn();
    }

    /// Runs a batch of tool calls in the background; results arrive as `BatchDone`.
    pub fn run_tools(&mut self, calls: Vec<ToolCall>) {
        let entries = calls
            .iter()
            .map(|call| {
                self.conversation.push(Entry::Tool {
                    name: call.name.clone(),
                    args: compact_args(&call.arguments),
                    result: None,
                    expanded: true,
                })
            })
            .collect();
        let job = self.jobs.start(entries);
        self.select("conversation");
        let batch = BatchJob {
            job,
            registry: self.host.registry().clone(),
            env: self.host.env().clone(),
            calls,
        };
        // A batch that cannot start ends at once: its calls get the reason as their result.
        if let Err(e) = background::spawn(batch, &self.tx) {
            self.finish_job(job, vec![cp_base::ToolResult::error(e.to_string())]);
        }
    }

    fn finish_job(&mut self, job: u64, results: Vec<cp_base::ToolResult>) {
        let Some(entries) = self.jobs.finish(job) else {
            return;
        };
        self.autosave.mark();
        for (index, result) in entries.into_iter().zip(results) {
            if let Some(Entry::Tool { result: slot, .. }) = self.conversation.entry_mut(index) {
                *slot = Some(result);
            }
        }
    }

    /// Applies a background event. Terminal input goes through the keymap first.
    pub fn handle(&mut self, event: AppEvent) {
        match event {
            AppEvent::BatchDone { job, results } => self.finish_job(job, results),
            AppEvent::Agent(event) => self.apply_agent(event),
            AppEvent::Workflow(msg) => self.apply_workflow(msg),
            AppEvent::Notice => self.drain_notices(),
            AppEvent::Signal(SignalKind::Terminate | SignalKind::Hangup) => self.quit = true,
            AppEvent::Signal(SignalKind::Reload) => self.request_reload(),
            AppEvent::ModelCheck(check) => self.apply_model_check(check),
            AppEvent::AgentNotice(level, text) => {
                self.conversation.push(Entry::Notice { level, text });
            }
            AppEvent::Waiting(notes) => {
                for note in notes {
                    self.host.notifier().notify(note);
                }
                self.drain_notices();
            }
            AppEvent::NotStarted(failure) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: failure.to_string(),
                });
            }
            AppEvent::Term(_) => {}
        }
    }

    /// Moves queued notices into the conversation and honours panel requests.
    pub fn drain_notices(&mut self) {
        let notices = self.host.notifier().drain();
        if notices.iter().any(|n| !matches!(n, Notice::Refresh)) {
            // Background work changed a module (a failed run opens its panel): show it now.
            self.host.registry().try_republish();
        }
        for notice in notices {
            match notice {
                Notice::Notify(n) => {
                    self.conversation.push(Entry::Notice {
                        level: n.level,
                        text: n.text.clone(),
                    });
                    // The agent hears about background results on its next turn.
                    if self.agent.has_agent() {
                        self.agent.inbox.push(n);
                    }
                }
                Notice::OpenPanel(id) => self.select(&id),
                Notice::Refresh => {}
            }
        }
        self.maybe_wake();
    }

    /// Lets modules pick up background results, and saves the TUI state now and then so even a
    /// killed host loses little. Returns whether anything visible changed.
    pub fn tick(&mut self) -> bool {
        if self.autosave.due() {
            self.save_state();
        }
        // Never waits: a module a tool holds gets the next tick.
        let mut changed = self.host.registry().try_tick(self.host.env());
        changed |= self.nav.retry_closes(self.host.registry());
        changed |= self
            .conversation
            .set_activity(self.host.registry().views().activity());
        if let Some(notice) = self.config_watch.check(self.host.project()) {
            self.conversation.push(notice);
            self.autosave.mark();
            changed = true;
        }
        // Background results the agent CLI's hooks left while it is idle.
        if let Some(cli) = &self.agent.cli
            && !self.agent.running()
            && self.workflow_turn().is_none()
        {
            cli.poll_waiting(&self.host, &self.tx);
        }
        // Running calls show a spinner and their elapsed seconds: redraw each tick.
        changed |= self.jobs.running() > 0 || self.agent.running();
        changed
    }

    pub fn select(&mut self, id: &str) {
        self.nav.select(id);
    }

    /// Closes the selected panel; when its module is busy, on a later tick.
    fn close_selected(&mut self) {
        match self.nav.close_selected(self.host.registry()) {
            Close::Closed => {}
            Close::Queued => {
                self.flash = Some("The panel closes once its tool finishes.".into());
            }
            Close::Refused => self.flash = Some("This panel cannot be closed.".into()),
        }
    }
}

/// Arguments on one line for the conversation, cut to a readable length.
fn compact_args(args: &serde_json::Value) -> String {
    shorten(&args.to_string())
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(119).collect::<String>())
    } else {
        text.to_owned()
    }
}
