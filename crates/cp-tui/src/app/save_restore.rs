//! Saving and restoring the TUI's state (`state/<worker>/`): a save hands what changed to the
//! writer thread (`saved_state/state_writer.rs`); the UI thread never waits on the disk, except when the
//! host exits or reloads.

use std::time::Duration;

use cp_base::Level;
use cp_llm::Message;

use crate::conversation::{Conversation, Entry, NO_PROVIDER_HELP};
use crate::saved_state::state_writer::{Delta, Snapshot, StateWriter};
use crate::saved_state::{self, SavedState};

use super::App;

impl App {
    /// What to save of this TUI, in full (its entries and messages included).
    pub fn saved_state(&self) -> SavedState {
        let mut state = self.saved_head();
        state.conversation = self.conversation.clone();
        state.messages.clone_from(&self.agent.messages);
        state
    }

    /// What to save besides the conversation's entries and the model's messages.
    fn saved_head(&self) -> SavedState {
        // Never waits: a module a tool holds gives its last published state.
        let modules = self.host.registry().saved_states();
        SavedState {
            version: 0,
            conversation: Conversation::default(),
            messages: Vec::new(),
            input_history: self.input.history().to_vec(),
            draft: self.input.text().to_owned(),
            selected: self.ui.nav.selected().to_owned(),
            scroll: self.ui.nav.scrolls(),
            usage: self.agent.usage,
            pending: self.agent.inbox.snapshot(),
            modules,
            resume_turn: self.life.stopped_for_reload,
            review_comments: self.changes.comments.clone(),
            changed_files: self
                .changes
                .loaded_once
                .then_some(self.changes.snapshot.files.len())
                .or(self.changes.restored_files),
            logs: None,
        }
    }

    /// Hands what changed since the last save to the writer thread; returns at once. A
    /// failure (of this or an earlier save) is shown, never fatal.
    pub fn save_state(&mut self) {
        self.life.autosave.saved();
        if self.life.writer.is_none() {
            let dir = self.host.project().state_dir(self.host.worker());
            match StateWriter::spawn(dir, std::mem::take(&mut self.life.on_disk)) {
                Ok(writer) => self.life.writer = Some(writer),
                Err(e) => {
                    self.save_failed(&format!("cannot start the writer thread: {e}"));
                    return;
                }
            }
        }
        let Some(writer) = &self.life.writer else {
            return;
        };
        if let Some(e) = writer.take_error() {
            self.save_failed(&e);
        }
        let full = self
            .life
            .writer
            .as_ref()
            .is_some_and(StateWriter::take_needs_full);
        if full {
            self.conversation.mark_saved(0);
            self.life.messages_unsaved_from = 0;
        }
        let (from, items) = self.conversation.take_unsaved();
        let conversation = Delta { from, items };
        let messages = &self.agent.messages;
        let from = self.life.messages_unsaved_from.min(messages.len());
        let messages = Delta {
            from,
            items: messages[from..].to_vec(),
        };
        self.life.messages_unsaved_from = self.agent.messages.len();
        let snapshot = Snapshot {
            head: self.saved_head(),
            conversation,
            messages,
        };
        if let Some(writer) = &self.life.writer {
            writer.save(snapshot);
        }
    }

    /// Saves and waits until the state is on disk (the host exits or reloads).
    pub fn save_state_now(&mut self) {
        self.save_state();
        if let Some(writer) = &self.life.writer
            && !writer.flush(Duration::from_secs(30))
        {
            self.save_failed("the writer thread did not finish in 30 s");
        }
        if let Some(e) = self.life.writer.as_ref().and_then(StateWriter::take_error) {
            self.save_failed(&e);
        }
    }

    fn save_failed(&mut self, why: &str) {
        tracing::warn!("saving the TUI state failed: {why}");
        self.ui.flash = Some(format!("saving the TUI state failed: {why}"));
    }

    /// The model's history changed from index `from` on (the agent's turn reports only what
    /// it changed): only that part is saved again.
    pub(super) fn change_messages(&mut self, from: usize, tail: Vec<Message>) {
        let from = from.min(self.agent.messages.len());
        self.agent.messages.truncate(from);
        self.agent.messages.extend(tail);
        self.life.messages_unsaved_from = self.life.messages_unsaved_from.min(from);
    }

    /// Adds the person's (or the notifications') text to the model's history.
    pub(super) fn push_user_text(&mut self, text: impl Into<String>) {
        // The text may join the last message.
        let last = self.agent.messages.len().saturating_sub(1);
        self.life.messages_unsaved_from = self.life.messages_unsaved_from.min(last);
        Message::push_user_text(&mut self.agent.messages, text);
    }

    /// Restores the saved state of this worker, if there is one.
    /// `resume` is set after a live reload: only then does an interrupted turn continue.
    pub fn restore_saved_state(&mut self, resume: bool) {
        match saved_state::load(self.host.project(), self.host.worker()) {
            Ok(Some(restored)) => {
                let mut state = restored.state;
                state.resume_turn &= resume;
                // What came from the logs is on disk already: the next save appends to them.
                let logged = restored.on_disk.referenced;
                state.conversation.mark_saved(logged.conversation);
                self.life.on_disk = restored.on_disk;
                self.apply_saved_state(state);
                self.life.messages_unsaved_from = logged.messages;
            }
            Ok(None) => {}
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Warning,
                    text: e.to_string(),
                });
            }
        }
    }

    pub(crate) fn apply_saved_state(&mut self, state: SavedState) {
        self.host
            .registry()
            .load_states(&state.modules, self.host.env());
        // Keep notices raised while starting (a bad config) after the restored history.
        let fresh = self.conversation.take_entries();
        self.conversation = state.conversation;
        for entry in fresh.into_iter().filter(|e| !matches!(e, Entry::System(_))) {
            self.conversation.push(entry);
        }
        // A provider configured since: the old "no provider" help no longer applies.
        if self.agent.has_agent() {
            self.conversation.drop_no_provider_help();
        }
        if !self.agent.has_agent()
            && !self
                .conversation
                .entries()
                .iter()
                .any(|e| matches!(e, Entry::System(t) if t == NO_PROVIDER_HELP))
        {
            self.conversation
                .push(Entry::System(NO_PROVIDER_HELP.to_owned()));
        }
        self.agent.messages = state.messages;
        self.life.messages_unsaved_from = 0;
        let window = self.agent.usage.context_window;
        let price = self.agent.usage.price;
        self.agent.usage = state.usage;
        self.agent.usage.price = price;
        if window > 0 {
            self.agent.usage.context_window = window;
        }
        for n in state.pending {
            self.agent.inbox.push(n);
        }
        self.input.set_history(state.input_history);
        self.input.set(state.draft);
        self.ui.nav.restore(state.selected, state.scroll);
        self.changes.comments = state.review_comments;
        self.changes.restored_files = state.changed_files;
        if state.resume_turn && self.agent.has_agent() {
            self.conversation
                .push_system("Resuming the interrupted turn.");
            self.start_turn();
        }
    }
}
