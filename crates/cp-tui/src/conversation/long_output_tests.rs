//! Long output is shown right, not just fast (the bench group `long-output` times it): a
//! 1 MB tool result, a 5,000-line code block, scrolled to the end, the middle and the top.

use std::fmt::Write as _;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::theme;
use cp_base::{Panel, PanelView, ToolResult};

use crate::conversation::{Conversation, Entry};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 30;

fn text_at(conversation: &Conversation, scroll: usize) -> Vec<String> {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    let view = PanelView {
        scroll,
        ..PanelView::default()
    };
    conversation.render(area, &mut buf, &view);
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

fn max_scroll(conversation: &Conversation) -> usize {
    conversation
        .scroll_extent(Rect::new(0, 0, WIDTH, HEIGHT))
        .max
}

/// Numbered lines, about `bytes` long in all.
fn big_result(bytes: usize) -> (String, usize) {
    let mut text = String::new();
    let mut lines = 0;
    while text.len() < bytes {
        let _ = writeln!(text, "line {lines:06} of the big result");
        lines += 1;
    }
    (text, lines)
}

fn tool(text: &str, expanded: bool) -> Entry {
    Entry::Tool {
        name: "File_read".into(),
        args: r#"{"file_path":"big.txt"}"#.into(),
        result: Some(ToolResult::ok(text)),
        expanded,
    }
}

fn has(rows: &[String], needle: &str) -> bool {
    rows.iter().any(|r| r.contains(needle))
}

#[test]
fn a_1_mb_tool_result_is_cut_when_collapsed_and_whole_when_expanded() {
    let (text, lines) = big_result(1_000_000);
    let last = format!("line {:06}", lines - 1);
    let mut conversation = Conversation::default();
    conversation.push(Entry::User("read it".into()));
    conversation.push(tool(&text, false));
    let rows = text_at(&conversation, 0);
    assert!(has(&rows, "line 000005"), "{rows:#?}");
    assert!(!has(&rows, "line 000006"), "{rows:#?}");
    let more = format!("… {} more lines (Ctrl-O expands)", lines - 6);
    assert!(has(&rows, &more), "{rows:#?}");
    assert!(
        max_scroll(&conversation) < 20,
        "collapsed, the result takes a few rows"
    );

    // Expanded, its top is kept in view (Ctrl-O); scrolling follows the offset again.
    conversation.toggle_last_tool();
    assert!(has(&text_at(&conversation, 0), "line 000000"));
    conversation.clear_reveal();
    let max = max_scroll(&conversation);
    assert!(
        max + usize::from(HEIGHT) > lines,
        "every line of the result has a row: {max}"
    );
    assert!(has(&text_at(&conversation, 0), &last));
    // A line in the middle of the result, and the first one at the top.
    let middle = format!("line {:06}", lines / 2);
    let at = (0..=max)
        .step_by(usize::from(HEIGHT) / 2)
        .find(|&s| has(&text_at(&conversation, s), &middle));
    assert!(at.is_some(), "{middle} is reachable");
    let top = text_at(&conversation, max);
    assert!(has(&top, "read it"), "{top:#?}");
    assert!(has(&top, "line 000000"), "{top:#?}");
}

#[test]
fn a_5000_line_code_block_shows_every_line_in_order() {
    let mut answer = String::from("The table:\n\n```rust\n");
    for i in 0..5_000 {
        let _ = writeln!(answer, "let row_{i} = {i};");
    }
    answer.push_str("```\n\nDone.");
    let mut conversation = Conversation::default();
    conversation.push(Entry::Assistant(answer));
    let end = text_at(&conversation, 0);
    assert!(has(&end, "let row_4999 = 4999;"), "{end:#?}");
    assert!(has(&end, "Done."), "{end:#?}");
    let max = max_scroll(&conversation);
    assert!(max + usize::from(HEIGHT) > 5_000, "{max}");
    let top = text_at(&conversation, max);
    assert!(has(&top, "The table:"), "{top:#?}");
    assert!(has(&top, "let row_0 = 0;"), "{top:#?}");
    // Rows a screen apart hold lines a screen apart, in order.
    let middle = text_at(&conversation, max / 2);
    let numbers: Vec<usize> = middle
        .iter()
        .filter_map(|r| r.split("let row_").nth(1))
        .filter_map(|r| r.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(numbers.len(), usize::from(HEIGHT), "{middle:#?}");
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
    assert!((2_000..3_000).contains(&numbers[0]), "{numbers:?}");

    // Text streaming after the block keeps the block whole.
    if let Some(Entry::Assistant(text)) = conversation.last_entry_mut() {
        text.push_str(" And one more thing.");
    }
    let end = text_at(&conversation, 0);
    assert!(has(&end, "And one more thing."), "{end:#?}");
    assert!(has(&end, "let row_4999 = 4999;"), "{end:#?}");
}

/// The panel drawn at the bottom, as a buffer (text and colours).
fn drawn(conversation: &Conversation) -> Buffer {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    conversation.render(area, &mut buf, &PanelView::default());
    buf
}

/// The foreground colours of the cells holding `let` in the rows drawn.
fn code_colours(buf: &Buffer) -> std::collections::HashSet<cp_base::ratatui::style::Color> {
    let mut colours = std::collections::HashSet::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width.saturating_sub(3) {
            let word: String = (x..x + 3).map(|x| buf[(x, y)].symbol()).collect();
            if word == "let" {
                colours.insert(buf[(x, y)].fg);
            }
        }
    }
    colours
}

#[test]
fn a_long_code_block_is_drawn_plain_at_once_then_in_colour() {
    use crate::markdown;

    let mut answer = String::from("Rows:\n\n```rust\n");
    for i in 0..1_500 {
        let _ = writeln!(answer, "let row_{i} = \"{i}\"; // row");
    }
    answer.push_str("```\n\nDone.");
    let mut conversation = Conversation::default();
    conversation.push(Entry::Assistant(answer.clone()));
    let seen = markdown::highlight_generation();
    let first = drawn(&conversation);
    let plain = code_colours(&first);
    assert_eq!(
        plain,
        std::collections::HashSet::from([theme::CODE]),
        "shown in plain code colour until highlighted"
    );
    // The background thread colours it; the next frame lays the entry out again.
    let coloured = drawn_in_colour(&conversation, seen);
    assert_eq!(
        text_of(&coloured),
        text_of(&first),
        "same text, now coloured"
    );
    // Exactly what the entry gives laid out in one go with the block highlighted.
    let mut again = Conversation::default();
    again.push(Entry::Assistant(answer));
    assert_eq!(
        drawn_in_colour(&again, markdown::highlight_generation()),
        coloured
    );
}

/// The panel drawn once its code is coloured: draws again each time the highlighting thread
/// finishes a block, from generation `seen` on.
fn drawn_in_colour(conversation: &Conversation, mut seen: u64) -> Buffer {
    use crate::markdown;

    loop {
        let buf = drawn(conversation);
        if !code_colours(&buf).contains(&theme::CODE) {
            return buf;
        }
        markdown::wait_for_highlight_past(seen);
        seen = markdown::highlight_generation();
    }
}

fn text_of(buf: &Buffer) -> Vec<String> {
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}
