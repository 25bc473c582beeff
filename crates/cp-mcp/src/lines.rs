//! The line filter in front of rmcp: every line the client sends gets an answer.
//!
//! rmcp's stdio transport drops a line that does not parse (invalid JSON, a lone surrogate
//! such as `"\ud800"`, invalid UTF-8) without a reply, so a client waiting on that id hangs,
//! and it discards an oversized message silently. This filter reads stdin itself, one line at
//! a time and never more than [`MAX_LINE`] bytes of it in memory, and:
//! - answers a line that is not UTF-8 or not JSON with `-32700` (parse error, id `null`);
//! - answers valid JSON that is not a JSON-RPC message with `-32600` (invalid request), with
//!   its id when it has one;
//! - answers a line over [`MAX_LINE`] with `-32600`, with the id when it can be read from the
//!   start of the line, else `null`;
//! - forwards every other line to rmcp unchanged.
//!
//! rmcp's replies and the filter's go to stdout through one writer, a whole line at a time, so
//! they never interleave.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The largest message accepted, in bytes (without its newline).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// How much of an oversized line is kept to find its id.
const ID_SCAN: usize = 64 * 1024;

/// JSON-RPC "parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC "invalid request".
pub const INVALID_REQUEST: i64 = -32600;

/// A writer shared by rmcp's output and the filter's replies.
pub type SharedOut<W> = Arc<Mutex<W>>;

/// One line read from the client.
enum Line {
    /// A whole line (without its newline).
    Whole(Vec<u8>),
    /// A line over the limit: its first bytes only.
    TooLong(Vec<u8>),
}

/// Reads the next line, keeping at most [`MAX_LINE`] bytes of it. `None` at end of input.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(seen_any.then(|| finish(line, too_long)));
        }
        seen_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                let keep = ID_SCAN.saturating_sub(line.len()).min(chunk.len());
                line.extend_from_slice(&chunk[..keep]);
                line.truncate(ID_SCAN);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(finish(line, too_long)));
        }
    }
}

fn finish(mut line: Vec<u8>, too_long: bool) -> Line {
    if too_long {
        Line::TooLong(line)
    } else {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Line::Whole(line)
    }
}

/// What to do with a whole line.
#[derive(Debug, PartialEq)]
enum LineAction {
    Skip,
    Forward,
    Reply(Value),
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    let mut reply = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    reply["id"] = id;
    reply
}

/// A message's id if it is a valid one (string or number).
fn valid_id(value: &Value) -> Option<Value> {
    value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
}

fn judge(line: &[u8]) -> LineAction {
    if line.iter().all(u8::is_ascii_whitespace) {
        return LineAction::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return LineAction::Reply(error_reply(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: the message is not valid UTF-8 ({e})"),
            ));
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return LineAction::Reply(error_reply(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: the message is not valid JSON ({e})"),
            ));
        }
    };
    if is_message(&value) {
        LineAction::Forward
    } else {
        LineAction::Reply(error_reply(
            valid_id(&value).unwrap_or(Value::Null),
            INVALID_REQUEST,
            "invalid request: expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\" and a \"method\" (or a response with \"result\" or \"error\")",
        ))
    }
}

/// Whether `value` is a JSON-RPC 2.0 request, notification or response.
fn is_message(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return false;
    }
    let id_ok = obj
        .get("id")
        .is_none_or(|id| id.is_string() || id.is_number());
    let request = obj.get("method").is_some_and(Value::is_string);
    let response =
        obj.contains_key("id") && (obj.contains_key("result") || obj.contains_key("error"));
    id_ok && (request || response)
}

/// The id of an oversized message, read from its first bytes when it appears there.
fn id_from_prefix(prefix: &[u8]) -> Value {
    let text = String::from_utf8_lossy(prefix);
    let Some(at) = text.find("\"id\"") else {
        return Value::Null;
    };
    let rest = text[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return Value::Null;
    };
    serde_json::Deserializer::from_str(rest.trim_start())
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(Value::Null)
}

/// Writes one line to the shared output.
pub async fn write_line<W: AsyncWrite + Unpin>(
    out: &SharedOut<W>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    if line.last() != Some(&b'\n') {
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

/// Reads the client's lines from `input` until it ends, answers the bad ones on `out` and
/// forwards the good ones to `to_rmcp`. Dropping `to_rmcp` at the end tells rmcp the client
/// is gone.
pub async fn filter<R, F, W>(input: R, mut to_rmcp: F, out: SharedOut<W>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    F: AsyncWrite + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    while let Some(line) = read_line(&mut reader).await? {
        let verdict = match &line {
            Line::Whole(bytes) => judge(bytes),
            Line::TooLong(prefix) => LineAction::Reply(error_reply(
                id_from_prefix(prefix),
                INVALID_REQUEST,
                &format!(
                    "invalid request: the message is over the size limit of {MAX_LINE} bytes and was discarded"
                ),
            )),
        };
        match verdict {
            LineAction::Skip => {}
            LineAction::Forward => {
                if let Line::Whole(mut bytes) = line {
                    bytes.push(b'\n');
                    to_rmcp.write_all(&bytes).await?;
                    to_rmcp.flush().await?;
                }
            }
            LineAction::Reply(reply) => {
                tracing::warn!("MCP: answered a bad message with {reply}");
                write_line(&out, reply.to_string().as_bytes()).await?;
            }
        }
    }
    to_rmcp.shutdown().await
}

/// Copies rmcp's output to `out`, a whole line at a time, until rmcp closes it.
pub async fn relay<R, W>(from_rmcp: R, out: SharedOut<W>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    loop {
        line.clear();
        if lines.read_until(b'\n', &mut line).await? == 0 {
            return Ok(());
        }
        write_line(&out, &line).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_get_the_right_code_and_good_ones_pass() {
        let code = |line: &[u8]| match judge(line) {
            LineAction::Reply(v) => v["error"]["code"].as_i64(),
            _ => None,
        };
        assert_eq!(code(b"{not json"), Some(PARSE_ERROR));
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\ud800"}}"#),
            Some(PARSE_ERROR)
        );
        assert_eq!(code(b"\xff\xfe"), Some(PARSE_ERROR));
        assert_eq!(code(b"[1,2]"), Some(INVALID_REQUEST));
        assert_eq!(code(br#"{"id": 7}"#), Some(INVALID_REQUEST));
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            LineAction::Forward
        );
        assert_eq!(judge(b"  "), LineAction::Skip);
    }

    #[test]
    fn the_id_of_an_oversized_message_is_found_when_it_comes_first() {
        assert_eq!(
            id_from_prefix(br#"{"jsonrpc":"2.0","id": 42,"method":"tools/call","params":{"#),
            json!(42)
        );
        assert_eq!(id_from_prefix(br#"{"id":"a-1","#), json!("a-1"));
        assert_eq!(
            id_from_prefix(br#"{"jsonrpc":"2.0","method":"#),
            Value::Null
        );
    }
}
