//! The one way a console output pattern becomes a regular expression, shared by the client
//! (checking a pattern, matching a finished console's log), the server (waits) and the
//! tools (which fall back to literal text on a syntax error).
//!
//! Patterns match plain text (see [`crate::plain_text`]) in multi-line mode: `^` and `$`
//! match at line ends.

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
