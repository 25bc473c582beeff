//! A console's log file, bounded: it keeps the first `head` bytes of the output and the last
//! `tail` bytes, with a note between them saying how many bytes were dropped.
//!
//! Output is appended as it comes. Once the part after the head grows past twice the tail
//! limit, the log is compacted: the file is cut after the head, the note is written, then the
//! last `tail` bytes. Compacting every `tail` bytes written keeps the copying cost linear.
//! When the console ends the log is compacted to exactly head + note + tail. So a live log
//! holds at most head + note + 2 × tail bytes, a finished one at most head + note + tail.
//!
//! Readers address the log by file offset: until the first compaction (all but floods) that
//! is the offset in the output. A reader following a flood live may miss what a compaction
//! removed, which is the point.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Default bytes kept from the start of each console's output.
pub const DEFAULT_LOG_HEAD_BYTES: u64 = 1024 * 1024;
/// Default bytes kept from the end of each console's output.
pub const DEFAULT_LOG_TAIL_BYTES: u64 = 4 * 1024 * 1024;

/// How much of a console's output its log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    /// Bytes kept from the start.
    pub head: u64,
    /// Bytes kept from the end.
    pub tail: u64,
}

impl Default for LogLimits {
    fn default() -> Self {
        Self {
            head: DEFAULT_LOG_HEAD_BYTES,
            tail: DEFAULT_LOG_TAIL_BYTES,
        }
    }
}

/// The log file of one running console.
pub(super) struct BoundedLog {
    file: File,
    limits: LogLimits,
    /// Length of the file.
    len: u64,
    /// Where the kept tail starts in the file (after the head, and after the note once one
    /// was written).
    tail_start: u64,
    /// Output bytes removed so far.
    dropped: u64,
}

impl BoundedLog {
    pub(super) fn new(file: File, limits: LogLimits) -> Self {
        Self {
            file,
            limits: LogLimits {
                head: limits.head,
                tail: limits.tail.max(1),
            },
            len: 0,
            tail_start: limits.head,
            dropped: 0,
        }
    }

    /// Bytes in the file now.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Appends `chunk`, compacting when the tail part has grown past twice its limit.
    pub(super) fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.file.write_all_at(chunk, self.len)?;
        self.len += chunk.len() as u64;
        if self.len
            > self
                .tail_start
                .saturating_add(self.limits.tail.saturating_mul(2))
        {
            self.compact()?;
        }
        Ok(())
    }

    /// Compacts to head + note + tail; called when the console's output ended.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        if self.len > self.tail_start.saturating_add(self.limits.tail) {
            self.compact()?;
        }
        Ok(())
    }

    fn compact(&mut self) -> io::Result<()> {
        let keep = self.limits.tail;
        let keep_from = self.len - keep;
        let mut tail = vec![0u8; usize::try_from(keep).unwrap_or(usize::MAX)];
        self.file.read_exact_at(&mut tail, keep_from)?;
        self.dropped += keep_from - self.tail_start;
        let note = format!(
            "\r\n[context-pilot: {} bytes of output dropped here; a console log keeps the \
             first {} and the last {} bytes]\r\n",
            self.dropped, self.limits.head, keep
        );
        let head = self.limits.head;
        self.file.set_len(head)?;
        self.file.write_all_at(note.as_bytes(), head)?;
        self.tail_start = head + note.len() as u64;
        self.file.write_all_at(&tail, self.tail_start)?;
        self.len = self.tail_start + keep;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_the_dropped_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.log");
        let mut log = BoundedLog::new(
            File::options()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .unwrap(),
            LogLimits { head: 4, tail: 3 },
        );
        log.write(b"abcd").unwrap();
        for _ in 0..10 {
            log.write(b"xy").unwrap();
        }
        log.write(b"END").unwrap();
        log.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("abcd\r\n[context-pilot: 20 bytes"),
            "{text}"
        );
        assert!(text.ends_with("]\r\nEND"), "{text}");
        assert_eq!(log.len(), text.len() as u64);
    }

    #[test]
    fn small_output_is_kept_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.log");
        let file = File::options()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut log = BoundedLog::new(file, LogLimits::default());
        log.write(b"hello\n").unwrap();
        log.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello\n");
    }
}
