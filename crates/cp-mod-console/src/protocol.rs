//! The wire protocol: one JSON object a line over the Unix socket.
//!
//! Every connection starts with `Hello`; the server answers with its own version and pid and
//! closes the connection when the versions differ. The `Hello` shape never changes, so any
//! two versions can at least tell each other apart.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::ConsoleError;
use crate::console_info::{ConsoleInfo, SpawnSpec};

/// Bump on any incompatible change to [`Request`] or [`Response`].
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest accepted line (a spawn spec with a large env is the biggest message).
const MAX_LINE: usize = 16 * 1024 * 1024;

/// What a wait waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "until", rename_all = "snake_case")]
pub(crate) enum WaitCondition {
    /// The console ends.
    Exit,
    /// The output from byte `from_offset` on, read as a terminal shows it, matches `regex`.
    Pattern { regex: String, from_offset: u64 },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum Request {
    Hello {
        version: u32,
    },
    Spawn {
        spec: SpawnSpec,
    },
    List,
    Status {
        id: Uuid,
    },
    Send {
        id: Uuid,
        /// Base64 of the bytes to write.
        data: String,
    },
    Resize {
        id: Uuid,
        rows: u16,
        cols: u16,
    },
    Kill {
        id: Uuid,
    },
    Wait {
        id: Uuid,
        condition: WaitCondition,
        timeout: Duration,
    },
    /// Kill every console and exit.
    Shutdown,
}

/// An error as it travels over the wire, rebuilt into the same [`ConsoleError`] variant on
/// the client side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub(crate) enum WireError {
    #[serde(rename = "unknown_session")]
    UnknownConsole {
        id: String,
    },
    InvalidSpec {
        detail: String,
    },
    InvalidPattern {
        pattern: String,
        reason: String,
    },
    NotRunning {
        id: Uuid,
        status: String,
    },
    Spawn {
        command: String,
        reason: String,
    },
    Other {
        message: String,
    },
}

impl From<&ConsoleError> for WireError {
    fn from(err: &ConsoleError) -> Self {
        match err {
            ConsoleError::UnknownConsole(id) => Self::UnknownConsole { id: id.clone() },
            ConsoleError::InvalidSpec(detail) => Self::InvalidSpec {
                detail: detail.clone(),
            },
            ConsoleError::InvalidPattern { pattern, reason } => Self::InvalidPattern {
                pattern: pattern.clone(),
                reason: reason.clone(),
            },
            ConsoleError::NotRunning { id, status } => Self::NotRunning {
                id: *id,
                status: status.clone(),
            },
            ConsoleError::Spawn { command, reason } => Self::Spawn {
                command: command.clone(),
                reason: reason.clone(),
            },
            other => Self::Other {
                message: other.to_string(),
            },
        }
    }
}

impl From<WireError> for ConsoleError {
    fn from(err: WireError) -> Self {
        match err {
            WireError::UnknownConsole { id } => Self::UnknownConsole(id),
            WireError::InvalidSpec { detail } => Self::InvalidSpec(detail),
            WireError::InvalidPattern { pattern, reason } => {
                Self::InvalidPattern { pattern, reason }
            }
            WireError::NotRunning { id, status } => Self::NotRunning { id, status },
            WireError::Spawn { command, reason } => Self::Spawn { command, reason },
            WireError::Other { message } => Self::Server(message),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Response {
    Hello {
        version: u32,
        pid: u32,
    },
    // The wire names predate the word "console" here; they stay for compatibility.
    #[serde(rename = "session")]
    Console {
        info: ConsoleInfo,
    },
    #[serde(rename = "sessions")]
    Consoles {
        #[serde(rename = "sessions")]
        consoles: Vec<ConsoleInfo>,
    },
    Waited {
        met: bool,
        info: ConsoleInfo,
    },
    Ok,
    Error {
        error: WireError,
    },
}

impl Response {
    /// The response that carries `err` to the client.
    pub(crate) fn from_error(err: &ConsoleError) -> Self {
        Self::Error { error: err.into() }
    }
}

/// Writes `msg` as one JSON line and flushes.
pub(crate) fn write_line<T: Serialize>(w: &mut impl Write, msg: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// Reads one JSON line. `Ok(None)` at end of stream.
pub(crate) fn read_line<T: for<'de> Deserialize<'de>>(
    r: &mut impl BufRead,
) -> Result<Option<T>, ConsoleError> {
    let mut line = Vec::new();
    let n = std::io::Read::take(r, MAX_LINE as u64)
        .read_until(b'\n', &mut line)
        .map_err(|e| ConsoleError::Protocol(format!("reading from the socket: {e}")))?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(ConsoleError::Protocol(format!(
            "message longer than {MAX_LINE} bytes or cut off"
        )));
    }
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(|e| ConsoleError::Protocol(format!("malformed message: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_shape_is_stable() {
        let json = serde_json::to_string(&Request::Hello { version: 7 }).unwrap();
        assert_eq!(json, r#"{"op":"hello","version":7}"#);
        let json = serde_json::to_string(&Response::Hello { version: 7, pid: 3 }).unwrap();
        assert_eq!(json, r#"{"kind":"hello","version":7,"pid":3}"#);
    }

    #[test]
    fn console_answers_keep_their_wire_names() {
        let json = serde_json::to_value(&Response::Consoles { consoles: vec![] }).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "sessions", "sessions": []})
        );
        let err = WireError::from(&ConsoleError::UnknownConsole("x".into()));
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "unknown_session", "id": "x"})
        );
    }

    #[test]
    fn lines_round_trip() {
        let mut buf = Vec::new();
        write_line(&mut buf, &Request::Kill { id: Uuid::nil() }).unwrap();
        write_line(&mut buf, &Request::List).unwrap();
        let mut r = std::io::Cursor::new(buf);
        assert!(matches!(
            read_line(&mut r).unwrap(),
            Some(Request::Kill { .. })
        ));
        assert!(matches!(read_line(&mut r).unwrap(), Some(Request::List)));
        assert!(read_line::<Request>(&mut r).unwrap().is_none());
    }

    #[test]
    fn errors_keep_their_kind_across_the_wire() {
        let err = ConsoleError::InvalidPattern {
            pattern: "(".into(),
            reason: "unclosed group".into(),
        };
        let line = serde_json::to_string(&Response::from_error(&err)).unwrap();
        let Response::Error { error } = serde_json::from_str(&line).unwrap() else {
            panic!("not an error: {line}");
        };
        assert_eq!(ConsoleError::from(error).to_string(), err.to_string());
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        let mut r = std::io::Cursor::new(b"not json\n".to_vec());
        let err = read_line::<Request>(&mut r).unwrap_err();
        assert!(err.to_string().contains("malformed message"), "{err}");
    }
}
