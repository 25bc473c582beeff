//! A multi-line text field with a cursor and a history of submitted entries. Editing is
//! [`LineEdit`]'s; this adds the history that Up and Down browse.

pub(crate) mod input_view;
pub(crate) mod line_edit;

use crate::input::line_edit::{EditOp, LineEdit};

/// Editable text with a history of what was submitted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputBox {
    editor: LineEdit,
    history: Vec<String>,
    /// Position while browsing history; `None` when editing a fresh draft.
    browsing: Option<usize>,
    /// The draft put aside while browsing history.
    stash: String,
}

impl InputBox {
    pub fn text(&self) -> &str {
        self.editor.text()
    }

    pub fn is_empty(&self) -> bool {
        self.text().is_empty()
    }

    /// The text before the cursor.
    pub fn before_cursor(&self) -> &str {
        self.editor.before_cursor()
    }

    /// The cursor's line and its column in terminal cells.
    pub fn cursor_row_col(&self) -> (usize, usize) {
        self.editor.cursor_row_col()
    }

    pub fn set(&mut self, text: impl Into<String>) {
        self.editor.set(text);
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    pub fn set_history(&mut self, history: Vec<String>) {
        self.history = history;
    }

    /// Applies an editing command (the readline keys and the plain ones).
    pub fn edit(&mut self, op: EditOp) {
        self.editor.apply(op);
    }

    pub fn insert(&mut self, c: char) {
        self.edit(EditOp::Insert(c));
    }

    pub fn insert_str(&mut self, s: &str) {
        self.edit(EditOp::InsertStr(s.to_owned()));
    }

    pub fn backspace(&mut self) {
        self.edit(EditOp::Backspace);
    }

    pub fn delete(&mut self) {
        self.edit(EditOp::Delete);
    }

    pub fn left(&mut self) {
        self.edit(EditOp::Left);
    }

    pub fn right(&mut self) {
        self.edit(EditOp::Right);
    }

    pub fn home(&mut self) {
        self.edit(EditOp::LineStart);
    }

    pub fn end(&mut self) {
        self.edit(EditOp::LineEnd);
    }

    /// Takes the text for submission and records it in the history.
    pub fn submit(&mut self) -> String {
        let text = self.editor.take();
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Older history entry (Up).
    pub fn history_prev(&mut self) {
        let next = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.stash = self.text().to_owned();
                self.history.len() - 1
            }
            Some(0) => 0,
            Some(i) => i - 1,
        };
        self.browsing = Some(next);
        let entry = self.history[next].clone();
        self.set(entry);
    }

    /// Newer history entry, back to the draft at the end (Down).
    pub fn history_next(&mut self) {
        let Some(i) = self.browsing else { return };
        if i + 1 < self.history.len() {
            self.browsing = Some(i + 1);
            let entry = self.history[i + 1].clone();
            self.set(entry);
        } else {
            self.browsing = None;
            let draft = std::mem::take(&mut self.stash);
            self.set(draft);
        }
    }

    /// Whether the cursor is on the first line (Up then browses history).
    pub fn on_first_line(&self) -> bool {
        self.editor.on_first_line()
    }

    pub fn on_last_line(&self) -> bool {
        self.editor.on_last_line()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_multibyte_text_and_lines() {
        let mut b = InputBox::default();
        for c in "héllo".chars() {
            b.insert(c);
        }
        b.left();
        b.backspace();
        assert_eq!(b.text(), "hélo");
        b.insert_str("\r\nx");
        assert_eq!(b.text(), "hél\nxo");
        b.home();
        assert_eq!(b.cursor_row_col(), (1, 0));
        b.end();
        assert_eq!(b.cursor_row_col(), (1, 2));
        assert!(!b.on_first_line() && b.on_last_line());
    }

    #[test]
    fn history_browses_and_restores_the_draft() {
        let mut b = InputBox::default();
        b.set("one");
        b.submit();
        b.set("two");
        b.submit();
        b.set("draft");
        b.history_prev();
        assert_eq!(b.text(), "two");
        b.history_prev();
        b.history_prev();
        assert_eq!(b.text(), "one");
        b.history_next();
        b.history_next();
        assert_eq!(b.text(), "draft");
    }
}
