//! Typing: the message line (editing, history, sending) and the command palette's keys.

use cp_base::ToolCall;

use super::App;
use crate::conversation::{Entry, NO_PROVIDER_HELP};
use crate::keymap::{Action, KeyContext};
use crate::palette::{Palette, PaletteStep};

impl App {
    pub(super) fn edit_input(&mut self, action: Action) {
        match action {
            Action::Char(':') if self.input.is_empty() => {
                self.modal.palette = Some(Palette::default());
            }
            Action::Char('?') if self.input.is_empty() => {
                self.modal.help = Some(crate::help::Help::new(KeyContext::Text));
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

    pub(super) fn apply_palette(&mut self, action: Action) {
        let tools = self.host.registry().tool_defs();
        let Some(palette) = self.modal.palette.as_mut() else {
            return;
        };
        match palette.apply(action, &tools) {
            PaletteStep::Stay => {}
            PaletteStep::Close => self.modal.palette = None,
            PaletteStep::Run(name, args) => {
                self.modal.palette = None;
                self.run_tools(vec![ToolCall::new("palette", name, args)]);
            }
        }
    }

    pub(super) fn submit_input(&mut self) {
        if self.agent.running() {
            self.ui.flash = Some("The agent is working; Esc cancels the turn.".into());
            return;
        }
        // The run's sessions have the agent (an agent CLI cannot run two at once, and two
        // built-in loops would interleave in the conversation).
        if self.workflow_turn().is_some() {
            self.ui.flash =
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
        self.push_user_text(text);
        self.start_turn();
    }
}
