//! The one way a console output pattern becomes a regular expression, shared by the client
//! (checking a pattern, matching a finished console's log), the server (waits) and the
//! tools (which fall back to literal text on a syntax error).
//!
//! Patterns match the output as a terminal shows it (see [`crate::terminal_lines`]), in
//! multi-line mode: `^` and `$` match at line ends.
//!
//! A wait on a running console looks each time output arrives, at the lines that scrolled
//! off the screen (final) and at the screen as it is then. A pattern that was on screen when
//! the wait looked is met, even if the program erases that line later: it appeared, as a
//! person watching would have seen it. Text written and erased between two looks (the frames
//! of a progress bar redrawn within one read) is never matched, and neither are escape
//! sequences or the leftovers of a redraw. A finished console is matched once, on its final
//! text.

use regex::{Regex, RegexBuilder};

use crate::ConsoleError;

/// Builds `pattern` the way every console wait matches it.
pub(crate) fn build(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).multi_line(true).build()
}

/// [`build`], with the error a caller reports.
pub(crate) fn compile(pattern: &str) -> Result<Regex, ConsoleError> {
    build(pattern).map_err(|e| ConsoleError::InvalidPattern {
        pattern: pattern.to_owned(),
        reason: e.to_string(),
    })
}
