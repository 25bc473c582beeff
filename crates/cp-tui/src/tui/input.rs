//! A multi-line text field with a cursor and a history of submitted entries.

/// Editable text; the cursor is a char index into `text`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputBox {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Position while browsing history; `None` when editing a fresh draft.
    browsing: Option<usize>,
    /// The draft put aside while browsing history.
    stash: String,
}

impl InputBox {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Cursor position in chars.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn set(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cursor = self.text.chars().count();
    }

    pub fn history(&self) -> &[String] {
        &self.history
    }

    pub fn set_history(&mut self, history: Vec<String>) {
        self.history = history;
    }

    fn byte_at(&self, char_index: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_index)
            .map_or(self.text.len(), |(i, _)| i)
    }

    pub fn insert(&mut self, c: char) {
        let at = self.byte_at(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    pub fn insert_str(&mut self, s: &str) {
        // Terminals send CR for newlines in pastes; keep text in LF form.
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let at = self.byte_at(self.cursor);
        self.text.insert_str(at, &s);
        self.cursor += s.chars().count();
    }

    pub fn backspace(&mut self) {
        if self.cursor == 0 {
            return;
        }
        self.cursor -= 1;
        let at = self.byte_at(self.cursor);
        self.text.remove(at);
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.chars().count() {
            let at = self.byte_at(self.cursor);
            self.text.remove(at);
        }
    }

    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.text.chars().count());
    }

    pub fn home(&mut self) {
        let before: String = self.text.chars().take(self.cursor).collect();
        self.cursor = before
            .rfind('\n')
            .map_or(0, |i| before[..=i].chars().count());
    }

    pub fn end(&mut self) {
        let after: String = self.text.chars().skip(self.cursor).collect();
        self.cursor += after
            .find('\n')
            .map_or(after.chars().count(), |i| after[..i].chars().count());
    }

    /// Takes the text for submission and records it in the history.
    pub fn submit(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
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
                self.stash = self.text.clone();
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
        !self.text.chars().take(self.cursor).any(|c| c == '\n')
    }

    pub fn on_last_line(&self) -> bool {
        !self.text.chars().skip(self.cursor).any(|c| c == '\n')
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
        assert_eq!(b.cursor(), 4);
        b.end();
        assert_eq!(b.cursor(), 6);
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
