//! `/` search within the selected panel: the query being typed or last confirmed. Finding
//! is the panel's job ([`cp_base::Panel::find`]); the app jumps between what it finds, and
//! the view highlights the query on screen.

pub(crate) mod search_view;

use crate::input::line_edit::{EditOp, LineEdit};
use crate::keymap::Action;

/// The search prompt's state.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub query: LineEdit,
    /// The prompt has the keys (before Enter).
    pub editing: bool,
}

/// What a key did to the search prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptStep {
    Stay,
    /// Enter: find the query.
    Find,
    /// Esc: forget the search.
    Cancel,
}

impl Search {
    /// A prompt open for typing.
    pub fn open() -> Self {
        Self {
            query: LineEdit::default(),
            editing: true,
        }
    }

    /// Applies a key while the prompt has the keys.
    pub fn apply(&mut self, action: Action) -> PromptStep {
        let op = match action {
            Action::Submit => {
                self.editing = false;
                return PromptStep::Find;
            }
            Action::Back => return PromptStep::Cancel,
            Action::Char(c) => EditOp::Insert(c),
            Action::Paste(text) => EditOp::InsertStr(text.replace(['\r', '\n'], " ")),
            Action::Backspace => EditOp::Backspace,
            Action::Delete => EditOp::Delete,
            Action::Left => EditOp::Left,
            Action::Right => EditOp::Right,
            Action::Home => EditOp::LineStart,
            Action::End => EditOp::LineEnd,
            Action::Edit(op) => op,
            _ => return PromptStep::Stay,
        };
        self.query.apply(op);
        PromptStep::Stay
    }

    /// The query, when there is one to find or highlight.
    pub fn text(&self) -> Option<&str> {
        Some(self.query.text()).filter(|q| !q.is_empty())
    }
}

/// The offset to jump to among `offsets` (ascending) from `current`: `next` goes away from
/// the panel's resting end (up in a console), otherwise back towards it. `from_here` lets a
/// match at the current offset count (the first jump after Enter).
pub fn pick(offsets: &[usize], current: usize, next: bool, from_here: bool) -> Option<usize> {
    if next {
        offsets
            .iter()
            .copied()
            .find(|&o| o > current || (from_here && o == current))
    } else {
        offsets.iter().copied().rev().find(|&o| o < current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_go_one_match_at_a_time_and_stop_at_the_ends() {
        let offsets = [0, 4, 9];
        assert_eq!(pick(&offsets, 0, true, true), Some(0));
        assert_eq!(pick(&offsets, 0, true, false), Some(4));
        assert_eq!(pick(&offsets, 4, true, false), Some(9));
        assert_eq!(pick(&offsets, 9, true, false), None);
        assert_eq!(pick(&offsets, 9, false, false), Some(4));
        assert_eq!(pick(&offsets, 0, false, false), None);
        assert_eq!(pick(&[], 0, true, true), None);
    }

    #[test]
    fn the_prompt_edits_and_enter_finds() {
        let mut search = Search::open();
        for c in "errr".chars() {
            assert_eq!(search.apply(Action::Char(c)), PromptStep::Stay);
        }
        search.apply(Action::Backspace);
        assert_eq!(search.text(), Some("err"));
        assert_eq!(search.apply(Action::Submit), PromptStep::Find);
        assert!(!search.editing);
        assert_eq!(Search::open().apply(Action::Back), PromptStep::Cancel);
        assert_eq!(Search::open().text(), None);
    }
}
