//! [`Reply`]: one scripted answer, whole or streamed, and how its stream ends.

use std::time::Duration;

use serde_json::Value;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Body,
}

/// A reply's body: whole, or streamed in chunks.
#[derive(Debug, Clone)]
pub(super) enum Body {
    Full(Vec<u8>),
    Stream {
        chunks: Vec<Vec<u8>>,
        delay: Duration,
        end: StreamEnd,
    },
}

/// How a streamed body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamEnd {
    Complete,
    Cut,
    Stall,
}

impl Reply {
    /// A JSON body with `status`.
    pub fn json(status: u16, value: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Body::Full(value.to_string().into_bytes()),
        }
    }

    /// A plain-text body with `status`.
    pub fn text(status: u16, text: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: Body::Full(text.as_bytes().to_vec()),
        }
    }

    /// A `200 text/event-stream` reply sent as the given chunks, each flushed separately.
    pub fn sse_chunks(chunks: Vec<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![
                (
                    "content-type".into(),
                    "text/event-stream; charset=utf-8".into(),
                ),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: Body::Stream {
                chunks,
                delay: Duration::ZERO,
                end: StreamEnd::Complete,
            },
        }
    }

    /// An event stream sent in one chunk.
    pub fn sse(body: &str) -> Self {
        Self::sse_chunks(vec![body.as_bytes().to_vec()])
    }

    /// An event stream split at the given byte offsets (any byte, even inside a character).
    pub fn sse_split_at(body: &str, offsets: &[usize]) -> Self {
        let bytes = body.as_bytes();
        let mut chunks = Vec::new();
        let mut start = 0;
        for &offset in offsets {
            let offset = offset.clamp(start, bytes.len());
            chunks.push(bytes[start..offset].to_vec());
            start = offset;
        }
        chunks.push(bytes[start..].to_vec());
        chunks.retain(|chunk| !chunk.is_empty());
        Self::sse_chunks(chunks)
    }

    /// An event stream sent `size` bytes per chunk.
    pub fn sse_split_every(body: &str, size: usize) -> Self {
        Self::sse_chunks(
            body.as_bytes()
                .chunks(size.max(1))
                .map(<[u8]>::to_vec)
                .collect(),
        )
    }

    /// Keeps only the first `bytes` bytes of the stream, then closes the connection without
    /// ending the chunked body: the stream is cut midway.
    #[must_use]
    pub fn cut_after(mut self, bytes: usize) -> Self {
        if let Body::Stream { chunks, end, .. } = &mut self.body {
            let mut left = bytes;
            let mut kept = Vec::new();
            for chunk in chunks.drain(..) {
                if left == 0 {
                    break;
                }
                let take = chunk.len().min(left);
                kept.push(chunk[..take].to_vec());
                left -= take;
            }
            *chunks = kept;
            *end = StreamEnd::Cut;
        }
        self
    }

    /// After its chunks, the stream stays open and silent (until the client hangs up, the
    /// server is dropped, or 30 s pass): a stalled server, for cancellation tests.
    #[must_use]
    pub fn then_stall(mut self) -> Self {
        if let Body::Stream { end, .. } = &mut self.body {
            *end = StreamEnd::Stall;
        }
        self
    }

    /// Waits `delay` before each chunk of a stream.
    #[must_use]
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        if let Body::Stream { delay: d, .. } = &mut self.body {
            *d = delay;
        }
        self
    }

    /// Adds (or replaces) a response header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Replaces the status code.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}
