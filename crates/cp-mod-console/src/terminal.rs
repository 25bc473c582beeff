//! Output as a terminal shows it, for everything an agent or a person reads as text: callback
//! tails, the console tools, a console panel's text for the model, pattern waits, and the stop
//! gate's test output. The bytes go through a VT100 screen (the `vt100` crate the console
//! panels draw with), so a progress bar redrawn with `\r` and erased with `ESC[K`, a status
//! line rewritten with cursor movements, or a spinner leaves only what a person would see,
//! never its remnants beside the next line.
//!
//! The whole output is read, with bounded memory: the screen keeps a short history, and rows
//! that scroll into it are taken out in batches (the screen is then rebuilt from its own
//! visible state), so a 16 MiB log costs a screen and a batch, not 16 MiB of cells. A line
//! that scrolled off the screen is final (a terminal cannot redraw it), so it is kept as text
//! at once. Rows the terminal wrapped are joined back into the line the program wrote.
//!
//! ```
//! use cp_mod_console::terminal_lines;
//!
//! let bar = b"Building [===>   ] 2/3\r\x1b[Knote: checks done\n";
//! assert_eq!(terminal_lines(bar, (40, 120)), ["note: checks done"]);
//! ```

use crate::console_info::{DEFAULT_COLS, DEFAULT_ROWS};

/// The screen's size when the output's own is unknown (a pipe, not a PTY): the console's PTY
/// default, rows then columns.
pub const DEFAULT_SIZE: (u16, u16) = (DEFAULT_ROWS, DEFAULT_COLS);

/// Rows of history the screen keeps between two batches.
const HISTORY: usize = 1024;

/// Bytes fed at a time: each can scroll at most one row a byte (plus wrapping), so a batch
/// taken at half the history never loses a row.
const PIECE: usize = 256;

/// The lines a terminal of `rows`×`cols` would show for `bytes`, top to bottom, history
/// included, wrapped rows joined, trailing spaces and trailing empty lines dropped.
pub fn terminal_lines(bytes: &[u8], size: (u16, u16)) -> Vec<String> {
    let mut reader = TerminalReader::new(size);
    reader.feed(bytes);
    reader.into_lines()
}

/// [`terminal_lines`] as one string, each line ended by `\n` (empty for no output).
pub fn terminal_text(bytes: &[u8], size: (u16, u16)) -> String {
    let mut text = terminal_lines(bytes, size).join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// The last `lines` lines of [`terminal_lines`], joined by `\n`, with no trailing blank line.
pub fn last_lines(bytes: &[u8], size: (u16, u16), lines: usize) -> String {
    let all = terminal_lines(bytes, size);
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A terminal screen read as text while output streams in: [`feed`](Self::feed) bytes as
/// they come, take the lines that scrolled off for good with
/// [`take_scrolled`](Self::take_scrolled), read what the screen shows now with
/// [`screen_lines`](Self::screen_lines).
pub struct TerminalReader {
    parser: vt100::Parser,
    size: (u16, u16),
    lines: Lines,
    piece: Vec<u8>,
}

impl TerminalReader {
    /// A blank screen of `rows`×`cols` (at least 2×2).
    pub fn new((rows, cols): (u16, u16)) -> Self {
        let size = (rows.max(2), cols.max(2));
        Self {
            parser: vt100::Parser::new(size.0, size.1, HISTORY),
            size,
            lines: Lines::default(),
            piece: Vec::with_capacity(2 * PIECE),
        }
    }

    /// Draws `bytes` on the screen.
    pub fn feed(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(PIECE) {
            // A terminal's line discipline turns `\n` into `\r\n` (ONLCR); output read from a
            // pipe never went through one, and a PTY's `\r\r\n` reads the same.
            self.piece.clear();
            for &b in chunk {
                if b == b'\n' {
                    self.piece.push(b'\r');
                }
                self.piece.push(b);
            }
            self.parser.process(&self.piece);
            if history_rows(&mut self.parser) >= HISTORY / 2 {
                self.move_history();
            }
        }
    }

    /// The lines that scrolled off the screen since the last call, oldest first: no later
    /// output can change them. A line wrapped across the screen's top edge stays open until
    /// its last row scrolls off too.
    pub fn take_scrolled(&mut self) -> Vec<String> {
        self.move_history();
        std::mem::take(&mut self.lines.done)
    }

    /// The lines the screen shows now, top to bottom, wrapped rows joined (a line that
    /// began above the screen starts with its part already scrolled off), trailing spaces
    /// and trailing empty lines dropped.
    pub fn screen_lines(&mut self) -> Vec<String> {
        self.move_history();
        let mut lines = Lines {
            done: Vec::new(),
            open: self.lines.open.clone(),
        };
        self.push_screen(&mut lines);
        lines.finish()
    }

    /// Every line: those scrolled off and not yet taken, then the screen's.
    pub fn into_lines(mut self) -> Vec<String> {
        self.move_history();
        let mut lines = std::mem::take(&mut self.lines);
        self.push_screen(&mut lines);
        lines.finish()
    }

    fn push_screen(&self, lines: &mut Lines) {
        let (rows, cols) = self.size;
        let screen = self.parser.screen();
        for (row, text) in (0..rows).zip(screen.rows(0, cols)) {
            lines.push(&text, screen.row_wrapped(row));
        }
    }

    /// Takes the history rows into `lines` and starts a fresh screen showing what this one
    /// shows, with an empty history (vt100 has no way to drop history rows).
    fn move_history(&mut self) {
        if history_rows(&mut self.parser) == 0 {
            return;
        }
        take_history(&mut self.parser, &mut self.lines);
        let (rows, cols) = self.size;
        let state = self.parser.screen().state_formatted();
        let cursor = self.parser.screen().cursor_position();
        self.parser = vt100::Parser::new(rows, cols, HISTORY);
        self.parser.process(&state);
        self.parser
            .process(format!("\x1b[{};{}H", cursor.0 + 1, cursor.1 + 1).as_bytes());
    }
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

#[cfg(test)]
mod tests;
