//! Saving and restoring the TUI's state (`state/<worker>/session.json`).

use cp_base::Level;

use crate::tui::conversation::{Entry, NO_PROVIDER_HELP};
use crate::tui::saved_state::{self, SavedState};

use super::App;

impl App {
    /// What to save of this TUI.
    pub fn saved_state(&self) -> SavedState {
        // Never waits: a module a tool holds gives its last published state.
        let modules = self.host.registry().saved_states();
        SavedState {
            version: 0,
            conversation: self.conversation.clone(),
            messages: self.agent.messages.clone(),
            input_history: self.input.history().to_vec(),
            draft: self.input.text().to_owned(),
            selected: self.ui.nav.selected().to_owned(),
            scroll: self.ui.nav.scrolls(),
            usage: self.agent.usage,
            pending: self.agent.inbox.snapshot(),
            modules,
            resume_turn: self.life.stopped_for_reload,
        }
    }

    /// Writes the saved state to disk; a failure is shown, never fatal.
    pub fn save_state(&mut self) {
        self.life.autosave.saved();
        let state = self.saved_state();
        if let Err(e) = saved_state::save(self.host.project(), self.host.worker(), &state) {
            tracing::warn!("saving the TUI state failed: {e}");
            self.ui.flash = Some(format!("saving the TUI state failed: {e}"));
        }
    }

    /// Restores the saved state of this worker, if there is one.
    /// `resume` is set after a live reload: only then does an interrupted turn continue.
    pub fn restore_saved_state(&mut self, resume: bool) {
        match saved_state::load(self.host.project(), self.host.worker()) {
            Ok(Some(mut state)) => {
                state.resume_turn &= resume;
                self.apply_saved_state(state);
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

    pub(super) fn apply_saved_state(&mut self, state: SavedState) {
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
        if state.resume_turn && self.agent.has_agent() {
            self.conversation
                .push_system("Resuming the interrupted turn.");
            self.start_turn();
        }
    }
}
