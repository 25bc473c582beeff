//! The terminal of a headless run (`context-pilot run --headless`): the agent's text streams
//! onto stdout in pieces, and the run's own lines (`[context-pilot] …` status, tool calls, the
//! approval prompts) follow it. [`LineState`] remembers whether the agent's text left a line
//! open, so that the next of those lines starts on a line of its own; [`OwnLines`] does that
//! for the output the workflow runner writes to.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the agent's text left the current line open; shared by the progress printer and
/// the run's output ([`OwnLines`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct LineState(Arc<AtomicBool>);

impl LineState {
    /// Writes a piece of the agent's text (a whole message, or a streamed delta).
    pub(crate) fn text(&self, out: &mut impl Write, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        out.write_all(text.as_bytes())?;
        self.0.store(!text.ends_with('\n'), Ordering::Relaxed);
        Ok(())
    }

    /// Ends the line the agent's text left open, if it did.
    pub(crate) fn end_line(&self, out: &mut impl Write) -> io::Result<()> {
        if self.0.swap(false, Ordering::Relaxed) {
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// `inner` (the run's output), whose writes start on a line of their own after the agent's
/// text.
pub(crate) struct OwnLines<W> {
    pub(crate) inner: W,
    pub(crate) line: LineState,
}

impl<W: Write> Write for OwnLines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.end_line(&mut self.inner)?;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_after_text_without_a_newline_starts_on_its_own_line() {
        let line = LineState::default();
        let mut progress = Vec::new();
        line.text(&mut progress, "All done").unwrap();
        line.text(&mut progress, ".").unwrap();
        let mut run = OwnLines {
            inner: Vec::new(),
            line: line.clone(),
        };
        writeln!(run, "[context-pilot] run finished").unwrap();
        writeln!(run, "[context-pilot] next").unwrap();
        progress.extend(run.inner);
        assert_eq!(
            String::from_utf8(progress).unwrap(),
            "All done.\n[context-pilot] run finished\n[context-pilot] next\n"
        );
        // Text that ends its line needs no extra newline.
        let mut out = Vec::new();
        line.text(&mut out, "Done.\n").unwrap();
        line.end_line(&mut out).unwrap();
        assert_eq!(out, b"Done.\n");
    }
}
