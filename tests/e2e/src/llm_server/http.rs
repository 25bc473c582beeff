//! The HTTP/1.1 of the scripted server: reading a request ([`RecordedRequest`]) and writing a
//! [`Reply`], streams as `transfer-encoding: chunked`, one HTTP chunk per scripted chunk.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::reply::{Body, Reply, StreamEnd};

/// Longest a stalled reply stays open.
const MAX_STALL: Duration = Duration::from_secs(30);
/// Largest request accepted (headers plus body).
const MAX_REQUEST: usize = 16 * 1024 * 1024;

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// Path with query, e.g. `/v1/messages`.
    pub path: String,
    /// Headers with lower-case names, in order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Value::Null` when it is not JSON (see `raw_body`).
    pub body: Value,
    /// The body as text.
    pub raw_body: String,
    /// When the whole request had arrived (for timing the host between requests).
    pub received: std::time::Instant,
}

impl RecordedRequest {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request: its head, and a body of `content-length` or chunked.
pub(super) fn read_request(stream: &TcpStream) -> io::Result<RecordedRequest> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    let mut total = line.len();
    loop {
        let mut header = String::new();
        let n = reader.read_line(&mut header)?;
        total += n;
        if n == 0 || total > MAX_REQUEST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "incomplete request head",
            ));
        }
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let body = if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(&mut reader)?
    } else {
        let length = find("content-length")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        if length > MAX_REQUEST {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request too large",
            ));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    // Before the body is parsed: the time is the request's, not this server's.
    let received = std::time::Instant::now();
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    Ok(RecordedRequest {
        method,
        path,
        headers,
        body: serde_json::from_str(&raw_body).unwrap_or(Value::Null),
        raw_body,
        received,
    })
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size_text = size_line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 || body.len() + size > MAX_REQUEST {
            let mut trailer = String::new();
            while reader.read_line(&mut trailer)? > 2 {
                trailer.clear();
            }
            return Ok(body);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Writes `reply` and closes the connection; a stream stops early once `stop` is set.
pub(super) fn write_reply(
    mut stream: TcpStream,
    reply: &Reply,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("connection: close\r\n");
    match &reply.body {
        Body::Full(bytes) => {
            let _ = write!(head, "content-length: {}\r\n\r\n", bytes.len());
            stream.write_all(head.as_bytes())?;
            stream.write_all(bytes)?;
            stream.flush()?;
        }
        Body::Stream { chunks, delay, end } => {
            head.push_str("transfer-encoding: chunked\r\n\r\n");
            stream.write_all(head.as_bytes())?;
            stream.flush()?;
            for chunk in chunks {
                if !delay.is_zero() {
                    thread::sleep(*delay);
                }
                if stop.load(Ordering::SeqCst) {
                    return Ok(());
                }
                stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                stream.write_all(chunk)?;
                stream.write_all(b"\r\n")?;
                stream.flush()?;
            }
            match end {
                StreamEnd::Complete => {
                    stream.write_all(b"0\r\n\r\n")?;
                    stream.flush()?;
                }
                StreamEnd::Cut => {}
                StreamEnd::Stall => stall(&mut stream, stop),
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
    Ok(())
}

/// Keeps the connection open and silent until the client hangs up or the server stops.
fn stall(stream: &mut TcpStream, stop: &AtomicBool) {
    let started = Instant::now();
    let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::SeqCst) && started.elapsed() < MAX_STALL {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Err(err)
                if !matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return;
            }
            _ => {}
        }
    }
}
