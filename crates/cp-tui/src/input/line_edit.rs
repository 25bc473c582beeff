//! A unicode-aware text editor for the TUI's text fields (message, palette, dialog feedback):
//! the cursor moves by grapheme cluster, words are runs of letters and digits in any script,
//! and the readline keys people type without thinking work (see [`EditOp`]).
//!
//! ```ignore
//! let mut e = LineEdit::default();
//! e.apply(EditOp::InsertStr("hello wide world".into()));
//! e.apply(EditOp::KillWordBack);            // Ctrl-W
//! assert_eq!(e.text(), "hello wide ");
//! ```

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// One editing command, independent of the key that asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    Insert(char),
    InsertStr(String),
    /// Backspace: the grapheme before the cursor.
    Backspace,
    /// Delete: the grapheme under the cursor.
    Delete,
    Left,
    Right,
    /// Alt-B, Ctrl-Left: to the start of this or the previous word.
    WordLeft,
    /// Alt-F, Ctrl-Right: to the end of this or the next word.
    WordRight,
    /// Home, Ctrl-A: the start of the cursor's line.
    LineStart,
    /// End, Ctrl-E: the end of the cursor's line.
    LineEnd,
    /// Ctrl-U: delete from the start of the line to the cursor.
    KillToLineStart,
    /// Ctrl-K: delete from the cursor to the end of the line (at its end: the line break).
    KillToLineEnd,
    /// Ctrl-W: delete the whitespace-separated word before the cursor.
    KillWordBack,
    /// Alt-Backspace: delete the word (letters and digits) before the cursor.
    KillAlnumWordBack,
    /// Alt-D: delete to the end of the next word.
    KillWordForward,
    /// Ctrl-Y: insert the text the last kill removed.
    Yank,
}

/// Text with a cursor. The cursor is a byte offset that always sits on a grapheme boundary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    text: String,
    cursor: usize,
    /// What the last kill removed, for Ctrl-Y.
    killed: String,
}

impl LineEdit {
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text before the cursor.
    pub fn before_cursor(&self) -> &str {
        &self.text[..self.cursor]
    }

    /// The cursor in chars from the start.
    #[cfg(test)]
    pub fn cursor_chars(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    /// The cursor's line (0-based) and its column in terminal cells.
    pub fn cursor_row_col(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let row = before.matches('\n').count();
        let line = before.rsplit('\n').next().unwrap_or_default();
        (row, line.width())
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cursor = self.text.len();
    }

    /// Takes the text out, leaving the editor empty.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Applies one command. Returns whether the text or the cursor changed.
    pub fn apply(&mut self, op: EditOp) -> bool {
        let before = (self.text.len(), self.cursor);
        match op {
            EditOp::Insert(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            EditOp::InsertStr(s) => {
                // Terminals send CR for newlines in pastes; keep text in LF form.
                let s = s.replace("\r\n", "\n").replace('\r', "\n");
                self.insert(&s);
            }
            EditOp::Backspace => {
                let start = self.prev_boundary(self.cursor);
                self.remove(start, self.cursor, false);
            }
            EditOp::Delete => {
                let end = self.next_boundary(self.cursor);
                self.remove(self.cursor, end, false);
            }
            EditOp::Left => self.cursor = self.prev_boundary(self.cursor),
            EditOp::Right => self.cursor = self.next_boundary(self.cursor),
            EditOp::WordLeft => self.cursor = self.word_start(self.cursor, is_word_char),
            EditOp::WordRight => self.cursor = self.word_end(self.cursor),
            EditOp::LineStart => self.cursor = self.line_start(),
            EditOp::LineEnd => self.cursor = self.line_end(),
            EditOp::KillToLineStart => self.remove(self.line_start(), self.cursor, true),
            EditOp::KillToLineEnd => {
                let end = self.line_end();
                // At the end of a line, Ctrl-K joins the next line, as in Emacs.
                let end = if end == self.cursor {
                    self.next_boundary(end)
                } else {
                    end
                };
                self.remove(self.cursor, end, true);
            }
            EditOp::KillWordBack => {
                let start = self.word_start(self.cursor, |c| !c.is_whitespace());
                self.remove(start, self.cursor, true);
            }
            EditOp::KillAlnumWordBack => {
                let start = self.word_start(self.cursor, is_word_char);
                self.remove(start, self.cursor, true);
            }
            EditOp::KillWordForward => {
                let end = self.word_end(self.cursor);
                self.remove(self.cursor, end, true);
            }
            EditOp::Yank => {
                let killed = self.killed.clone();
                self.insert(&killed);
            }
        }
        before != (self.text.len(), self.cursor)
    }

    fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Removes `start..end`; a kill keeps what it removed for Ctrl-Y.
    fn remove(&mut self, start: usize, end: usize, kill: bool) {
        if start >= end {
            return;
        }
        let removed: String = self.text.drain(start..end).collect();
        if kill {
            self.killed = removed;
        }
        self.cursor = start;
    }

    fn prev_boundary(&self, at: usize) -> usize {
        self.text[..at]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> usize {
        self.text[at..]
            .graphemes(true)
            .next()
            .map_or(at, |g| at + g.len())
    }

    /// Back over non-word graphemes, then over word graphemes (as `is_word` says of their
    /// first char, so a letter with combining accents is one letter).
    fn word_start(&self, at: usize, is_word: impl Fn(char) -> bool) -> usize {
        let word = |g: &str| g.chars().next().is_some_and(&is_word);
        let mut graphemes = self.text[..at].grapheme_indices(true).rev().peekable();
        let mut start = at;
        while let Some(&(i, g)) = graphemes.peek() {
            if word(g) {
                break;
            }
            start = i;
            graphemes.next();
        }
        for (i, g) in graphemes {
            if !word(g) {
                break;
            }
            start = i;
        }
        start
    }

    /// Forward over non-word graphemes, then over word graphemes.
    fn word_end(&self, at: usize) -> usize {
        let mut end = at;
        let mut seen_word = false;
        for (i, g) in self.text[at..].grapheme_indices(true) {
            if g.chars().next().is_some_and(is_word_char) {
                seen_word = true;
            } else if seen_word {
                break;
            }
            end = at + i + g.len();
        }
        end
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }
}

/// Letters and digits of any script, and `_`, make words.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn editor(text: &str) -> LineEdit {
        let mut e = LineEdit::default();
        e.set(text);
        e
    }

    #[test]
    fn ctrl_w_deletes_the_word_before_the_cursor_and_ctrl_y_brings_it_back() {
        let mut e = editor("run the tests now");
        assert!(e.apply(EditOp::KillWordBack));
        assert_eq!(e.text(), "run the tests ");
        e.apply(EditOp::KillWordBack);
        assert_eq!(e.text(), "run the ");
        e.apply(EditOp::Yank);
        assert_eq!(e.text(), "run the tests ");
        // Ctrl-W takes a whole path; Alt-Backspace only its last part.
        let mut e = editor("open src/tui/app.rs");
        e.apply(EditOp::KillAlnumWordBack);
        assert_eq!(e.text(), "open src/tui/app.");
        e.apply(EditOp::KillWordBack);
        assert_eq!(e.text(), "open ");
        assert!(!editor("").apply(EditOp::KillWordBack));
    }

    #[test]
    fn words_lines_and_kills_are_unicode_aware() {
        let mut e = editor("grüße 世界 e\u{301}t\u{e9}");
        e.apply(EditOp::Left);
        e.apply(EditOp::Left);
        // One step over a base letter and its combining accent.
        e.apply(EditOp::Left);
        assert_eq!(e.cursor_chars(), "grüße 世界 ".chars().count());
        e.apply(EditOp::WordLeft);
        assert_eq!(e.cursor_chars(), "grüße ".chars().count());
        assert_eq!(e.cursor_row_col(), (0, 6));
        e.apply(EditOp::WordRight);
        assert_eq!(e.cursor_row_col(), (0, 10), "wide chars take two cells");
        e.apply(EditOp::KillToLineStart);
        assert_eq!(e.text(), " e\u{301}t\u{e9}");
        e.apply(EditOp::KillToLineEnd);
        assert_eq!(e.text(), "");
        e.apply(EditOp::Yank);
        e.apply(EditOp::LineStart);
        e.apply(EditOp::KillWordForward);
        assert_eq!(e.text(), "");
    }

    #[test]
    fn line_keys_work_on_the_cursors_line_of_a_multi_line_text() {
        let mut e = editor("first\nsecond line");
        e.apply(EditOp::LineStart);
        assert_eq!(e.cursor_row_col(), (1, 0));
        e.apply(EditOp::Left);
        e.apply(EditOp::LineStart);
        e.apply(EditOp::KillToLineEnd);
        assert_eq!(e.text(), "\nsecond line");
        e.apply(EditOp::KillToLineEnd);
        assert_eq!(
            e.text(),
            "second line",
            "at a line end Ctrl-K joins the lines"
        );
        e.apply(EditOp::LineEnd);
        e.apply(EditOp::InsertStr("\r\nthird".into()));
        assert_eq!(e.text(), "second line\nthird");
        assert!(e.on_last_line() && !e.on_first_line());
    }
}
