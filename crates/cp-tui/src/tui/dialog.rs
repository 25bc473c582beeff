//! The modal checkpoint dialog: the question, the files to review, the options, feedback,
//! and what each key does in it. (Drawing it is `view/dialog.rs`.)

use std::sync::mpsc::Sender;

use cp_mod_checkpoint::{ApprovalAnswer, ApprovalRequest, PromptError};

use super::input::InputBox;
use super::keymap::Action;

/// What the app does after a key in the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogStep {
    Stay,
    /// The person asked to quit.
    Quit,
    /// Show this file (relative to the project root) and hide the dialog meanwhile.
    OpenFile(String),
    /// The decision is made: send it with [`ApprovalDialog::answer`].
    Answer,
}

/// Which part of the dialog has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogFocus {
    Options,
    Files,
    Feedback,
}

/// An open checkpoint waiting for the person's decision.
pub struct ApprovalDialog {
    pub request: ApprovalRequest,
    pub selected: usize,
    pub file: usize,
    pub focus: DialogFocus,
    pub feedback: InputBox,
    /// Hidden while the person looks at files; F2 shows it again.
    pub hidden: bool,
    reply: Sender<Result<ApprovalAnswer, PromptError>>,
}

impl ApprovalDialog {
    pub fn new(
        request: ApprovalRequest,
        reply: Sender<Result<ApprovalAnswer, PromptError>>,
    ) -> Self {
        Self {
            request,
            selected: 0,
            file: 0,
            focus: DialogFocus::Options,
            feedback: InputBox::default(),
            hidden: false,
            reply,
        }
    }

    pub fn needs_feedback(&self) -> bool {
        self.request
            .choices
            .get(self.selected)
            .is_some_and(|c| c.with_feedback)
    }

    /// Sends the answer; the dialog is done afterwards.
    pub fn answer(self) {
        let feedback = self
            .needs_feedback()
            .then(|| self.feedback.text().trim().to_owned())
            .filter(|f| !f.is_empty());
        let _ = self.reply.send(Ok(ApprovalAnswer {
            choice: self.selected,
            feedback,
        }));
    }

    pub fn move_selection(&mut self, down: bool) {
        match self.focus {
            DialogFocus::Options => {
                let last = self.request.choices.len().saturating_sub(1);
                self.selected = if down {
                    (self.selected + 1).min(last)
                } else {
                    self.selected.saturating_sub(1)
                };
            }
            DialogFocus::Files => {
                let last = self.request.files.len().saturating_sub(1);
                self.file = if down {
                    (self.file + 1).min(last)
                } else {
                    self.file.saturating_sub(1)
                };
            }
            DialogFocus::Feedback => {}
        }
    }

    /// Applies one key.
    pub fn apply(&mut self, action: Action) -> DialogStep {
        let typing = self.focus == DialogFocus::Feedback;
        match action {
            Action::Quit => return DialogStep::Quit,
            Action::Back => self.hidden = true,
            Action::FocusNext | Action::FocusPrev => self.next_focus(),
            Action::Up => self.move_selection(false),
            Action::Down => self.move_selection(true),
            Action::Char(c) if typing => self.feedback.insert(c),
            Action::Paste(text) if typing => self.feedback.insert_str(&text),
            Action::Backspace if typing => self.feedback.backspace(),
            Action::Newline if typing => self.feedback.insert('\n'),
            Action::Edit(op) if typing => self.feedback.edit(op),
            Action::Left if typing => self.feedback.left(),
            Action::Right if typing => self.feedback.right(),
            Action::Home if typing => self.feedback.home(),
            Action::End if typing => self.feedback.end(),
            Action::Delete if typing => self.feedback.delete(),
            Action::Char(c @ '1'..='9') => {
                let index = (c as usize) - ('1' as usize);
                if index < self.request.choices.len() {
                    self.focus = DialogFocus::Options;
                    self.selected = index;
                }
            }
            Action::Submit => match self.focus {
                DialogFocus::Options if self.needs_feedback() => {
                    self.focus = DialogFocus::Feedback;
                }
                DialogFocus::Files => {
                    let file = self.request.files.get(self.file).cloned();
                    return DialogStep::OpenFile(file.unwrap_or_default());
                }
                DialogFocus::Options | DialogFocus::Feedback => return DialogStep::Answer,
            },
            _ => {}
        }
        DialogStep::Stay
    }

    /// Tab: options → files (if any) → feedback (if the choice takes it) → options.
    pub fn next_focus(&mut self) {
        self.focus = match self.focus {
            DialogFocus::Options if !self.request.files.is_empty() => DialogFocus::Files,
            DialogFocus::Options | DialogFocus::Files if self.needs_feedback() => {
                DialogFocus::Feedback
            }
            _ => DialogFocus::Options,
        };
    }
}
