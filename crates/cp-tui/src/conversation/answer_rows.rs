//! An agent's answer laid out in pieces, so that streaming into it costs what changed.
//!
//! A streamed token changes the answer's last markdown block only: the blocks before it are
//! finished (`markdown::finished_len`). Their rows are laid out once, kept here as shared
//! pieces, and handed to the layout with the rows of the growing last block, which alone is
//! laid out again. Without this, a token after a 5,000-line code block re-highlighted the
//! whole block. A top-level fenced code block still open is laid out a line at a time: its
//! complete lines join the pieces as they arrive (`markdown::Fence`), and only the line being
//! written is laid out with each token. The pieces of a few answers are kept, those laid out
//! last; a changed width or a text that no longer starts with the kept part starts the
//! answer over.

use std::sync::Arc;

use cp_base::ratatui::text::{Line, Span};
use cp_base::theme;

use crate::conversation::conversation_layout::EntryRows;
use crate::conversation::entry_lines::{INDENT, labelled};
use crate::conversation::wrap::wrap_lines;
use crate::markdown;

/// Answers whose pieces are kept.
const KEPT_ANSWERS: usize = 4;

/// The kept pieces of the answers laid out last, oldest first.
#[derive(Debug, Default)]
pub(crate) struct AnswerRows {
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
    /// The code block `finished` ends inside, still open.
    open: Option<OpenCode>,
}

/// A fenced code block still open at the end of the laid-out part.
#[derive(Debug)]
struct OpenCode {
    fence: markdown::Fence,
    /// Its complete lines so far, with their line feeds.
    code: String,
    /// How many lines `code` holds.
    lines: usize,
}

impl AnswerRows {
    /// The rows of answer `index` (`text`, `width` columns) with the blank row after it: the
    /// kept pieces, then the rest laid out now.
    pub(crate) fn rows(&mut self, index: usize, text: &str, width: u16) -> EntryRows {
        let answer = self.answer(index, text, width);
        if answer.open.is_some() {
            answer.extend_open(text, width);
        }
        if answer.open.is_none() {
            answer.extend_blocks(text, width);
        }
        let rest = &text[answer.finished.len()..];
        let lines = match &answer.open {
            // The code line being written, as the renderer reads it (a blank start or the
            // closing fence shows nothing yet).
            Some(open) => match open.fence.partial_code(rest) {
                Some(partial) => {
                    let code = format!("{}{partial}", open.code);
                    markdown::code_block_lines(&code, &open.fence.language, open.lines)
                }
                None => Vec::new(),
            },
            None => render(answer.has_lines, rest, width.saturating_sub(INDENT)),
        };
        let tail = piece(answer.has_lines, lines, true, width);
        let mut rows = EntryRows::default();
        for piece in &answer.pieces {
            rows.push(Arc::clone(piece));
        }
        rows.push(Arc::from(tail));
        rows
    }

    /// Forgets the pieces of answer `index` (they were laid out with code not yet coloured).
    pub(crate) fn forget(&mut self, index: usize) {
        self.answers.retain(|a| a.index != index);
    }
}

impl Answer {
    /// Lays out the text's finished blocks after the kept part, and opens a fenced code block
    /// that starts where they end.
    fn extend_blocks(&mut self, text: &str, width: u16) {
        let done = self.finished.len();
        // `None`: nothing may be cut (a link reference definition reaches other blocks).
        let Some(more) = markdown::finished_len(&text[done..]) else {
            self.start_over();
            return;
        };
        if more > 0 {
            self.push(&text[done..done + more], width);
        }
        let rest = &text[self.finished.len()..];
        // A carriage return or NUL in the code is rewritten by the renderer: lay it out whole.
        if rest.contains(['\r', '\0']) {
            return;
        }
        if let Some((fence, len)) = markdown::Fence::opening(rest) {
            self.push(&rest[..len], width);
            self.open = Some(OpenCode {
                fence,
                code: String::new(),
                lines: 0,
            });
            self.extend_open(text, width);
        }
    }

    /// Lays out the open code block's complete lines after the kept part, up to its closing
    /// fence.
    fn extend_open(&mut self, text: &str, width: u16) {
        let Some(open) = &mut self.open else {
            return;
        };
        let rest = &text[self.finished.len()..];
        let complete = &rest[..rest.rfind('\n').map_or(0, |i| i + 1)];
        if complete.contains(['\r', '\0']) {
            self.start_over();
            return;
        }
        let mut code_end = 0;
        let mut closed = None;
        for line in complete.split_inclusive('\n') {
            if open.fence.closed_by(&line[..line.len() - 1]) {
                closed = Some(code_end + line.len());
                break;
            }
            code_end += line.len();
        }
        if code_end > 0 {
            let from = open.lines;
            open.code.push_str(&complete[..code_end]);
            open.lines += complete[..code_end].matches('\n').count();
            let lines = markdown::code_block_lines(&open.code, &open.fence.language, from);
            let had = !lines.is_empty();
            self.pieces
                .push(Arc::from(piece(self.has_lines, lines, false, width)));
            self.has_lines |= had;
            self.finished.push_str(&complete[..code_end]);
        }
        if let Some(end) = closed {
            // The block is finished: what follows starts a new one.
            self.finished.push_str(&complete[code_end..end]);
            self.open = None;
        }
    }

    /// Lays out `text`, the next finished part, and keeps it.
    fn push(&mut self, text: &str, width: u16) {
        let lines = render(self.has_lines, text, width.saturating_sub(INDENT));
        let had = !lines.is_empty();
        let rows = piece(self.has_lines, lines, false, width);
        self.has_lines |= had;
        if !rows.is_empty() {
            self.pieces.push(Arc::from(rows));
        }
        self.finished.push_str(text);
    }

    /// Forgets what was laid out: the answer is laid out whole.
    fn start_over(&mut self) {
        self.finished.clear();
        self.pieces.clear();
        self.has_lines = false;
        self.open = None;
    }
}

impl AnswerRows {
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
            open: None,
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
        labelled(&mut out, "agent", theme::SUCCESS, lines);
    }
    if last {
        out.push(Line::default());
    }
    wrap_lines(out, width)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// The answer's rows laid out whole, as an entry that never grew.
    fn whole(text: &str, width: u16) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let body = markdown::render(text, width.saturating_sub(INDENT));
        labelled(&mut out, "agent", theme::SUCCESS, body);
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
            // Fences read a line at a time: blank and indented lines, a longer or other fence
            // inside, a closing fence with spaces, text right after it, one never closed.
            "```rust\n \n    \n\tlet a = 1;\n  ``\n```x\n ```  \nafter\n\n~~~\n```\n~~~~\ndone",
            "````md\n```\ninner\n```\n````\n# next\n\n```\nopen /* never\n\nclosed",
            "Here:\n```rust\nfn a() {}\n```\nThen:\n- item\n```\nx\n```\n> q\n~~~\ny\n~~~\n<div>\n```\nz\n",
            "```py,ignore\nprint(1)\n```\n\n```a`b\nnot a fence\n```\n\n``` rust extra\nfn f() {}\n",
        ] {
            stream(answer, 1, 40);
        }
    }

    #[test]
    fn streaming_into_an_open_fence_lays_out_only_the_new_lines() {
        let mut answer = String::from("Here:\n```rust\n");
        let mut rows = AnswerRows::default();
        rows.rows(3, &answer, 80);
        for i in 0..50 {
            let _ = writeln!(answer, "let row_{i} = {i};");
            rows.rows(3, &answer, 80);
        }
        // The opening piece, then one piece per line as it arrived, all kept.
        let kept = &rows.answers[0];
        assert!(kept.open.is_some());
        assert_eq!(kept.pieces.len(), 2 + 50, "{:?}", kept.pieces.len());
        let got: Vec<_> = rows.rows(3, &answer, 80).iter().cloned().collect();
        assert_eq!(got, whole(&answer, 80));
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
