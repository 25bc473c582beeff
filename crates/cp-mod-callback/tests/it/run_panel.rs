//! The failure panel of a callback run: its output drawn as a terminal, colours kept.

#![allow(clippy::unwrap_used, reason = "test code")]

use std::fmt::Write as _;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_base::ratatui::style::Color;
use cp_base::{Panel, PanelView, ScrollExtent};
use cp_mod_callback::RunPanel;

fn failed_panel(output: &[u8]) -> RunPanel {
    let panel = RunPanel::new(uuid::Uuid::from_u128(7), "pytest");
    {
        let mut v = panel.view();
        v.status = "FAILED (exited with code 1)".into();
        v.output = cp_mod_console::terminal_text(output, cp_mod_console::DEFAULT_SIZE);
        v.console = Some(uuid::Uuid::from_u128(9));
        v.finished = true;
        v.visible = true;
    }
    panel.set_terminal(output, 0);
    panel
}

fn draw(panel: &RunPanel, width: u16, height: u16, scroll: usize) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    let view = PanelView {
        scroll,
        ..PanelView::default()
    };
    panel.render(area, &mut buf, &view);
    buf
}

/// Each row's text, then where its style changes (`@x fg bg modifiers`). Written out here
/// rather than with `Buffer`'s `Debug`, whose fields depend on ratatui's enabled features.
fn styled(buf: &Buffer) -> String {
    let mut out = String::new();
    let area = buf.area;
    for y in area.top()..area.bottom() {
        let text: String = (area.left()..area.right())
            .map(|x| buf[(x, y)].symbol())
            .collect();
        let _ = writeln!(out, "{text:?}");
        let mut last = None;
        for x in area.left()..area.right() {
            let cell = &buf[(x, y)];
            let style = (cell.fg, cell.bg, cell.modifier);
            if last != Some(style) {
                let _ = writeln!(out, "    @{x} {:?} {:?} {:?}", style.0, style.1, style.2);
                last = Some(style);
            }
        }
    }
    out
}

const PYTEST: &[u8] = b"\x1b[1m===== test session starts =====\x1b[0m\r\n\
test_math.py \x1b[32m.\x1b[0m\x1b[31mF\x1b[0m\r\n\
\x1b[31mFAILED\x1b[0m test_math.py::test_add - assert 3 == 4\r\n\
\x1b[31m===== 1 failed, 1 passed in 0.02s =====\x1b[0m\r\n";

#[test]
fn the_failure_output_keeps_its_colours() {
    let panel = failed_panel(PYTEST);
    let buf = draw(&panel, 48, 6, 0);
    // The styled buffer, not only its text: red FAILED, green pass dot, bold header.
    insta::assert_snapshot!(styled(&buf));
    assert_eq!(buf[(13, 3)].symbol(), ".");
    assert_eq!(buf[(13, 3)].fg, Color::Indexed(2));
    assert_eq!(buf[(14, 3)].symbol(), "F");
    assert_eq!(buf[(14, 3)].fg, Color::Indexed(1));
    assert_eq!(buf[(0, 4)].fg, Color::Indexed(1), "FAILED is red");
}

#[test]
fn the_failure_output_scrolls_within_its_lines_and_can_be_searched() {
    let many: Vec<u8> = (1..=50)
        .flat_map(|i| format!("\x1b[33mline {i}\x1b[0m\r\n").into_bytes())
        .collect();
    let panel = failed_panel(&many);
    let area = Rect::new(0, 0, 30, 12);
    // Two header rows, ten rows of output: 40 lines above them.
    assert_eq!(panel.scroll_extent(area), ScrollExtent::bottom(40));
    let top = draw(&panel, 30, 12, 9_999);
    let first: String = (0..30).map(|x| top[(x, 2)].symbol()).collect();
    assert_eq!(first.trim_end(), "line 1", "clamped to the first line");
    assert_eq!(top[(0, 2)].fg, Color::Indexed(3));
    // `line 5` (row 4) at the top of the window: 40 - 4; `line 50` is on the resting view.
    assert_eq!(panel.find(area, "line 5"), vec![0, 36]);
}

#[test]
fn output_left_out_of_the_panel_is_announced_above_it() {
    let panel = RunPanel::new(uuid::Uuid::from_u128(7), "pytest");
    panel.view().status = "FAILED (exited with code 1)".into();
    // 300 KiB came before the part the panel was given.
    panel.set_terminal(PYTEST, 300 * 1024);
    let buf = draw(&panel, 80, 8, 0);
    let row = |y: u16| -> String { (0..80).map(|x| buf[(x, y)].symbol()).collect() };
    assert_eq!(
        row(1).trim_end(),
        "… 300 KiB of earlier output not loaded (the console log keeps more)"
    );
    assert!(
        (2..8).any(|y| row(y).contains("1 failed, 1 passed")),
        "the output follows"
    );

    // Nothing left out: no notice.
    let whole = failed_panel(PYTEST);
    let buf = draw(&whole, 80, 8, 0);
    let text: String = (0..8)
        .flat_map(|y| (0..80).map(move |x| (x, y)))
        .map(|p| buf[p].symbol().to_owned())
        .collect();
    assert!(!text.contains("not loaded"), "{text}");
}
