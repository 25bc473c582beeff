//! Server-sent events (`text/event-stream`): the incremental parser, and the one driver loop
//! that feeds a provider's [`EventDecoder`] until its reply is complete.
//!
//! Network reads split the stream anywhere: inside a line, inside a UTF-8 character, or
//! between the `\r` and `\n` of a line ending. The parser therefore works on bytes, keeps the
//! unfinished line, and decodes text only once a whole line is in hand.
//!
//! Each provider supplies only its event handling (an [`EventDecoder`]); reading chunks,
//! parsing them and stopping early are [`decode`]'s job, the same for every wire format.

use super::error::LlmError;
use super::types::{Response, StreamEvent};

/// Whether a decoder wants more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Keep reading.
    Continue,
    /// The message is complete; stop reading.
    Stop,
}

/// A provider's event handling: folds the events of one streamed reply into a [`Response`].
pub(super) trait EventDecoder {
    /// Handles one event, reporting progress to `on_event`; [`Flow::Stop`] once the reply is
    /// complete.
    fn handle(
        &mut self,
        event: &SseEvent,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Flow, LlmError>;

    /// The reply, or an error when the stream ended before the reply was complete.
    fn finish(self) -> Result<Response, LlmError>;
}

/// Parses the chunks `next_chunk` yields (`Ok(None)` at a clean end of the body) as
/// server-sent events and hands each to `decoder` until it says [`Flow::Stop`] or the chunks
/// run out; then the decoder decides whether the stream was complete.
pub(super) fn decode(
    mut decoder: impl EventDecoder,
    mut next_chunk: impl FnMut() -> Result<Option<Vec<u8>>, LlmError>,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    'chunks: while let Some(chunk) = next_chunk()? {
        parser.push(&chunk, &mut events);
        for event in events.drain(..) {
            if decoder.handle(&event, on_event)? == Flow::Stop {
                break 'chunks;
            }
        }
    }
    decoder.finish()
}

/// [`decode`] over chunks already in memory; for tests of a decoder alone.
#[cfg(test)]
pub(super) fn decode_slices(
    decoder: impl EventDecoder,
    chunks: &[&[u8]],
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Response, LlmError> {
    let mut chunks = chunks.iter();
    decode(decoder, || Ok(chunks.next().map(|c| c.to_vec())), on_event)
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `message` when the event named none.
    pub event: String,
    /// All `data:` lines of the event joined with `\n`.
    pub data: String,
}

/// Turns byte chunks into [`SseEvent`]s, following the WHATWG event-stream rules: lines end
/// with CRLF, LF or CR; `:` starts a comment; one space after the field colon is dropped;
/// several `data:` lines join with `\n`; an event without data is not dispatched; an event
/// not ended by a blank line when the stream ends is discarded.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    /// The previous chunk ended with `\r`; a `\n` starting this chunk belongs to that ending.
    after_cr: bool,
    first_line: bool,
    event: String,
    data: String,
    has_data: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self {
            first_line: true,
            ..Self::default()
        }
    }

    /// Feeds the next chunk and appends every event it completes to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&bytes[..end]);
            let is_cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if is_cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
        }
        self.line.extend_from_slice(bytes);
    }

    fn process_line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if self.first_line {
            self.first_line = false;
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` steer browser reconnection, which an API client does not do.
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut out);
        }
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.to_owned(),
            data: data.to_owned(),
        }
    }

    #[test]
    fn fields_comments_and_multiline_data() {
        let stream = b": keep-alive comment\n\
            event: ping\ndata: {}\n\n\
            data: line one\ndata:line two\ndata\n\n\
            event: only-event-no-data\n\n\
            id: 7\nretry: 100\ndata:  two spaces\n\n";
        assert_eq!(
            parse_chunks(&[stream]),
            vec![
                ev("ping", "{}"),
                ev("message", "line one\nline two\n"),
                ev("message", " two spaces")
            ]
        );
    }

    #[test]
    fn all_line_endings_and_bom() {
        let stream = b"\xEF\xBB\xBFevent: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n";
        assert_eq!(
            parse_chunks(&[stream]),
            vec![ev("a", "1"), ev("b", "2"), ev("message", "3")]
        );
    }

    #[test]
    fn unterminated_event_is_discarded() {
        assert_eq!(
            parse_chunks(&[b"data: 1\n\ndata: 2\n"]),
            vec![ev("message", "1")]
        );
    }

    #[test]
    fn every_split_position_gives_the_same_events() {
        let stream =
            "event: first\r\ndata: h\u{e9}llo \u{1F600}\r\n\r\n: c\rdata: x\r\rdata: \u{4e16}\n\n"
                .as_bytes();
        let whole = parse_chunks(&[stream]);
        assert_eq!(whole.len(), 3);
        for a in 0..=stream.len() {
            assert_eq!(
                parse_chunks(&[&stream[..a], &stream[a..]]),
                whole,
                "split at {a}"
            );
            for b in a..=stream.len() {
                let parts: [&[u8]; 3] = [&stream[..a], &stream[a..b], &stream[b..]];
                assert_eq!(parse_chunks(&parts), whole, "split at {a} and {b}");
            }
        }
        let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(parse_chunks(&bytewise), whole);
    }

    #[test]
    fn crlf_split_between_cr_and_lf_is_one_line_end() {
        // If the `\n` after a chunk-final `\r` were a second line end, this would dispatch
        // an event early and lose the `event:` name.
        let events = parse_chunks(&[b"event: a\r", b"\ndata: 1\r", b"\n\r", b"\n"]);
        assert_eq!(events, vec![ev("a", "1")]);
    }
}
