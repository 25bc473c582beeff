//! The Conversation panel as a day's session grows: the frame time with 100, 1,000 and
//! 10,000 entries (mixed markdown, code blocks, tool calls with results), with the view at
//! the end, in the middle, and while the last entry streams; and the memory each entry
//! costs once drawn.

use std::time::Instant;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::{Panel, PanelView, ToolResult};
use cp_tui::{Conversation, Entry};

use super::Options;
use super::stats::{Row, fmt, ms};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 50;

/// Entry `i` of a typical session: a question, an answer in markdown (every tenth with a
/// code block), and a tool call with its result.
fn entry(i: usize) -> Entry {
    match i % 3 {
        0 => Entry::User(format!(
            "Step {i}: add the next check to the parser, please."
        )),
        1 if i % 10 == 1 => Entry::Assistant(format!(
            "Added **check {i}** to `parser.rs`:\n\n```rust\nfn check_{i}(input: &str) -> bool {{\n    input.len() > {i} && input.starts_with('x')\n}}\n```\n\n- it runs after the tokenizer\n- the tests cover it"
        )),
        1 => Entry::Assistant(format!(
            "Done with **step {i}**: the parser now rejects empty input, and `cargo test` passes. Next I will *refactor* the error type."
        )),
        _ => Entry::Tool {
            name: "File_write".into(),
            args: format!(r#"{{"file_path":"notes/n{i}.md","content":"…"}}"#),
            result: Some(ToolResult::ok(format!(
                "Created notes/n{i}.md (12 lines, 480 bytes).\nCallback 'lint' passed (run {i}, 0.1s)"
            ))),
            expanded: false,
        },
    }
}

pub fn conversation(entries: usize) -> Conversation {
    let mut c = Conversation::default();
    for i in 0..entries {
        c.push(entry(i));
    }
    c
}

fn frame(c: &Conversation, scroll: usize) -> f64 {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    let view = PanelView {
        scroll,
        ..PanelView::default()
    };
    let t = Instant::now();
    c.render(area, &mut buf, &view);
    ms(t.elapsed())
}

fn rss_kib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

pub fn conversation_growth(opts: &Options) -> Vec<Row> {
    let sizes: &[usize] = if opts.quick {
        &[100, 1_000]
    } else {
        &[100, 1_000, 10_000]
    };
    let frames = if opts.quick { 5 } else { 100 };
    let mut rows = Vec::new();
    let mut at_100 = [f64::NAN; 3];
    for &n in sizes {
        let mut c = conversation(n);
        // The view at the end: the first frame lays out what it shows; the rest reuse it.
        frame(&c, 0);
        let end = Row::new(
            format!("conversation frame, view at the end: {n} entries"),
            "ms",
            (0..frames).map(|_| frame(&c, 0)).collect(),
        );
        // The middle: the scroll range needs every entry's height (laid out once).
        let total = c.scroll_extent(Rect::new(0, 0, WIDTH, HEIGHT)).max;
        frame(&c, total / 2);
        let middle = Row::new(
            format!("conversation frame, view in the middle: {n} entries"),
            "ms",
            (0..frames).map(|_| frame(&c, total / 2)).collect(),
        );
        // Streaming: every frame a token is added to the last entry.
        c.push(Entry::Assistant(String::from("Streaming")));
        let streaming = Row::new(
            format!("conversation frame while the last entry streams: {n} entries"),
            "ms",
            (0..frames)
                .map(|i| {
                    if let Some(Entry::Assistant(text)) = c.last_entry_mut() {
                        text.push_str(if i % 12 == 11 { "\n\n" } else { " token" });
                    }
                    frame(&c, 0)
                })
                .collect(),
        );
        for (k, row) in [end, middle, streaming].into_iter().enumerate() {
            if n == 100 {
                at_100[k] = row.median();
            }
            let ratio = row.median() / at_100[k];
            rows.push(row.note(format!("{}× the 100-entry frame", fmt(ratio))));
        }
    }
    // Memory: RSS before and after building and drawing (end and middle) 10,000 entries.
    let n = if opts.quick { 1_000 } else { 10_000 };
    let before = rss_kib();
    let c = conversation(n);
    frame(&c, 0);
    let total = c.scroll_extent(Rect::new(0, 0, WIDTH, HEIGHT)).max;
    frame(&c, total / 2);
    let after = rss_kib();
    let per_entry = (after - before) / n as f64;
    rows.push(
        Row::new(
            format!("conversation RSS per entry ({n} entries, drawn)"),
            "KiB",
            vec![per_entry],
        )
        .note("VmRSS after building, laying out every entry's height and drawing the end and the middle, less before, ÷ entries; the entries' own text included"),
    );
    drop(c);
    rows
}
