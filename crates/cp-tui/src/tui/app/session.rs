//! Saving and restoring the session (`state/<worker>/session.json`).

use std::time::Instant;

use cp_base::{Level, lock_module};

use crate::tui::conversation::{Entry, NO_PROVIDER_HELP};

use super::App;

impl App {
    /// What to save of this session.
    pub fn snapshot(&self) -> crate::tui::SessionState {
        let modules = self
            .host
            .registry()
            .modules()
            .iter()
            .filter_map(|m| {
                let m = lock_module(m);
                m.save_state().map(|state| (m.id().to_owned(), state))
            })
            .collect();
        crate::tui::SessionState {
            version: 0,
            conversation: self.conversation.clone(),
            messages: self.agent.messages.clone(),
            input_history: self.input.history().to_vec(),
            draft: self.input.text().to_owned(),
            selected: self.selected.clone(),
            scroll: self
                .views
                .iter()
                .map(|(id, v)| (id.clone(), v.scroll))
                .collect(),
            usage: self.agent.usage,
            pending: self.agent.inbox.snapshot(),
            modules,
            resume_turn: self.stopped_for_reload,
        }
    }

    /// Writes the session to disk; a failure is shown, never fatal.
    pub fn save_session(&mut self) {
        self.last_save = Instant::now();
        let state = self.snapshot();
        if let Err(e) = crate::tui::session::save(self.host.project(), self.host.worker(), &state) {
            tracing::warn!("saving the session failed: {e}");
            self.flash = Some(format!("saving the session failed: {e}"));
        }
    }

    /// Restores the saved session of this worker, if there is one.
    /// `resume` is set after a live reload: only then does an interrupted turn continue.
    pub fn restore_session(&mut self, resume: bool) {
        match crate::tui::session::load(self.host.project(), self.host.worker()) {
            Ok(Some(mut state)) => {
                state.resume_turn &= resume;
                self.apply_session(state);
            }
            Ok(None) => {}
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Warning,
                    text: e,
                });
            }
        }
    }

    pub(super) fn apply_session(&mut self, state: crate::tui::SessionState) {
        let env = self.host.env().clone();
        for module in self.host.registry().modules() {
            let mut module = lock_module(module);
            if let Some(saved) = state.modules.get(module.id()) {
                module.load_state(saved, &env);
            }
        }
        // Keep notices raised while starting (a bad config) after the restored history.
        let fresh = std::mem::take(&mut self.conversation.entries);
        self.conversation = state.conversation;
        self.conversation
            .entries
            .extend(fresh.into_iter().filter(|e| !matches!(e, Entry::System(_))));
        // A provider configured since: the old "no provider" help no longer applies.
        if self.agent.provider.is_some() {
            self.conversation.drop_no_provider_help();
        }
        if self.agent.provider.is_none()
            && !self
                .conversation
                .entries
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
        if !state.selected.is_empty() {
            self.selected = state.selected;
        }
        for (id, scroll) in state.scroll {
            self.views.entry(id).or_default().scroll = scroll;
        }
        if state.resume_turn && self.agent.provider.is_some() {
            self.conversation
                .push_system("Resuming the interrupted turn.");
            self.start_turn();
        }
    }
}
