//! Test output as a terminal shows it: the bytes go through a VT100 screen (the `vt100` crate
//! the console panels use), so a progress bar redrawn with `\r` and erased with `ESC[K`, a
//! status line rewritten with cursor movements, or a spinner leaves only what a person would
//! see, never its remnants beside the next line.
//!
//! The whole output is rendered, with bounded memory: the screen keeps a short history, and
//! rows that scroll into it are taken out in batches (the screen is then rebuilt from its own
//! visible state), so a 16 MiB log costs a screen and a batch, not 16 MiB of cells. Rows that
//! the terminal wrapped are joined back into the line the program wrote.

/// The screen's size when the run's own is unknown (a pipe, not a PTY); the console's PTY
/// default.
pub(crate) const DEFAULT_SIZE: (u16, u16) = (40, 120);

/// Rows of history the screen keeps between two batches.
const HISTORY: usize = 1024;

/// Bytes fed at a time: each can scroll at most one row a byte (plus wrapping), so a batch
/// taken at half the history never loses a row.
const PIECE: usize = 256;

/// The lines a terminal of `rows`×`cols` would show for `bytes`, top to bottom, history
/// included, wrapped rows joined, trailing spaces and trailing empty lines dropped.
pub(crate) fn terminal_lines(bytes: &[u8], (rows, cols): (u16, u16)) -> Vec<String> {
    let (rows, cols) = (rows.max(2), cols.max(2));
    let mut lines = Lines::default();
    let mut parser = vt100::Parser::new(rows, cols, HISTORY);
    let mut piece = Vec::with_capacity(2 * PIECE);
    for chunk in bytes.chunks(PIECE) {
        // A terminal's line discipline turns `\n` into `\r\n` (ONLCR); output read from a
        // pipe never went through one.
        piece.clear();
        for &b in chunk {
            if b == b'\n' {
                piece.push(b'\r');
            }
            piece.push(b);
        }
        parser.process(&piece);
        if history_rows(&mut parser) >= HISTORY / 2 {
            take_history(&mut parser, &mut lines);
            // A fresh screen showing what this one shows, with an empty history.
            let state = parser.screen().state_formatted();
            let cursor = parser.screen().cursor_position();
            parser = vt100::Parser::new(rows, cols, HISTORY);
            parser.process(&state);
            parser.process(format!("\x1b[{};{}H", cursor.0 + 1, cursor.1 + 1).as_bytes());
        }
    }
    take_history(&mut parser, &mut lines);
    let screen = parser.screen();
    for (row, text) in (0..rows).zip(screen.rows(0, cols)) {
        lines.push(&text, screen.row_wrapped(row));
    }
    lines.finish()
}

/// The same as one string, one line each.
pub(crate) fn terminal_text(bytes: &[u8], size: (u16, u16)) -> String {
    let mut text = terminal_lines(bytes, size).join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// Rows of history above the screen (vt100 tells only by clamping an offset).
fn history_rows(parser: &mut vt100::Parser) -> usize {
    let screen = parser.screen_mut();
    screen.set_scrollback(usize::MAX);
    let rows = screen.scrollback();
    screen.set_scrollback(0);
    rows
}

/// Moves every history row, oldest first, into `lines`.
fn take_history(parser: &mut vt100::Parser, lines: &mut Lines) {
    let history = history_rows(parser);
    let (rows, cols) = parser.screen().size();
    let mut row = 0;
    // At offset k the screen's top shows history row `history - k`: walk a screen at a time.
    while row < history {
        parser.screen_mut().set_scrollback(history - row);
        let take = (history - row).min(usize::from(rows));
        let screen = parser.screen();
        for (i, text) in screen.rows(0, cols).take(take).enumerate() {
            let wrapped = u16::try_from(i).is_ok_and(|i| screen.row_wrapped(i));
            lines.push(&text, wrapped);
        }
        row += take;
    }
    parser.screen_mut().set_scrollback(0);
}

/// Rows joined into lines.
#[derive(Default)]
struct Lines {
    done: Vec<String>,
    open: String,
}

impl Lines {
    fn push(&mut self, row: &str, wrapped: bool) {
        self.open.push_str(row);
        if !wrapped {
            let line = std::mem::take(&mut self.open);
            self.done.push(line.trim_end().to_owned());
        }
    }

    fn finish(mut self) -> Vec<String> {
        if !self.open.is_empty() {
            self.done.push(self.open.trim_end().to_owned());
        }
        while self.done.last().is_some_and(String::is_empty) {
            self.done.pop();
        }
        self.done
    }
}

/// At most `max` characters of `line`, the rest counted: a minified bundle or a row of
/// progress dots is not worth 100 KB of the agent's context.
pub(crate) fn bounded_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_owned(),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            format!("{} … ({rest} more characters)", &line[..cut])
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;

    fn lines(bytes: &[u8]) -> Vec<String> {
        terminal_lines(bytes, (5, 40))
    }

    #[test]
    fn an_erased_progress_bar_leaves_nothing() {
        // cargo's way: the bar, `\r`, erase to the end of line, then the next message.
        let out = b"   Compiling regex v1.0\n    Building [=====>    ] 2/3: regex-syntax, regex-syntax(test)\r\x1b[Kerror: could not compile `calc`\nend\n";
        assert_eq!(
            terminal_lines(out, (5, 120)),
            [
                "   Compiling regex v1.0",
                "error: could not compile `calc`",
                "end"
            ]
        );
    }

    #[test]
    fn cursor_up_redraws_and_colours_are_resolved() {
        let out = b"\x1b[32mPASS\x1b[0m a\nRUNS b\n\x1b[1A\x1b[2K\x1b[31mFAIL\x1b[0m b\ndone\n";
        assert_eq!(lines(out), ["PASS a", "FAIL b", "done"]);
    }

    #[test]
    fn wrapped_rows_are_one_line_and_long_output_keeps_every_line() {
        let long = "x".repeat(100);
        assert_eq!(
            lines(format!("{long}\nnext\n").as_bytes()),
            [long, "next".into()]
        );
        let many = (0..5000).fold(String::new(), |mut s, i| {
            let _ = write!(s, "line {i}\r\n");
            s
        });
        let got = lines(many.as_bytes());
        assert_eq!(got.len(), 5000);
        assert_eq!(got[0], "line 0");
        assert_eq!(got[2345], "line 2345");
        assert_eq!(got[4999], "line 4999");
    }

    #[test]
    fn a_redraw_across_a_batch_boundary_keeps_the_screen() {
        // Enough lines to force a rebuild, then a redraw of the last line on the screen.
        let mut out = (0..700).fold(String::new(), |mut s, i| {
            let _ = writeln!(s, "l{i}");
            s
        });
        out.push_str("progress 10%\r\x1b[Kprogress done\n");
        let got = lines(out.as_bytes());
        assert_eq!(got.len(), 701);
        assert_eq!(got[699], "l699");
        assert_eq!(got[700], "progress done");
    }

    #[test]
    fn long_lines_are_cut_with_a_count() {
        assert_eq!(bounded_line("abcdef", 10), "abcdef");
        assert_eq!(bounded_line("abcdef", 4), "abcd … (2 more characters)");
        assert_eq!(bounded_line("ééééé", 2), "éé … (3 more characters)");
    }
}
