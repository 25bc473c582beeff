//! The application state and how actions and events change it.
//!
//! Only the event loop touches an `App`. Slow work (tool batches) runs on worker threads and
//! comes back as [`AppEvent`]s, so the UI thread never waits on I/O.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::time::{Instant, SystemTime};

use cp_base::{Level, Notice, PanelKind, PanelView, ToolCall, lock_module};

use crate::llm::Message;

use super::agent_state::{AgentState, RunningTurn};
use super::conversation::{Conversation, Entry, NO_PROVIDER_HELP};
use super::dialog::CheckpointDialog;
use super::events::{AppEvent, SignalKind};
use super::keymap::{Action, KeyContext};
use super::palette::Palette;
use crate::host::Host;

mod agent;
mod config_watch;
mod models;
mod reload;
mod session;
mod workflow;

pub use models::spawn_model_check;

/// Where typed keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The conversation input line (the default).
    Input,
    /// The sidebar: arrows and digits pick a panel.
    Sidebar,
}

/// One row of the sidebar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidebarEntry {
    pub id: String,
    pub title: String,
    pub badge: Option<String>,
    pub kind: PanelKind,
}

/// A yes/no question shown over the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    QuitWhileBusy,
    /// First start in an untrusted project: what trusting it allows (trust / not now).
    Trust(String),
}

/// The whole UI state.
pub struct App {
    pub(crate) host: Host,
    pub(crate) conversation: Conversation,
    pub(crate) input: super::input::InputBox,
    pub(crate) palette: Option<Palette>,
    pub(crate) focus: Focus,
    pub(crate) selected: String,
    pub(crate) views: HashMap<String, PanelView>,
    pub(crate) confirm: Option<Confirm>,
    /// Tool batches started from the UI and not yet finished: job id → conversation entries.
    pub(crate) jobs: HashMap<u64, Vec<usize>>,
    next_job: u64,
    pub(crate) quit: bool,
    /// A short message in the status bar.
    pub(crate) flash: Option<String>,
    pub(crate) agent: AgentState,
    /// When a reload was requested; it happens once no batch or turn is running.
    pub(crate) reload: Option<SystemTime>,
    /// The agent's turn was paused for the reload and continues in the new process.
    stopped_for_reload: bool,
    /// The workflow run driven from this TUI, if any.
    pub(crate) workflow: Option<WorkflowRun>,
    /// A workflow checkpoint waiting for the person.
    pub(crate) dialog: Option<CheckpointDialog>,
    /// Something worth saving happened since the last save.
    unsaved: bool,
    last_save: Instant,
    tx: Sender<AppEvent>,
    /// The callbacks config problems already shown.
    config_watch: config_watch::ConfigWatch,
    /// The key help overlay, when open (F1, or `?` on an empty input).
    pub(crate) help: Option<super::help::Help>,
}

/// A workflow run started from this TUI.
#[derive(Debug, Clone, Default)]
pub struct WorkflowRun {
    pub run_id: Option<String>,
    /// The latest event, for the status bar.
    pub status: String,
    /// Set when the run ended: its exit code, or why it failed.
    pub exit: Option<Result<i32, String>>,
    /// Cancel and stop controls of the session the run is in.
    pub turn: Option<RunningTurn>,
    /// The run paused at a batch boundary for a live reload.
    pub paused_for_reload: bool,
}

impl WorkflowRun {
    /// Running and not paused: a reload has to wait for it.
    pub fn active(&self) -> bool {
        self.exit.is_none() && !self.paused_for_reload
    }
}

/// How often the session is saved while nothing else triggers a save.
const AUTOSAVE: std::time::Duration = std::time::Duration::from_secs(5);

impl App {
    pub fn new(host: Host, tx: Sender<AppEvent>, agent: AgentState) -> Self {
        let mut conversation = Conversation::default();
        if let Some(error) = &agent.provider_error {
            conversation.push(Entry::Notice {
                level: Level::Error,
                text: error.clone(),
            });
        }
        if agent.provider.is_none() {
            conversation.push(Entry::System(NO_PROVIDER_HELP.to_owned()));
        }
        Self {
            agent,
            reload: None,
            stopped_for_reload: false,
            unsaved: false,
            last_save: Instant::now(),
            config_watch: config_watch::ConfigWatch::default(),
            workflow: None,
            dialog: None,
            help: None,
            host,
            conversation,
            input: super::input::InputBox::default(),
            palette: None,
            focus: Focus::Input,
            selected: "conversation".into(),
            views: HashMap::new(),
            confirm: None,
            jobs: HashMap::new(),
            next_job: 1,
            quit: false,
            flash: None,
            tx,
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
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
        !self.jobs.is_empty()
            || self.agent.running()
            || self.workflow.as_ref().is_some_and(WorkflowRun::active)
    }

    /// The key context for the current state.
    pub fn key_context(&self) -> KeyContext {
        if self.confirm.is_some() {
            KeyContext::Confirm
        } else if self.palette.is_some() || self.focus == Focus::Input || self.dialog_visible() {
            KeyContext::Text
        } else {
            KeyContext::Sidebar
        }
    }

    /// Sidebar rows: the conversation, fixed module panels, then dynamic ones.
    pub fn sidebar(&self) -> Vec<SidebarEntry> {
        use cp_base::Panel as _;
        let mut entries = vec![SidebarEntry {
            id: self.conversation.id(),
            title: self.conversation.title(),
            badge: self.conversation.badge(),
            kind: PanelKind::Fixed,
        }];
        let mut dynamic = Vec::new();
        for module in self.host.registry().modules() {
            let module = lock_module(module);
            for panel in module.panels() {
                let entry = SidebarEntry {
                    id: panel.id(),
                    title: panel.title(),
                    badge: panel.badge(),
                    kind: panel.kind(),
                };
                if entry.kind == PanelKind::Fixed {
                    entries.push(entry);
                } else {
                    dynamic.push(entry);
                }
            }
        }
        entries.extend(dynamic);
        entries
    }

    pub fn view(&self, id: &str) -> PanelView {
        let mut view = self.views.get(id).copied().unwrap_or_default();
        view.focused = self.focus == Focus::Sidebar && self.selected == id;
        view
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) {
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
        if self.dialog_visible() {
            self.apply_dialog(action);
            return;
        }
        match action {
            Action::Quit => self.request_quit(),
            Action::OpenPalette => self.palette = Some(Palette::default()),
            Action::Submit if self.focus == Focus::Input => self.submit_input(),
            Action::Back if self.agent.running() => self.cancel_turn(),
            Action::Back | Action::Submit => self.focus = Focus::Input,
            Action::FocusNext | Action::FocusPrev => {
                self.focus = match self.focus {
                    Focus::Input => Focus::Sidebar,
                    Focus::Sidebar => Focus::Input,
                };
            }
            Action::SelectPanel(n) => self.select_index(n),
            Action::SelectNext => self.select_offset(1),
            Action::SelectPrev => self.select_offset(-1),
            Action::ScrollUp(n) => self.scroll_by(n, true),
            Action::ScrollDown(n) => self.scroll_by(n, false),
            Action::ScrollToEnd => {
                self.views.entry(self.selected.clone()).or_default().scroll = 0;
            }
            Action::ToggleExpand => {
                // Show the block that changed: the conversation, at its bottom, where the
                // conversation keeps the toggled block in view.
                self.conversation.toggle_last_tool();
                self.select("conversation");
                self.views.entry("conversation".into()).or_default().scroll = 0;
            }
            Action::ShowDialog => {
                if let Some(dialog) = &mut self.dialog {
                    dialog.hidden = false;
                }
            }
            Action::ClosePanel => self.close_selected(),
            Action::TogglePassthrough | Action::Yes | Action::No => {}
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
        palette.error = None;
        match action {
            Action::Back | Action::Quit => self.palette = None,
            Action::Submit => match palette.invocation(&tools) {
                Ok((name, args)) => {
                    self.palette = None;
                    self.run_tools(vec![ToolCall::new("palette", name, args)]);
                }
                Err(e) => palette.error = Some(e),
            },
            Action::FocusNext => palette.complete(&tools),
            Action::Up => palette.selected = palette.selected.saturating_sub(1),
            Action::Down => {
                let count = palette.matches(&tools).len();
                palette.selected = (palette.selected + 1).min(count.saturating_sub(1));
            }
            Action::Char(c) => {
                palette.query.insert(c);
                palette.selected = 0;
            }
            Action::Paste(s) => palette.query.insert_str(&s),
            Action::Backspace => {
                palette.query.backspace();
                palette.selected = 0;
            }
            Action::Delete => palette.query.delete(),
            Action::Edit(op) => {
                palette.query.edit(op);
                palette.selected = 0;
            }
            Action::Left => palette.query.left(),
            Action::Right => palette.query.right(),
            Action::Home => palette.query.home(),
            Action::End => palette.query.end(),
            _ => {}
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
        let text = self.input.submit();
        if text.trim().is_empty() {
            return;
        }
        self.conversation.push(Entry::User(text.clone()));
        self.select("conversation");
        if self.agent.provider.is_none() {
            self.conversation
                .push(Entry::System(NO_PROVIDER_HELP.to_owned()));
            return;
        }
        Message::push_user_text(&mut self.agent.messages, text);
        self.start_turn();
    }

    /// Runs a batch of tool calls on a worker thread; results arrive as `BatchDone`.
    pub fn run_tools(&mut self, calls: Vec<ToolCall>) {
        let job = self.next_job;
        self.next_job += 1;
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
        self.jobs.insert(job, entries);
        self.select("conversation");
        let registry = self.host.registry().clone();
        let env = self.host.env().clone();
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cp-batch-{job}"))
            .spawn(move || {
                let results = cp_base::run_batch(&registry, &calls, &env);
                let _ = tx.send(AppEvent::BatchDone { job, results });
            });
        if let Err(e) = spawned {
            self.finish_job(
                job,
                vec![cp_base::ToolResult::error(format!("cannot start: {e}"))],
            );
        }
    }

    fn finish_job(&mut self, job: u64, results: Vec<cp_base::ToolResult>) {
        let Some(entries) = self.jobs.remove(&job) else {
            return;
        };
        self.unsaved = true;
        for (index, result) in entries.into_iter().zip(results) {
            if let Some(Entry::Tool { result: slot, .. }) = self.conversation.entries.get_mut(index)
            {
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
            AppEvent::Term(_) => {}
        }
    }

    /// Moves queued notices into the conversation and honours panel requests.
    pub fn drain_notices(&mut self) {
        for notice in self.host.notifier().drain() {
            match notice {
                Notice::Notify(n) => {
                    self.conversation.push(Entry::Notice {
                        level: n.level,
                        text: n.text.clone(),
                    });
                    // The agent hears about background results on its next turn.
                    if self.agent.provider.is_some() {
                        self.agent.inbox.push(n);
                    }
                }
                Notice::OpenPanel(id) => self.select(&id),
                Notice::Refresh => {}
            }
        }
        self.maybe_wake();
    }

    /// Lets modules pick up background results, and saves the session now and then so even a
    /// killed host loses little. Returns whether anything visible changed.
    pub fn tick(&mut self) -> bool {
        if std::mem::take(&mut self.unsaved) || self.last_save.elapsed() >= AUTOSAVE {
            self.save_session();
        }
        let env = self.host.env().clone();
        let mut changed = false;
        for module in self.host.registry().modules() {
            changed |= lock_module(module).on_tick(&env);
        }
        changed |= self.watch_callbacks_config();
        // Running calls show a spinner and their elapsed seconds: redraw each tick.
        changed |= !self.jobs.is_empty() || self.agent.running();
        changed
    }

    pub fn select(&mut self, id: &str) {
        id.clone_into(&mut self.selected);
    }

    fn select_index(&mut self, index: usize) {
        if let Some(entry) = self.sidebar().get(index) {
            self.selected.clone_from(&entry.id);
        }
    }

    fn select_offset(&mut self, delta: isize) {
        let entries = self.sidebar();
        let current = entries
            .iter()
            .position(|e| e.id == self.selected)
            .unwrap_or(0);
        let next = current
            .saturating_add_signed(delta)
            .min(entries.len().saturating_sub(1));
        self.select_index(next);
    }

    fn scroll_by(&mut self, lines: usize, up: bool) {
        if self.selected == "conversation" {
            self.conversation.clear_reveal();
        }
        let view = self.views.entry(self.selected.clone()).or_default();
        view.scroll = if up {
            view.scroll.saturating_add(lines)
        } else {
            view.scroll.saturating_sub(lines)
        };
    }

    fn close_selected(&mut self) {
        let id = self.selected.clone();
        for module in self.host.registry().modules() {
            if lock_module(module).close_panel(&id) {
                self.selected = "conversation".into();
                return;
            }
        }
        self.flash = Some("This panel cannot be closed.".into());
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
