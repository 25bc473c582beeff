//! Where the finished part of a markdown text ends, so an answer that streams in can be laid
//! out in pieces: its finished blocks once, the growing rest again as it grows
//! (`conversation/answer_rows.rs`).
//!
//! The text is cut only at the start of a top-level block that follows a blank line and
//! whose first line says it does not continue the block before it. Text appended later
//! cannot change what is before such a cut: no container is open there, a paragraph does
//! not continue across a blank line, and the only block that goes on after one, a list,
//! goes on with an item, which the first line, as far as it is written, cannot become. A
//! top-level fenced code block whose opening line is complete is a cut too, after a blank
//! line or not: it ends any block before it, and nothing later changes that. Each piece then
//! renders alone as it does in the whole text, with the one blank line the writer puts
//! between top-level blocks. A link reference definition (`[name]: url`) reaches links in
//! other blocks: a text with one is never cut.

use pulldown_cmark::{Event, Parser};

use super::fence::Fence;
use super::writer::OPTIONS;

/// The length in bytes of the finished part of `text` (0 when nothing is finished yet);
/// `None` when the text must not be cut at all.
pub fn finished_len(text: &str) -> Option<usize> {
    if has_reference_definition(text) {
        return None;
    }
    let mut depth = 0usize;
    let mut cuts = Vec::new();
    let mut block_start = |start: usize| {
        let line = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let on_own_line = text[line..start].chars().all(|c| c == ' ' || c == '\t');
        // The line before it (without its line feed) is blank.
        let blank_before = line > 0 && {
            let before = &text[..line - 1];
            before[before.rfind('\n').map_or(0, |i| i + 1)..]
                .trim()
                .is_empty()
        };
        // A fenced code block ends the block before it, blank line or not: once its opening
        // line is complete, nothing written later can make it anything else.
        let fence = Fence::opening(&text[line..]).is_some();
        if on_own_line && (blank_before || fence) {
            cuts.push(line);
        }
    };
    for (event, range) in Parser::new_ext(text, OPTIONS).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    block_start(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 => block_start(range.start),
            _ => {}
        }
    }
    // The last block's first line, still being written, may yet become the next item of a
    // list before it (`2` → `2. b`): then it is not a place to cut.
    if cuts
        .last()
        .is_some_and(|&cut| !text[cut..].contains('\n') && may_become_item(&text[cut..]))
    {
        cuts.pop();
    }
    Some(cuts.last().copied().unwrap_or(0))
}

/// Whether an unfinished first line may still become a list item's marker line: it is
/// blank, or a bullet or a number alone (`-`, `*`, `+`, `12`, `12.`, `12)`).
fn may_become_item(line: &str) -> bool {
    let line = line.trim_start();
    let number = line.trim_end_matches(['.', ')']);
    matches!(line, "" | "-" | "*" | "+")
        || (!number.is_empty()
            && number.len() <= 9
            && number.bytes().all(|b| b.is_ascii_digit())
            && line.len() - number.len() <= 1)
}

/// Whether a line of `text` may be a link reference definition (`[name]: url`, perhaps inside
/// a quote or a list item).
fn has_reference_definition(text: &str) -> bool {
    text.lines().any(|line| {
        line.contains("]:")
            && line
                .trim_start_matches(|c: char| {
                    c.is_ascii_whitespace()
                        || c.is_ascii_digit()
                        || matches!(c, '>' | '-' | '*' | '+' | '.' | ')')
                })
                .starts_with('[')
    })
}
