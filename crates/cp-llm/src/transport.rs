//! HTTP for the providers: one POST with retries, answered by a byte stream.
//!
//! Each attempt runs on its own short-lived thread that performs the blocking request and
//! forwards the response bytes through a channel. The caller waits on that channel in short
//! slices and checks the cancel token between them, so Esc cancels promptly even while the
//! server is silent. A cancelled attempt's thread is abandoned: it ends at its next read, when
//! the server closes, or at the idle timeout, whichever comes first.
//!
//! Retries happen only before any response content is handed out, so the UI never shows text
//! from an attempt that is then thrown away.

use std::io::Read;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread;
use std::time::Duration;

use super::config::{ProviderConfig, RetryPolicy};
use super::error::{LlmError, abbreviate};
use super::sse::{self, EventDecoder};
use super::types::{Response, StreamEvent};
use cp_base::CancelToken;

/// How often a waiting caller looks at the cancel token.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// Most of an error body kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Read buffer size of the attempt thread.
const READ_CHUNK: usize = 16 * 1024;

/// A POST request ready to send.
pub(super) struct HttpRequest {
    /// Full URL.
    pub url: String,
    /// Extra headers (the secret ones included; never logged).
    pub headers: Vec<(&'static str, String)>,
    /// JSON body.
    pub body: Vec<u8>,
}

/// Sends requests for one provider.
pub(super) struct Transport {
    agent: ureq::Agent,
    retry: RetryPolicy,
    label: String,
    key_hint: &'static str,
}

/// What an attempt thread reports.
enum Wire {
    Head {
        status: u16,
        retry_after: Option<Duration>,
        content_type: String,
        location: String,
    },
    Chunk(Vec<u8>),
    End,
    /// The request could not be sent or the body broke; `retryable` for network trouble.
    Failed {
        message: String,
        retryable: bool,
    },
}

impl Transport {
    /// A transport for `config`'s provider.
    pub(super) fn new(config: &ProviderConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(config.timeouts.connect))
            .timeout_per_read(Some(config.timeouts.idle))
            .timeout_per_write(Some(config.timeouts.idle))
            // Compressed event streams can be held back by the decoder; tokens should flow.
            .accept_encoding("identity")
            .user_agent(concat!("context-pilot/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self {
            agent,
            retry: config.retry,
            label: config.label(),
            key_hint: config.kind.key_var(),
        }
    }

    /// Sends `request` as [`open_stream`](Self::open_stream) does and decodes the event stream
    /// that answers it with the decoder `decoder` makes for this provider's label.
    pub(super) fn stream<D: EventDecoder>(
        &self,
        request: &HttpRequest,
        decoder: impl FnOnce(&str) -> D,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError> {
        let mut body = self.open_stream(request, cancel, on_event)?;
        sse::decode(decoder(&self.label), || body.next_chunk(cancel), on_event)
    }

    /// Sends `request`, retrying transient failures, until a 2xx response starts; returns
    /// its body. `on_event` receives [`StreamEvent::Retrying`] before each retry.
    pub(super) fn open_stream(
        &self,
        request: &HttpRequest,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<ByteStream, LlmError> {
        let max_attempts = self.retry.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            let failure = match self.attempt(request, cancel)? {
                Attempt::Streaming(stream) => return Ok(stream),
                Attempt::Retryable(failure) => failure,
            };
            if attempt >= max_attempts {
                return Err(LlmError::Unavailable {
                    provider: self.label.clone(),
                    attempts: attempt,
                    status: failure.status,
                    message: failure.message,
                });
            }
            let delay = self.delay_before_retry(attempt, failure.retry_after);
            attempt += 1;
            tracing::warn!(provider = %self.label, attempt, ?delay, reason = %failure.message, "retrying LLM request");
            on_event(StreamEvent::Retrying {
                attempt,
                delay,
                reason: failure.message,
            });
            sleep_unless_cancelled(delay, cancel)?;
        }
    }

    fn delay_before_retry(&self, failed_attempts: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.retry.max_retry_after);
        }
        let factor = 2u32.saturating_pow(failed_attempts.saturating_sub(1));
        self.retry
            .initial_backoff
            .saturating_mul(factor)
            .min(self.retry.max_backoff)
    }

    fn attempt(&self, request: &HttpRequest, cancel: &CancelToken) -> Result<Attempt, LlmError> {
        let rx = spawn_attempt(self.agent.clone(), request);
        let mut stream = ByteStream {
            rx,
            label: self.label.clone(),
        };
        let head = match stream.recv(cancel)? {
            Some(Wire::Head {
                status,
                retry_after,
                content_type,
                location,
            }) => (status, retry_after, content_type, location),
            Some(Wire::Failed {
                message,
                retryable: true,
            }) => {
                return Ok(Attempt::Retryable(Failure {
                    status: None,
                    message,
                    retry_after: None,
                }));
            }
            Some(Wire::Failed {
                message,
                retryable: false,
            }) => {
                return Err(LlmError::Connection {
                    provider: self.label.clone(),
                    message,
                });
            }
            Some(Wire::Chunk(_) | Wire::End) | None => {
                return Ok(Attempt::Retryable(Failure {
                    status: None,
                    message: "connection closed before a response arrived".to_owned(),
                    retry_after: None,
                }));
            }
        };
        let (status, retry_after, content_type, location) = head;
        if (200..300).contains(&status) {
            if content_type.contains("application/json") {
                let body = stream.read_error_body(cancel)?;
                return Err(LlmError::Protocol {
                    provider: self.label.clone(),
                    detail: format!(
                        "expected an event stream (the request asked for stream: true), got JSON: {}",
                        abbreviate(&body, 300)
                    ),
                });
            }
            return Ok(Attempt::Streaming(stream));
        }
        let body = stream.read_error_body(cancel)?;
        let message = error_message(&body, status);
        let provider = self.label.clone();
        match status {
            401 | 403 => Err(LlmError::Auth {
                provider,
                status,
                message,
                key_hint: self.key_hint,
            }),
            408 | 409 | 429 | 500..=599 => Ok(Attempt::Retryable(Failure {
                status: Some(status),
                message: format!("HTTP {status}: {message}"),
                retry_after,
            })),
            300..=399 => Err(LlmError::Rejected {
                provider,
                status,
                message: format!(
                    "the server redirects to `{location}`; set the base URL to the final address"
                ),
            }),
            404 => Err(LlmError::Rejected {
                provider,
                status,
                message: format!(
                    "{message} (POST {}; check the base URL and the model name)",
                    request.url
                ),
            }),
            _ => Err(LlmError::Rejected {
                provider,
                status,
                message,
            }),
        }
    }
}

enum Attempt {
    Streaming(ByteStream),
    Retryable(Failure),
}

struct Failure {
    status: Option<u16>,
    message: String,
    retry_after: Option<Duration>,
}

/// The body of a successful response, chunk by chunk as the network delivers it.
pub(super) struct ByteStream {
    rx: Receiver<Wire>,
    label: String,
}

impl ByteStream {
    /// The next chunk, `Ok(None)` at a clean end of the body, or
    /// [`LlmError::StreamCut`] when the connection broke.
    pub(super) fn next_chunk(&mut self, cancel: &CancelToken) -> Result<Option<Vec<u8>>, LlmError> {
        match self.recv(cancel)? {
            Some(Wire::Chunk(bytes)) => Ok(Some(bytes)),
            Some(Wire::End) => Ok(None),
            Some(Wire::Failed { message, .. }) => Err(LlmError::StreamCut {
                provider: self.label.clone(),
                detail: message,
            }),
            Some(Wire::Head { .. }) | None => Err(LlmError::StreamCut {
                provider: self.label.clone(),
                detail: "the connection was lost".to_owned(),
            }),
        }
    }

    /// Waits for the next message, checking `cancel` every [`CANCEL_POLL`]. `None` when the
    /// attempt thread is gone.
    fn recv(&mut self, cancel: &CancelToken) -> Result<Option<Wire>, LlmError> {
        loop {
            if cancel.is_cancelled() {
                return Err(LlmError::Cancelled);
            }
            match self.rx.recv_timeout(CANCEL_POLL) {
                Ok(wire) => return Ok(Some(wire)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }

    /// Reads the rest of a (short) error body as text, whatever state it ends in.
    fn read_error_body(&mut self, cancel: &CancelToken) -> Result<String, LlmError> {
        let mut body = Vec::new();
        while let Some(Wire::Chunk(bytes)) = self.recv(cancel)? {
            body.extend_from_slice(&bytes);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

/// Starts one attempt on its own thread.
fn spawn_attempt(agent: ureq::Agent, request: &HttpRequest) -> Receiver<Wire> {
    let (tx, rx) = sync_channel(64);
    let url = request.url.clone();
    let headers = request.headers.clone();
    let body = request.body.clone();
    let spawned = thread::Builder::new()
        .name("llm-http".to_owned())
        .spawn(move || run_attempt(&agent, &url, &headers, &body, &tx));
    if let Err(err) = spawned {
        // Without a thread there is no request; the receiver reports a closed connection,
        // which is retried like any network failure.
        tracing::error!(%err, "could not start the LLM request thread");
    }
    rx
}

fn run_attempt(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&'static str, String)],
    body: &[u8],
    tx: &SyncSender<Wire>,
) {
    let mut builder = agent.post(url);
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    let response = match builder.send(body) {
        Ok(response) => response,
        Err(err) => {
            let retryable = is_retryable(&err);
            let _ = tx.send(Wire::Failed {
                message: describe(&err),
                retryable,
            });
            return;
        }
    };
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let head = Wire::Head {
        status,
        retry_after: parse_retry_after(&header("retry-after-ms"), &header("retry-after")),
        content_type: header("content-type").to_ascii_lowercase(),
        location: header("location"),
    };
    if tx.send(head).is_err() {
        return;
    }
    let limit = if (200..300).contains(&status) {
        usize::MAX
    } else {
        ERROR_BODY_LIMIT
    };
    let mut reader = response.into_body().into_reader();
    let mut total = 0usize;
    loop {
        let mut buf = vec![0u8; READ_CHUNK];
        let wire = match reader.read(&mut buf) {
            Ok(0) => Wire::End,
            Ok(n) => {
                buf.truncate(n);
                total = total.saturating_add(n);
                Wire::Chunk(buf)
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => Wire::Failed {
                message: describe_io(&err),
                retryable: true,
            },
        };
        let last = !matches!(wire, Wire::Chunk(_)) || total >= limit;
        // A send error means the caller gave up (cancel); stop reading.
        if tx.send(wire).is_err() || last {
            if total >= limit {
                let _ = tx.send(Wire::End);
            }
            return;
        }
    }
}

fn is_retryable(err: &ureq::Error) -> bool {
    matches!(
        err,
        ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::HostNotFound
            | ureq::Error::ConnectionFailed
            | ureq::Error::Protocol(_)
    )
}

fn describe(err: &ureq::Error) -> String {
    match err {
        ureq::Error::Io(io) => describe_io(io),
        ureq::Error::Timeout(which) => format!("timed out ({which})"),
        ureq::Error::HostNotFound => "host not found (check the base URL)".to_owned(),
        ureq::Error::ConnectionFailed => "could not connect".to_owned(),
        ureq::Error::BadUri(uri) => format!("invalid URL `{uri}` (check the base URL)"),
        other => other.to_string(),
    }
}

fn describe_io(err: &std::io::Error) -> String {
    // ureq reports its own errors (timeouts, bad chunking) wrapped in io::Error.
    match err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
    {
        Some(inner) => describe(inner),
        None => err.to_string(),
    }
}

/// `retry-after-ms` (OpenAI) wins over `retry-after` in seconds. HTTP-date values are not
/// used; exponential backoff applies instead.
fn parse_retry_after(millis: &str, seconds: &str) -> Option<Duration> {
    let parse = |text: &str| {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = parse(millis) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    parse(seconds).map(Duration::from_secs_f64)
}

/// The provider's error text from an error body: `{"error": {"message": ...}}` (Anthropic,
/// OpenAI), `{"error": "..."}` (Ollama), `{"message": ...}`, or the raw body.
pub(super) fn error_message(body: &str, status: u16) -> String {
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
        let found = value
            .pointer("/error/message")
            .or_else(|| value.get("error").filter(|e| e.is_string()))
            .or_else(|| value.get("message"))
            .and_then(serde_json::Value::as_str);
        if let Some(message) = found {
            return abbreviate(message, 500);
        }
    }
    if body.trim().is_empty() {
        return format!("no error text (HTTP {status})");
    }
    abbreviate(body, 500)
}

/// Sleeps `delay`, waking every [`CANCEL_POLL`] to honour `cancel`.
fn sleep_unless_cancelled(delay: Duration, cancel: &CancelToken) -> Result<(), LlmError> {
    let mut left = delay;
    while !left.is_zero() {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let step = left.min(CANCEL_POLL);
        thread::sleep(step);
        left = left.saturating_sub(step);
    }
    if cancel.is_cancelled() {
        Err(LlmError::Cancelled)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_shapes() {
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(error_message(anthropic, 401), "invalid x-api-key");
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#, 404),
            "model 'x' not found"
        );
        assert_eq!(error_message("Bad Gateway", 502), "Bad Gateway");
        assert_eq!(error_message("", 502), "no error text (HTTP 502)");
    }

    #[test]
    fn retry_after_parsing() {
        assert_eq!(parse_retry_after("", "2"), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("150", "2"),
            Some(Duration::from_millis(150))
        );
        assert_eq!(parse_retry_after("", "Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("", "-1"), None);
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let config = ProviderConfig {
            retry: RetryPolicy {
                max_attempts: 5,
                initial_backoff: Duration::from_secs(1),
                max_backoff: Duration::from_secs(5),
                max_retry_after: Duration::from_secs(10),
            },
            ..crate::test_support::anthropic_config("http://127.0.0.1:9")
        };
        let transport = Transport::new(&config);
        let delays: Vec<u64> = (1..=4)
            .map(|n| transport.delay_before_retry(n, None).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 5]);
        assert_eq!(
            transport
                .delay_before_retry(1, Some(Duration::from_secs(3)))
                .as_secs(),
            3
        );
        assert_eq!(
            transport
                .delay_before_retry(1, Some(Duration::from_secs(99)))
                .as_secs(),
            10
        );
    }

    #[test]
    fn cancelled_sleep_returns_early() {
        let cancel = CancelToken::new();
        cancel.cancel();
        assert!(matches!(
            sleep_unless_cancelled(Duration::from_secs(3600), &cancel),
            Err(LlmError::Cancelled)
        ));
    }
}
