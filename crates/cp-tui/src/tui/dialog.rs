//! The modal checkpoint dialog: the question, the files to review, the options, feedback.

use std::sync::mpsc::Sender;

use cp_mod_checkpoint::{CheckpointAnswer, CheckpointRequest, PromptError};

use super::input::InputBox;

/// Which part of the dialog has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogFocus {
    Options,
    Files,
    Feedback,
}

/// An open checkpoint waiting for the person's decision.
pub struct CheckpointDialog {
    pub request: CheckpointRequest,
    pub selected: usize,
    pub file: usize,
    pub focus: DialogFocus,
    pub feedback: InputBox,
    /// Hidden while the person looks at files; F2 shows it again.
    pub hidden: bool,
    reply: Sender<Result<CheckpointAnswer, PromptError>>,
}

impl CheckpointDialog {
    pub fn new(
        request: CheckpointRequest,
        reply: Sender<Result<CheckpointAnswer, PromptError>>,
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
        let _ = self.reply.send(Ok(CheckpointAnswer {
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
