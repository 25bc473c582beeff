//! A terminal screen built from raw output: a VT100 parser with bounded scrollback that also
//! knows how many lines fell out of it, and draws any window of what it kept, colours and
//! all. Console panels and callback failure panels both render through it.

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::Style;
#[cfg(feature = "draw")]
use cp_base::ratatui::text::Line;
#[cfg(feature = "draw")]
use cp_base::ratatui::widgets::{Paragraph, Widget};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Anchor, ScrollExtent};
#[cfg(feature = "draw")]
use tui_term::widget::Cell as _;

/// Raw terminal output parsed into a screen plus scrollback.
pub struct TermScreen {
    parser: vt100::Parser,
    /// Rows of scrollback kept at most.
    capacity: usize,
    /// Line feeds fed so far: how many lines the output had.
    newlines: u64,
    /// Bytes of output before the first byte fed, never parsed (a long log is replayed from
    /// its tail only).
    skipped_bytes: u64,
}

impl std::fmt::Debug for TermScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TermScreen")
            .field("size", &self.parser.screen().size())
            .field("newlines", &self.newlines)
            .field("skipped_bytes", &self.skipped_bytes)
            .finish_non_exhaustive()
    }
}

impl TermScreen {
    /// A blank screen of `rows`×`cols` keeping `scrollback` rows of history.
    pub fn new(rows: u16, cols: u16, scrollback: usize) -> Self {
        Self {
            parser: vt100::Parser::new(rows.max(1), cols.max(1), scrollback),
            capacity: scrollback,
            newlines: 0,
            skipped_bytes: 0,
        }
    }

    /// Parses `bytes` of output.
    #[expect(
        clippy::naive_bytecount,
        reason = "at most a 64 KiB piece a call, next to a full VT100 parse; not worth a crate"
    )]
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
        let feeds = bytes.iter().filter(|&&b| b == b'\n').count();
        self.newlines = self.newlines.saturating_add(feeds as u64);
    }

    /// Notes that `bytes` of output came before what is fed, unparsed.
    pub fn skipped(&mut self, bytes: u64) {
        self.skipped_bytes = self.skipped_bytes.saturating_add(bytes);
    }

    /// The parsed screen (its scrollback offset is always 0 between calls).
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// The visible screen as plain text.
    pub fn contents(&self) -> String {
        self.parser.screen().contents()
    }

    /// Rows of history kept above the screen: the largest useful scroll offset.
    pub fn scrollback_rows(&mut self) -> usize {
        // vt100 clamps the offset to what it holds; that is the only way it tells.
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let rows = screen.scrollback();
        screen.set_scrollback(0);
        rows
    }

    /// Lines that scrolled out of the kept history. Exact for line-by-line output; 0 until
    /// the history is full (a program redrawing the screen never counts as dropping).
    pub fn dropped_lines(&mut self) -> u64 {
        let kept = self.scrollback_rows();
        if kept < self.capacity {
            return 0;
        }
        let on_screen = u64::from(self.parser.screen().cursor_position().0);
        self.newlines
            .saturating_sub(on_screen)
            .saturating_sub(kept as u64)
    }

    /// What was lost before the first kept line, e.g. `… 12,345 earlier lines dropped`, or
    /// `None` when nothing was.
    pub fn dropped_notice(&mut self) -> Option<String> {
        let lines = self.dropped_lines();
        let skipped = self.skipped_bytes;
        let text = match (lines, skipped) {
            (0, 0) => return None,
            (lines, 0) => format!("… {} earlier lines dropped", thousands(lines)),
            (0, bytes) => format!("… {} of earlier output not loaded", size(bytes)),
            (lines, bytes) => format!(
                "… {} earlier lines dropped, and {} of output before them",
                thousands(lines),
                size(bytes)
            ),
        };
        Some(format!("{text} (the console log keeps more)"))
    }

    /// Draws the screen the way a terminal shows it, `scroll` rows back in its history
    /// (clamped), with the cursor when `cursor` is set. At the top of the history, the first
    /// row says how many earlier lines were dropped, if any.
    #[cfg(feature = "draw")]
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, scroll: usize, cursor: bool) {
        let mut body = area;
        let history = self.scrollback_rows();
        if scroll >= history
            && body.height > 1
            && let Some(notice) = self.dropped_notice()
        {
            notice_line(notice).render(Rect { height: 1, ..body }, buf);
            body.y += 1;
            body.height -= 1;
        }
        // Scrolling is the caller's view state: apply it for this draw only.
        self.parser.screen_mut().set_scrollback(scroll);
        let cursor = tui_term::widget::Cursor::default().visibility(cursor && scroll == 0);
        tui_term::widget::PseudoTerminal::new(self.parser.screen())
            .cursor(cursor)
            .render(body, buf);
        self.parser.screen_mut().set_scrollback(0);
    }

    /// Every row's text, history first, then the screen.
    fn row_texts(&mut self) -> Vec<String> {
        let history = self.scrollback_rows();
        let (rows, cols) = self.parser.screen().size();
        let mut texts = Vec::with_capacity(history + usize::from(rows));
        let mut row = 0;
        // Offset k shows history rows from `history - k` at the top: walk it a screen at a time.
        while row < history {
            self.parser.screen_mut().set_scrollback(history - row);
            let take = (history - row).min(usize::from(rows));
            texts.extend(self.parser.screen().rows(0, cols).take(take));
            row += take;
        }
        self.parser.screen_mut().set_scrollback(0);
        texts.extend(self.parser.screen().rows(0, cols));
        texts
    }

    /// Offsets for [`TermScreen::render`] that bring each row holding `query` into view
    /// (case-insensitive), ascending: a history row goes to the top of the window; rows on
    /// the screen show at offset 0.
    pub fn find(&mut self, query: &str) -> Vec<usize> {
        let needle = query.to_lowercase();
        if needle.is_empty() {
            return Vec::new();
        }
        let history = self.scrollback_rows();
        let mut offsets: Vec<usize> = self
            .row_texts()
            .iter()
            .enumerate()
            .filter(|(_, text)| text.to_lowercase().contains(&needle))
            .map(|(row, _)| history.saturating_sub(row))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        offsets
    }

    /// Offsets for [`TermScreen::render_tail`] in a window `height` rows tall that bring each
    /// row holding `query` into view (case-insensitive), ascending.
    pub fn find_tail(&mut self, query: &str, height: u16) -> Vec<usize> {
        let used = self.used_rows();
        let texts = self.row_texts();
        ScrollExtent::offsets_of_matches(
            texts.iter().take(used).map(String::as_str),
            query,
            height,
            Anchor::Bottom,
        )
    }

    /// Rows in use: the history plus the screen down to its last written row.
    fn used_rows(&mut self) -> usize {
        let history = self.scrollback_rows();
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let written = (0..rows)
            .rev()
            .find(|&r| (0..cols).any(|c| screen.cell(r, c).is_some_and(vt100::Cell::has_contents)))
            .map_or(0, |r| usize::from(r) + 1);
        history + written
    }

    /// The largest useful offset for [`TermScreen::render_tail`] in a window `height` rows
    /// tall.
    pub fn tail_max_scroll(&mut self, height: u16) -> usize {
        self.used_rows().saturating_sub(usize::from(height))
    }

    /// Draws finished output anchored at its last line, like a terminal's scrollback: the
    /// window ends `scroll` rows above the last row in use (clamped). Used for output that
    /// no longer changes, so the whole area is filled however tall the parsed screen was.
    #[cfg(feature = "draw")]
    pub fn render_tail(&mut self, area: Rect, buf: &mut Buffer, scroll: usize) {
        let used = self.used_rows();
        let height = usize::from(area.height);
        let end = used.saturating_sub(scroll.min(used.saturating_sub(height)));
        let start = end.saturating_sub(height);
        let history = self.scrollback_rows();
        let cols = self.parser.screen().size().1.min(area.width);
        for (out_row, row) in (start..end).enumerate() {
            // Offset k shows history rows from `history - k` at the screen's top.
            let back = history.saturating_sub(row);
            let screen = self.parser.screen_mut();
            screen.set_scrollback(back);
            let screen_row = row + back - history;
            let (Ok(screen_row), Ok(out_row)) = (u16::try_from(screen_row), u16::try_from(out_row))
            else {
                break;
            };
            for col in 0..cols {
                if let Some(cell) = self.parser.screen().cell(screen_row, col)
                    && let Some(target) = buf.cell_mut((area.x + col, area.y + out_row))
                {
                    cell.apply(target);
                }
            }
        }
        self.parser.screen_mut().set_scrollback(0);
    }
}

#[cfg(feature = "draw")]
fn notice_line(notice: String) -> Paragraph<'static> {
    Paragraph::new(Line::styled(notice, Style::default().fg(theme::MUTED)))
}

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `5242880` → `5.0 MiB`.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        format!("{}.{} MiB", bytes / MIB, (bytes % MIB) * 10 / MIB)
    } else if bytes >= KIB {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::ratatui::style::Color;

    fn lines(from: usize, to: usize) -> Vec<u8> {
        (from..to)
            .flat_map(|i| format!("line {i}\r\n").into_bytes())
            .collect()
    }

    #[test]
    fn history_is_bounded_and_dropped_lines_are_counted_exactly() {
        let mut screen = TermScreen::new(5, 20, 100);
        screen.feed(&lines(0, 50));
        assert_eq!(screen.scrollback_rows(), 46);
        assert_eq!(screen.dropped_lines(), 0);
        assert_eq!(screen.dropped_notice(), None);
        screen.feed(&lines(50, 12_445));
        assert_eq!(screen.scrollback_rows(), 100);
        // 12,445 lines; the screen holds the last 4 and an empty row, the history 100.
        assert_eq!(screen.dropped_lines(), 12_445 - 4 - 100);
        assert_eq!(
            screen.dropped_notice().as_deref(),
            Some("… 12,341 earlier lines dropped (the console log keeps more)")
        );
    }

    #[test]
    fn the_top_of_the_history_shows_the_first_kept_line_under_the_notice() {
        let mut screen = TermScreen::new(4, 20, 10);
        screen.feed(&lines(0, 30));
        let area = Rect::new(0, 0, 20, 4);
        let mut buf = Buffer::empty(area);
        let top = screen.scrollback_rows();
        screen.render(area, &mut buf, top, false);
        let row = |buf: &Buffer, y: u16| -> String {
            (0..20).map(|x| buf[(x, y)].symbol()).collect::<String>()
        };
        assert!(
            row(&buf, 0).starts_with("… 17 earlier lines"),
            "{}",
            row(&buf, 0)
        );
        assert_eq!(row(&buf, 1).trim_end(), "line 17");
        // Offsets past the history draw the same as its top.
        let mut past = Buffer::empty(area);
        screen.render(area, &mut past, 61_000, false);
        assert_eq!(buf, past);
    }

    #[test]
    fn tail_rendering_fills_the_window_and_keeps_colours() {
        let mut screen = TermScreen::new(3, 20, 50);
        screen.feed(b"ok 1\r\n\x1b[31mFAIL 2\x1b[0m\r\nok 3\r\nok 4\r\nok 5\r\n");
        let area = Rect::new(0, 0, 10, 5);
        let mut buf = Buffer::empty(area);
        screen.render_tail(area, &mut buf, 0);
        let text: Vec<String> = (0..5)
            .map(|y| (0..10).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect();
        assert_eq!(text[0].trim_end(), "ok 1");
        assert_eq!(text[1].trim_end(), "FAIL 2");
        assert_eq!(text[4].trim_end(), "ok 5");
        assert_eq!(buf[(0, 1)].fg, Color::Indexed(1), "red kept");
        assert_eq!(buf[(0, 0)].fg, Color::Reset);
        assert_eq!(screen.tail_max_scroll(5), 0, "5 lines fit");
        assert_eq!(screen.tail_max_scroll(3), 2);
        let small = Rect::new(0, 0, 10, 3);
        let mut up = Buffer::empty(small);
        screen.render_tail(small, &mut up, 99);
        let first: String = (0..10).map(|x| up[(x, 0)].symbol()).collect();
        assert_eq!(first.trim_end(), "ok 1");
    }

    #[test]
    fn search_finds_rows_in_the_history_and_on_the_screen() {
        let mut screen = TermScreen::new(4, 20, 100);
        screen.feed(&lines(0, 30));
        // 30 lines: 27 in the history (rows 0..27), then 3 and an empty row on the screen.
        assert_eq!(screen.scrollback_rows(), 27);
        assert_eq!(screen.find("line 0"), vec![27], "the first row, at the top");
        assert_eq!(
            screen.find("LINE 29"),
            vec![0],
            "on the screen: no scrolling"
        );
        // "line 2" (row 2) and "line 20".."line 26" in the history, 27..29 on the screen.
        assert_eq!(screen.find("line 2"), vec![0, 1, 2, 3, 4, 5, 6, 7, 25]);
        assert!(screen.find("absent").is_empty());
        assert!(screen.find("").is_empty());
        // The tail view counts from the last used row: in a 5-row window, row 29 is the last.
        assert_eq!(screen.find_tail("line 29", 5), vec![0]);
        assert_eq!(screen.find_tail("line 0", 5), vec![25]);
    }

    /// 10,000 lines of 220 columns in colour, in a 120×40 screen keeping 10,000 rows (a
    /// console panel's): each line wraps to two rows; the newest ones, their colours and the
    /// first kept one are all where they should be.
    #[test]
    fn ten_thousand_wide_coloured_lines_keep_their_text_and_colours() {
        let mut out = Vec::new();
        for i in 0..10_000 {
            let colour = 31 + i % 7;
            let mut line = format!("\x1b[{colour}mline {i:05}\x1b[0m");
            // 10 columns, then 5 a word: 220 columns before ` END`.
            for _ in 0..42 {
                line.push_str(" \x1b[1;34mword\x1b[0m");
            }
            line.push_str(" END\r\n");
            out.extend_from_slice(line.as_bytes());
        }
        let mut screen = TermScreen::new(40, 120, 10_000);
        for piece in out.chunks(64 * 1024) {
            screen.feed(piece);
        }
        let area = Rect::new(0, 0, 120, 40);
        let text = |buf: &Buffer, y: u16| -> String {
            (0..120).map(|x| buf[(x, y)].symbol()).collect::<String>()
        };
        let mut buf = Buffer::empty(area);
        screen.render(area, &mut buf, 0, false);
        // The screen ends with the last line's two rows, then the empty row after it.
        assert!(
            text(&buf, 37).starts_with("line 09999"),
            "{}",
            text(&buf, 37)
        );
        assert!(
            text(&buf, 38).trim_end().ends_with("END"),
            "{}",
            text(&buf, 38)
        );
        // Line 9,999 has colour 31 + 9,999 % 7 = 34 (blue); line 9,998 33 (yellow).
        assert_eq!(buf[(0, 37)].fg, Color::Indexed(4));
        assert_eq!(buf[(0, 35)].fg, Color::Indexed(3));
        assert_eq!(buf[(11, 37)].fg, Color::Indexed(4), "the words are blue");
        assert!(
            buf[(11, 37)]
                .modifier
                .contains(cp_base::ratatui::style::Modifier::BOLD)
        );
        // History is bounded at 10,000 rows, about the last 5,000 lines.
        assert_eq!(screen.scrollback_rows(), 10_000);
        let top = screen.scrollback_rows();
        let mut buf = Buffer::empty(area);
        screen.render(area, &mut buf, top, false);
        let first = (0..2)
            .map(|y| text(&buf, y))
            .find(|t| t.starts_with("line "))
            .unwrap_or_else(|| panic!("{}", text(&buf, 0)));
        let kept: usize = first[5..10].parse().unwrap_or_else(|_| panic!("{first}"));
        assert!((4_950..=5_030).contains(&kept), "{first}");
        // Halfway up, rows are consecutive lines in order.
        let mut buf = Buffer::empty(area);
        screen.render(area, &mut buf, top / 2, false);
        let numbers: Vec<usize> = (0..40)
            .map(|y| text(&buf, y))
            .filter(|t| t.starts_with("line "))
            .map(|t| t[5..10].parse().unwrap_or_else(|_| panic!("{t}")))
            .collect();
        assert_eq!(numbers.len(), 20);
        assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(12_345), "12,345");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(size(5 * 1024 * 1024), "5.0 MiB");
    }
}
