//! A bounded in-memory copy of the end of a console's output, addressed by absolute offset.

use std::collections::VecDeque;

/// Keeps the last `cap` bytes of a stream and counts every byte ever pushed.
#[derive(Debug)]
pub(super) struct Tail {
    buf: VecDeque<u8>,
    cap: usize,
    total: u64,
}

impl Tail {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            buf: VecDeque::new(),
            cap: cap.max(1),
            total: 0,
        }
    }

    /// A tail that already saw `total` bytes, of which `last` are the final ones.
    pub(super) fn preloaded(cap: usize, total: u64, last: &[u8]) -> Self {
        let mut tail = Self::new(cap);
        tail.push(last);
        tail.total = total.max(tail.total);
        tail
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        if data.len() >= self.cap {
            self.buf.clear();
            self.buf.extend(&data[data.len() - self.cap..]);
        } else {
            let overflow = (self.buf.len() + data.len()).saturating_sub(self.cap);
            self.buf.drain(..overflow);
            self.buf.extend(data);
        }
        self.total += data.len() as u64;
    }

    /// Total bytes ever pushed.
    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// Absolute offset of the oldest byte still held.
    pub(super) fn start(&self) -> u64 {
        self.total - self.buf.len() as u64
    }

    /// The held bytes from absolute `offset` on (from the oldest held byte if `offset` is
    /// older than that).
    pub(super) fn bytes_from(&self, offset: u64) -> Vec<u8> {
        let skip = usize::try_from(offset.saturating_sub(self.start()))
            .unwrap_or(usize::MAX)
            .min(self.buf.len());
        self.buf.range(skip..).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes() {
        let mut t = Tail::new(4);
        t.push(b"ab");
        t.push(b"cde");
        assert_eq!(t.total(), 5);
        assert_eq!(t.start(), 1);
        assert_eq!(t.bytes_from(0), b"bcde");
        assert_eq!(t.bytes_from(3), b"de");
        assert_eq!(t.bytes_from(9), b"");
        t.push(b"0123456789");
        assert_eq!(t.bytes_from(0), b"6789");
        assert_eq!(t.total(), 15);
    }

    #[test]
    fn preloaded_tail_counts_what_it_did_not_keep() {
        let t = Tail::preloaded(4, 100, b"wxyz");
        assert_eq!(t.start(), 96);
        assert_eq!(t.bytes_from(98), b"yz");
    }
}
