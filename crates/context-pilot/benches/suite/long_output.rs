//! Long output: a tool result of 1 MB, a conversation with a 5,000-line code block, and a
//! console with 10,000 lines of wide coloured text. Reports the first frame (which lays out
//! or parses what is new) and the frames after it, at the end and in the middle.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::{Panel, PanelView, ToolResult};
use cp_mod_console::TermScreen;
use cp_tui::{Conversation, Entry};

use super::Options;
use super::stats::{Row, ms};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 50;

/// A tool result of about `bytes` bytes: numbered lines of source-like text.
pub fn big_result(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 100);
    let mut i = 0;
    while text.len() < bytes {
        let _ = writeln!(
            text,
            "{i:>6}\tlet value_{i} = compute(input, {i}) + offset; // keep the sum in range"
        );
        i += 1;
    }
    text
}

/// An answer holding one fenced Rust block of `lines` lines.
pub fn code_block_answer(lines: usize) -> String {
    let mut text = String::from("Here is the generated table:\n\n```rust\n");
    for i in 0..lines {
        let _ = writeln!(
            text,
            "    Entry {{ id: {i}, name: \"row_{i}\", weight: {i}.5, tags: &[\"a\", \"b\"] }},"
        );
    }
    text.push_str("```\n\nThat is all of it.");
    text
}

/// `lines` lines of wide (220 columns) text in 8 colours.
pub fn coloured_lines(lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..lines {
        let colour = 31 + i % 7;
        let word = format!("\x1b[{colour}mline {i:>5} \x1b[1mbold\x1b[22m");
        // `line NNNNN bold` is 15 columns; each word 5 more: 220 in all.
        let mut line = word.clone();
        for _ in 0..41 {
            line.push_str(" \x1b[0;3");
            line.push_str(&(i % 8).to_string());
            line.push_str("mtext");
        }
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\x1b[0m\r\n");
    }
    out
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

/// First frame, then frames at the end and in the middle, of a conversation ending in `last`.
fn conversation_rows(label: &str, last: Entry, frames: usize) -> Vec<Row> {
    let mut c = Conversation::default();
    c.push(Entry::User("Show me the output.".into()));
    c.push(last);
    let first = frame(&c, 0);
    let end: Vec<f64> = (0..frames).map(|_| frame(&c, 0)).collect();
    let total = c.scroll_extent(Rect::new(0, 0, WIDTH, HEIGHT)).max;
    frame(&c, total / 2);
    let middle: Vec<f64> = (0..frames).map(|_| frame(&c, total / 2)).collect();
    vec![
        Row::new(format!("{label}: first frame"), "ms", vec![first])
            .note("lays out (and highlights) the entry once"),
        Row::new(format!("{label}: frame at the end"), "ms", end),
        Row::new(format!("{label}: frame in the middle"), "ms", middle),
    ]
}

pub fn long_output(opts: &Options) -> Vec<Row> {
    let frames = if opts.quick { 5 } else { 50 };
    let mut rows = Vec::new();
    let result = big_result(if opts.quick { 100_000 } else { 1_000_000 });
    let size = if opts.quick { "100 KB" } else { "1 MB" };
    for expanded in [false, true] {
        let entry = Entry::Tool {
            name: "File_read".into(),
            args: r#"{"file_path":"src/big.rs"}"#.into(),
            result: Some(ToolResult::ok(result.clone())),
            expanded,
        };
        let label = format!(
            "a {size} tool result, {}",
            if expanded { "expanded" } else { "collapsed" }
        );
        rows.extend(conversation_rows(&label, entry, frames));
    }
    let lines = if opts.quick { 500 } else { 5_000 };
    rows.extend(conversation_rows(
        &format!("a {lines}-line code block"),
        Entry::Assistant(code_block_answer(lines)),
        frames,
    ));
    // Streaming below the block: each token lays out the growing entry again.
    let mut c = Conversation::default();
    c.push(Entry::Assistant(code_block_answer(lines)));
    frame(&c, 0);
    let streaming: Vec<f64> = (0..frames)
        .map(|i| {
            if let Some(Entry::Assistant(text)) = c.last_entry_mut() {
                text.push_str(if i % 12 == 11 { "\n\n" } else { " token" });
            }
            frame(&c, 0)
        })
        .collect();
    rows.push(
        Row::new(
            format!("a {lines}-line code block: frame while text streams after it"),
            "ms",
            streaming,
        )
        .note("a token is added to the entry every frame"),
    );
    rows.extend(streaming_into_code_block(lines, frames));

    let lines = if opts.quick { 1_000 } else { 10_000 };
    let output = coloured_lines(lines);
    let mut screen = TermScreen::new(HEIGHT, WIDTH, 10_000);
    let t = Instant::now();
    for piece in output.chunks(64 * 1024) {
        screen.feed(piece);
    }
    let feed = ms(t.elapsed());
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let half = screen.scrollback_rows() / 2;
    let mut draw = |scroll: usize| {
        let mut buf = Buffer::empty(area);
        let t = Instant::now();
        screen.render(area, &mut buf, scroll, true);
        ms(t.elapsed())
    };
    let end: Vec<f64> = (0..frames).map(|_| draw(0)).collect();
    let middle: Vec<f64> = (0..frames).map(|_| draw(half)).collect();
    let label = format!("a console of {lines} wide coloured lines");
    rows.push(
        Row::new(format!("{label}: parsing the output"), "ms", vec![feed])
            .note("220 columns a line, 8 colours, bold; 64 KiB pieces into a 160×50 screen"),
    );
    rows.push(Row::new(format!("{label}: frame at the end"), "ms", end));
    rows.push(Row::new(
        format!("{label}: frame in the middle of the history"),
        "ms",
        middle,
    ));
    rows
}

/// Streaming into a `lines`-line code block whose fence is still open, a line a frame: while
/// its colours are being worked out off the UI thread, then once they have arrived.
fn streaming_into_code_block(lines: usize, frames: usize) -> Vec<Row> {
    let mut out = Vec::new();
    // Its own first line: no block highlighted before is a prefix of it to resume from.
    let mut open = code_block_answer(lines).replacen("```rust\n", "```rust\n// streamed\n", 1);
    open.truncate(open.rfind("```").unwrap_or(open.len()));
    let mut c = Conversation::default();
    c.push(Entry::Assistant(open));
    // Blocks shown before (above) may still be highlighting: start from an idle thread.
    wait_for_colours();
    let shown = Instant::now();
    frame(&c, 0);
    let mut next = lines;
    let mut stream_lines = |c: &mut Conversation| -> Vec<f64> {
        (0..frames)
            .map(|_| {
                if let Some(Entry::Assistant(text)) = c.last_entry_mut() {
                    let _ = writeln!(text, "    Entry {{ id: {next}, name: \"more\" }},");
                }
                next += 1;
                frame(c, 0)
            })
            .collect()
    };
    let plain = stream_lines(&mut c);
    // The block was drawn plain; wait for the highlighting thread (the UI is woken by it).
    wait_for_colours();
    let coloured_after = ms(shown.elapsed());
    let relayout = frame(&c, 0);
    let coloured = stream_lines(&mut c);
    out.push(
        Row::new(
            format!("a {lines}-line code block: frame while it streams, a line a frame"),
            "ms",
            plain,
        )
        .note("the fence is still open; a line is added every frame; colours not there yet"),
    );
    out.push(
        Row::new(
            format!("a {lines}-line code block: colours arrive after"),
            "ms",
            vec![coloured_after],
        )
        .note("highlighted on the cp-highlight thread, from the first frame; 5 ms polls"),
    );
    out.push(
        Row::new(
            format!("a {lines}-line code block: the frame that lays it out in colour"),
            "ms",
            vec![relayout],
        )
        .note("the entry laid out again once, with the colours"),
    );
    out.push(
        Row::new(
            format!("a {lines}-line code block: frame while it streams in colour, a line a frame"),
            "ms",
            coloured,
        )
        .note("as above, after the colours arrived"),
    );

    out
}

/// Waits (5 ms polls, at most a minute) until no code block is being highlighted.
fn wait_for_colours() {
    let _idle = cp_e2e::within_every(Duration::from_secs(60), Duration::from_millis(5), || {
        (!cp_tui::highlighting()).then_some(())
    });
}
