//! The modal approval dialog: the question, the files to review, the options, feedback,
//! and what each key does in it. (Drawing it is `dialog_view.rs`.)

use std::sync::mpsc::Sender;

use cp_orchestrate::{Action as Step, ApprovalAnswer, ApprovalRequest, PromptError};

use crate::input::InputBox;
use crate::keymap::Action;

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
    /// Review the phase's changes in the Changes panel, the dialog hidden meanwhile.
    ReviewChanges,
}

/// Which part of the dialog has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogFocus {
    Options,
    Files,
    Feedback,
}

/// An open approval gate waiting for the person's decision.
pub struct ApprovalDialog {
    pub request: ApprovalRequest,
    pub selected: usize,
    pub file: usize,
    pub focus: DialogFocus,
    pub feedback: InputBox,
    /// Hidden while the person looks at files; F2 shows it again.
    pub hidden: bool,
    /// Enter on an abort option asks first; a second Enter aborts, any other key goes back.
    pub confirm_abort: bool,
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
            confirm_abort: false,
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

    /// The option that repeats the phase with feedback: where review comments go.
    pub fn repeat_choice(&self) -> Option<usize> {
        self.request
            .choices
            .iter()
            .position(|c| c.action == Step::RepeatPhase && c.with_feedback)
    }

    /// Answers with option `choice` (the repeat option) and `feedback` (review comments).
    pub fn answer_with(mut self, choice: usize, feedback: String) {
        self.selected = choice;
        self.feedback.set(feedback);
        self.answer();
    }

    /// Whether the selected choice aborts the run.
    pub fn aborts(&self) -> bool {
        self.request
            .choices
            .get(self.selected)
            .is_some_and(|c| c.action == Step::Abort)
    }

    /// Applies one key.
    pub fn apply(&mut self, action: Action) -> DialogStep {
        if self.confirm_abort {
            self.confirm_abort = false;
            return match action {
                Action::Submit | Action::Yes => DialogStep::Answer,
                Action::Quit => DialogStep::Quit,
                // Any other key is "no": back to the options, the key itself consumed.
                _ => DialogStep::Stay,
            };
        }
        let typing = self.focus == DialogFocus::Feedback;
        match action {
            Action::Quit => return DialogStep::Quit,
            Action::ReviewChanges => return DialogStep::ReviewChanges,
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
            Action::Char(c) if self.focus == DialogFocus::Options && c.is_ascii_digit() => {
                self.select_number(c);
            }
            // Text typed for a choice that takes feedback is feedback, wherever the focus is
            // (after a Tab to the files, say): nothing typed is lost.
            Action::Char(c) if self.needs_feedback() => {
                self.focus = DialogFocus::Feedback;
                self.feedback.insert(c);
            }
            Action::Paste(text) if self.needs_feedback() => {
                self.focus = DialogFocus::Feedback;
                self.feedback.insert_str(&text);
            }
            Action::Char(c) if c.is_ascii_digit() => self.select_number(c),
            Action::Submit => match self.focus {
                DialogFocus::Options if self.needs_feedback() => {
                    self.focus = DialogFocus::Feedback;
                }
                DialogFocus::Files => {
                    let file = self.request.files.get(self.file).cloned();
                    return DialogStep::OpenFile(file.unwrap_or_default());
                }
                DialogFocus::Options | DialogFocus::Feedback if self.aborts() => {
                    self.confirm_abort = true;
                }
                DialogFocus::Options | DialogFocus::Feedback => return DialogStep::Answer,
            },
            _ => {}
        }
        DialogStep::Stay
    }

    /// `1`–`9` picks that option (when there is one).
    fn select_number(&mut self, digit: char) {
        let Some(index) = digit
            .to_digit(10)
            .and_then(|d| usize::try_from(d).ok())
            .and_then(|d| d.checked_sub(1))
        else {
            return;
        };
        if index < self.request.choices.len() {
            self.focus = DialogFocus::Options;
            self.selected = index;
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

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use cp_orchestrate::{ApprovalRequest, Choice};

    use super::*;

    fn request(files: &[&str]) -> ApprovalRequest {
        let choice = |label: &str, with_feedback, action| Choice {
            label: label.into(),
            with_feedback,
            action,
        };
        ApprovalRequest {
            worktree: None,
            base_commit: None,
            run_id: "r".into(),
            phase_id: "review".into(),
            iteration: 1,
            approval: false,
            prompt: "Go on?".into(),
            files: files.iter().map(|f| (*f).to_owned()).collect(),
            choices: vec![
                choice("Done", false, Step::Continue),
                choice("Review again", true, Step::RepeatPhase),
                choice("Abort", false, Step::Abort),
            ],
        }
    }

    type Answers = mpsc::Receiver<Result<ApprovalAnswer, PromptError>>;

    fn dialog(files: &[&str]) -> (ApprovalDialog, Answers) {
        let (tx, rx) = mpsc::channel();
        (ApprovalDialog::new(request(files), tx), rx)
    }

    fn type_text(d: &mut ApprovalDialog, text: &str) {
        for c in text.chars() {
            assert_eq!(d.apply(Action::Char(c)), DialogStep::Stay);
        }
    }

    #[test]
    fn feedback_typed_after_a_tab_to_the_files_is_kept() {
        let (mut d, answers) = dialog(&["plan.md"]);
        d.apply(Action::Down); // "Review again" takes feedback
        d.apply(Action::FocusNext); // the first Tab goes to the files
        assert_eq!(d.focus, DialogFocus::Files);
        type_text(&mut d, "redo step 2");
        assert_eq!(d.focus, DialogFocus::Feedback);
        assert_eq!(d.feedback.text(), "redo step 2");
        // Tab away and back: still there, and more typing appends.
        d.apply(Action::FocusNext);
        assert_eq!(d.focus, DialogFocus::Options);
        type_text(&mut d, " please");
        assert_eq!(d.feedback.text(), "redo step 2 please");
        assert_eq!(d.selected, 1, "typing did not change the choice");
        assert_eq!(d.apply(Action::Submit), DialogStep::Answer);
        d.answer();
        let answer = answers.recv().unwrap().unwrap();
        assert_eq!(answer.choice, 1);
        assert_eq!(answer.feedback.as_deref(), Some("redo step 2 please"));
    }

    #[test]
    fn digits_pick_options_from_the_options_but_are_text_in_the_feedback() {
        let (mut d, _answers) = dialog(&[]);
        d.apply(Action::Char('2'));
        assert_eq!(d.selected, 1);
        d.apply(Action::Submit);
        assert_eq!(d.focus, DialogFocus::Feedback);
        type_text(&mut d, "3 tests");
        assert_eq!(d.feedback.text(), "3 tests");
        assert_eq!(d.selected, 1);
    }

    #[test]
    fn abort_asks_first_and_any_other_key_goes_back() {
        let (mut d, answers) = dialog(&[]);
        d.apply(Action::Char('3'));
        assert_eq!(d.apply(Action::Submit), DialogStep::Stay);
        assert!(d.confirm_abort);
        assert_eq!(d.apply(Action::Back), DialogStep::Stay);
        assert!(!d.confirm_abort && !d.hidden, "Esc went back, not away");
        assert_eq!(d.selected, 2);
        d.apply(Action::Submit);
        assert_eq!(d.apply(Action::Submit), DialogStep::Answer);
        d.answer();
        assert_eq!(answers.recv().unwrap().unwrap().choice, 2);
    }

    #[test]
    fn other_options_answer_at_once() {
        let (mut d, _answers) = dialog(&[]);
        assert_eq!(d.apply(Action::Submit), DialogStep::Answer);
        assert!(!d.confirm_abort);
    }
}
