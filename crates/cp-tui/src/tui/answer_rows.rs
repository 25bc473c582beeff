//! An agent's answer laid out in pieces, so that streaming into it costs what changed.
//!
//! A streamed token changes the answer's last markdown block only: the blocks before it are
//! finished (`markdown::finished_len`). Their rows are laid out once, kept here as shared
//! pieces, and handed to the layout with the rows of the growing last block, which alone is
//! laid out again. Without this, a token after a 5,000-line code block re-highlighted the
//! whole block. The pieces of a few answers are kept, those laid out last; a changed width
//! or a text that no longer starts with the kept part starts the answer over.

use std::sync::Arc;

use cp_base::ratatui::style::Color;
use cp_base::ratatui::text::{Line, Span};

use super::conversation_layout::EntryRows;
use super::entry_lines::{INDENT, labelled};
use super::markdown;
use super::wrap::wrap_lines;

/// Answers whose pieces are kept.
const KEPT_ANSWERS: usize = 4;

/// The kept pieces of the answers laid out last, oldest first.
#[derive(Debug, Default)]
pub(super) struct AnswerRows {
    answers: Vec<Answer>,
}

/// The finished part of one answer, laid out.
#[derive(Debug)]
struct Answer {
    index: usize,
    width: u16,
    /// The answer's text the pieces were laid out from.
    finished: String,
    /// Its rows (wrapped, labelled), in the order they were laid out.
    pieces: Vec<Arc<[Line<'static>]>>,
    /// Whether the pieces hold a line of the body (the label is on the first).
    has_lines: bool,
}

impl AnswerRows {
    /// The rows of answer `index` (`text`, `width` columns) with the blank row after it: the
    /// kept pieces, then the rest laid out now.
    pub(super) fn rows(&mut self, index: usize, text: &str, width: u16) -> EntryRows {
        let answer = self.answer(index, text, width);
        let body_width = width.saturating_sub(INDENT);
        let mut done = answer.finished.len();
        match markdown::finished_len(&text[done..]) {
            Some(more) if more > 0 => {
                let lines = render(answer.has_lines, &text[done..done + more], body_width);
                let had = !lines.is_empty();
                let rows = piece(answer.has_lines, lines, false, width);
                answer.has_lines |= had;
                answer.pieces.push(Arc::from(rows));
                answer.finished.push_str(&text[done..done + more]);
                done += more;
            }
            Some(_) => {}
            // Nothing may be cut (a link reference definition reaches other blocks).
            None => {
                answer.finished.clear();
                answer.pieces.clear();
                answer.has_lines = false;
                done = 0;
            }
        }
        let lines = render(answer.has_lines, &text[done..], body_width);
        let tail = piece(answer.has_lines, lines, true, width);
        let mut rows = EntryRows::default();
        for piece in &answer.pieces {
            rows.push(Arc::clone(piece));
        }
        rows.push(Arc::from(tail));
        rows
    }

    /// Forgets the pieces of answer `index` (they were laid out with code not yet coloured).
    pub(super) fn forget(&mut self, index: usize) {
        self.answers.retain(|a| a.index != index);
    }

    /// The kept answer `index`, or a new one (forgetting the oldest beyond the bound) when
    /// there is none for this width and text.
    fn answer(&mut self, index: usize, text: &str, width: u16) -> &mut Answer {
        let found = self.answers.iter().position(|a| a.index == index);
        if let Some(at) = found {
            let answer = self.answers.remove(at);
            if answer.width == width && text.starts_with(answer.finished.as_str()) {
                self.answers.push(answer);
                return self.newest();
            }
        }
        if self.answers.len() >= KEPT_ANSWERS {
            self.answers.remove(0);
        }
        self.answers.push(Answer {
            index,
            width,
            finished: String::new(),
            pieces: Vec::new(),
            has_lines: false,
        });
        self.newest()
    }

    fn newest(&mut self) -> &mut Answer {
        let last = self.answers.len() - 1;
        &mut self.answers[last]
    }
}

/// The markdown `text` that follows the pieces laid out before (`after_lines` when those
/// hold a line, so its first block starts after a blank line).
fn render(after_lines: bool, text: &str, width: u16) -> Vec<Line<'static>> {
    if after_lines {
        markdown::render_after_blocks(text, width)
    } else {
        markdown::render(text, width)
    }
}

/// The rows of rendered `lines` that follow the pieces laid out before (`after_lines` when
/// those hold a line): the first line carries the label, later ones are indented. `last`
/// adds the blank row that ends the entry.
fn piece(
    after_lines: bool,
    lines: Vec<Line<'static>>,
    last: bool,
    width: u16,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if after_lines {
        out.extend(lines);
        for line in &mut out {
            line.spans.insert(0, Span::raw("  "));
        }
    } else if !lines.is_empty() || last {
        labelled(&mut out, "agent", Color::Green, lines);
    }
    if last {
        out.push(Line::default());
    }
    wrap_lines(out, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's rows laid out whole, as an entry that never grew.
    fn whole(text: &str, width: u16) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let body = markdown::render(text, width.saturating_sub(INDENT));
        labelled(&mut out, "agent", Color::Green, body);
        out.push(Line::default());
        wrap_lines(out, width)
    }

    const ANSWER: &str = "# Plan\n\nFirst **bold** and `code`, a long line that wraps at \
        the width of the panel.\n\n- one\n- two\n  continued\n\n1. first\n2. second\n\n\
        > quoted\n> more\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n| a | b |\n|---|---|\n\
        | 1 | 2 |\n\n---\n\nTitle\n=====\n\n    indented code\n\n<div>html</div>\n\nThe end.";

    /// Streams `answer` into an entry `step` bytes at a time; after each step the rows must
    /// be those of the text laid out whole. Returns how many pieces were kept at the end.
    fn stream(answer: &str, step: usize, width: u16) -> usize {
        let mut rows = AnswerRows::default();
        let mut end = 0;
        while end < answer.len() {
            end = (end + step).min(answer.len());
            while !answer.is_char_boundary(end) {
                end += 1;
            }
            let text = &answer[..end];
            let got: Vec<Line<'static>> = rows.rows(7, text, width).iter().cloned().collect();
            assert_eq!(
                got,
                whole(text, width),
                "after {end} bytes at width {width}:\n{text}"
            );
        }
        rows.answers[0].pieces.len()
    }

    #[test]
    fn an_answer_grown_piece_by_piece_lays_out_as_a_whole_one() {
        for width in [30, 80] {
            for step in [1, 3, 7] {
                let pieces = stream(ANSWER, step, width);
                // The finished blocks were kept, not laid out again.
                assert!(pieces > 5, "{pieces} pieces");
            }
        }
        // Lines that change what they are as they are written: a list that goes on after a
        // blank line, an ATX heading that is not one, a setext underline, a table's header,
        // an unclosed fence, a quote's lazy line.
        for answer in [
            "1. a\n\n2\n\n2. b\n\n10. c\n\nend",
            "- a\n\n-\n\n- b\n\n* c\n\ndone",
            "para\n#hashtag\n\n# real\n\nafter",
            "para\n---\n\nnext\n===\n\nlast",
            "intro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter",
            "text\n\n```\nopen fence\n\nstill code\n```\n\nout",
            "> quote\nlazy line\n\n> next\n\nplain",
            "<!--\n\ncomment\n\n-->\n\nafter",
            "- x\n\n-5 degrees\n\n1. y\n\n1.5 more\n\n* z\n\n**bold**\n\n+ w\n\n+1 vote",
        ] {
            stream(answer, 1, 40);
        }
    }

    #[test]
    fn the_block_after_a_long_code_block_does_not_lay_it_out_again() {
        let code = "```rust\nfn main() {}\n```\n\nThat is all";
        assert_eq!(
            markdown::finished_len(code),
            Some(code.find("That").unwrap_or(0))
        );
        // The number could still be the list's next item.
        let list = "1. a\n\n2";
        assert_eq!(markdown::finished_len(list), Some(0));
    }

    #[test]
    fn a_changed_text_or_width_starts_the_answer_over() {
        let mut rows = AnswerRows::default();
        let first: Vec<_> = rows.rows(0, ANSWER, 80).iter().cloned().collect();
        assert_eq!(first, whole(ANSWER, 80));
        let edited = ANSWER.replacen("Plan", "Other plan", 1);
        let got: Vec<_> = rows.rows(0, &edited, 80).iter().cloned().collect();
        assert_eq!(got, whole(&edited, 80));
        let narrow: Vec<_> = rows.rows(0, &edited, 40).iter().cloned().collect();
        assert_eq!(narrow, whole(&edited, 40));
        // A reference definition reaches back into finished blocks: the answer is laid out whole.
        let linked = "See [the docs][d].\n\nMore.\n\n[d]: https://example.com\n";
        let got: Vec<_> = rows.rows(0, linked, 80).iter().cloned().collect();
        assert_eq!(got, whole(linked, 80));
        // Only a few answers are kept.
        for index in 1..10 {
            rows.rows(index, "Short.\n\nAnswer.", 80);
        }
        assert_eq!(rows.answers.len(), KEPT_ANSWERS);
    }
}
