//! PTYs for new consoles, one opened ahead: a spawn takes it instead of waiting for a PTY to
//! be opened (a device open and a dozen calls, a twentieth of a millisecond before the
//! command can start), and the next one is opened once the spawn is answered.

use std::sync::{Mutex, PoisonError};

use portable_pty::{PtyPair, PtySize, native_pty_system};

use crate::console_info::{DEFAULT_COLS, DEFAULT_ROWS};

/// No PTY could be opened.
#[derive(Debug, thiserror::Error)]
#[error("opening a PTY of {rows}×{cols}: {source}")]
pub(super) struct OpenPtyError {
    rows: u16,
    cols: u16,
    /// portable-pty's reason (an `anyhow` error: the system's, with its context).
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// The PTY opened ahead, if any.
#[derive(Default)]
pub(super) struct Ptys {
    ahead: Mutex<Option<PtyPair>>,
}

impl Ptys {
    /// A PTY of `rows` × `cols` for a new console: the one opened ahead, resized, when there
    /// is one, else a new one.
    pub(super) fn take(&self, rows: u16, cols: u16) -> Result<PtyPair, OpenPtyError> {
        let ahead = self
            .ahead
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(pair) = ahead
            && pair.master.resize(size(rows, cols)).is_ok()
        {
            return Ok(pair);
        }
        open(rows, cols)
    }

    /// Opens the next PTY ahead, unless one is open already. A failure only means the next
    /// spawn opens its own (and says why, if it still fails then).
    pub(super) fn open_ahead(&self) {
        let mut ahead = self.ahead.lock().unwrap_or_else(PoisonError::into_inner);
        if ahead.is_none() {
            match open(DEFAULT_ROWS, DEFAULT_COLS) {
                Ok(pair) => *ahead = Some(pair),
                Err(e) => tracing::debug!("no PTY opened ahead: {e}"),
            }
        }
    }
}

fn size(rows: u16, cols: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

fn open(rows: u16, cols: u16) -> Result<PtyPair, OpenPtyError> {
    native_pty_system()
        .openpty(size(rows, cols))
        .map_err(|e| OpenPtyError {
            rows,
            cols,
            source: e.into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pty_opened_ahead_is_taken_once_at_the_size_asked() {
        let ptys = Ptys::default();
        ptys.open_ahead();
        let ahead = ptys.take(7, 33).unwrap();
        let size = ahead.master.get_size().unwrap();
        assert_eq!((size.rows, size.cols), (7, 33));
        // None left ahead: the next one is opened on the spot, and differs.
        let fresh = ptys.take(5, 9).unwrap();
        assert_ne!(ahead.master.tty_name(), fresh.master.tty_name());
        assert_eq!(fresh.master.get_size().unwrap().cols, 9);
    }
}
