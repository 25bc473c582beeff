//! A scripted LLM endpoint: a real HTTP/1.1 server on `127.0.0.1` that answers each request
//! with the next queued [`Reply`] and records every request for assertions.
//!
//! Streams are sent with `transfer-encoding: chunked`, one HTTP chunk per scripted chunk,
//! each flushed (after an optional delay), so tests control where frames split. A stream can
//! be cut (the connection closes without the final chunk) or stall (stay open and silent).
//! The [`anthropic`], [`openai`], [`responses`] and [`gemini`] builders write the providers' real wire
//! formats. Real agent CLIs also make side requests (titles, quota checks, routing); a
//! [`LlmServer::answer_side_requests`] classifier answers those without consuming the script.
//! A request the real API would refuse for its shape (Gemini's pairing of function calls and
//! responses) is refused the same way, before any script sees it.
//!
//! ```no_run
//! use cp_e2e::llm_server::{LlmServer, anthropic};
//! let server = LlmServer::start().unwrap();
//! server.push(anthropic::text_turn("Hello!"));
//! // point the client at server.url() (ANTHROPIC_BASE_URL) or server.openai_base_url()
//! let requests = server.requests();
//! ```

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;

use http::{read_request, write_reply};

/// Longest a connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Decides whether a request is a side request and how to answer it. Called without a lock
/// held, so a responder may wait for another request (to prove two are in flight at once).
type SideResponder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// A queued answer: a reply written in advance, or one built from the request it answers
/// (e.g. a tool call naming a directory the client chose at run time).
enum Scripted {
    Fixed(Reply),
    Built(Box<dyn Fn(&RecordedRequest) -> Reply + Send>),
}

struct Shared {
    replies: Mutex<VecDeque<Scripted>>,
    side: Mutex<Option<SideResponder>>,
    side_requests: Mutex<Vec<RecordedRequest>>,
    /// Requests refused for breaking the wire format's rules (Gemini's pairing rule).
    refused: Mutex<Vec<RecordedRequest>>,
    /// The `GET /v1/models` list (`None`: 404) and the Anthropic page size.
    models: Mutex<(Option<Vec<ListedModel>>, usize)>,
    model_requests: Mutex<Vec<RecordedRequest>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// When the reply to each of `requests` was written in full (by the request's index);
    /// `None` while it is being written.
    replied: Mutex<Vec<Option<Instant>>>,
    arrived: Condvar,
    stop: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running server. Dropping it stops it.
pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl LlmServer {
    /// Starts a server on a free loopback port.
    pub fn start() -> io::Result<Self> {
        Self::start_on("127.0.0.1")
    }

    /// Starts a server on a free port of every address of this machine, so that the test
    /// hosts (`crate::TestHost`, behind their veth) reach it at their
    /// [`near`](crate::TestHost::near) address ([`url_at`](Self::url_at)).
    pub fn start_for_hosts() -> io::Result<Self> {
        Self::start_on("0.0.0.0")
    }

    fn start_on(ip: &str) -> io::Result<Self> {
        // A blocking accept: a request is taken the moment it connects (the bench times the
        // host by the requests' arrival), and `Drop` wakes it with a connection of its own.
        let listener = TcpListener::bind((ip, 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            replies: Mutex::new(VecDeque::new()),
            side: Mutex::new(None),
            side_requests: Mutex::new(Vec::new()),
            refused: Mutex::new(Vec::new()),
            models: Mutex::new((None, 100)),
            model_requests: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            replied: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("llm-server".into())
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(Self {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL (`ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        if self.addr.ip().is_unspecified() {
            return self.url_at("127.0.0.1");
        }
        format!("http://{}", self.addr)
    }

    /// `http://ADDRESS:PORT`: its base URL as seen at `address` (a server started
    /// [`for hosts`](Self::start_for_hosts)).
    pub fn url_at(&self, address: &str) -> String {
        format!("http://{address}:{}", self.addr.port())
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI-compatible base URL (`OPENAI_BASE_URL`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Queues a reply; requests are answered in queue order. With the queue empty a request
    /// gets a 500 naming the problem.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.replies).push_back(Scripted::Fixed(reply));
    }

    /// Queues a reply that `build` writes from the request it answers, in queue order with
    /// [`LlmServer::push`]'s: for a turn that names what the client chose at run time, such
    /// as the worktree a subagent works in (read from the request's system prompt).
    pub fn push_with(&self, build: impl Fn(&RecordedRequest) -> Reply + Send + 'static) {
        lock(&self.shared.replies).push_back(Scripted::Built(Box::new(build)));
    }

    /// Answers the requests `responder` recognizes (it returns `Some`) with its reply instead
    /// of the queue. They are recorded in [`LlmServer::side_requests`], not in
    /// [`LlmServer::requests`], so the scripted conversation stays countable.
    pub fn answer_side_requests(
        &self,
        responder: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) {
        *lock(&self.shared.side) = Some(Arc::new(responder));
    }

    /// The side requests answered so far (see [`LlmServer::answer_side_requests`]).
    pub fn side_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.side_requests).clone()
    }

    /// The requests refused as the real API would refuse them (a Gemini conversation whose
    /// function responses do not pair with its function calls: HTTP 400 `INVALID_ARGUMENT`).
    /// They consume no scripted reply and are not in [`LlmServer::requests`].
    pub fn refused_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.refused).clone()
    }

    /// Replies not yet used.
    pub fn pending_replies(&self) -> usize {
        lock(&self.shared.replies).len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Serves `models` on `GET /v1/models` (both wire formats), Anthropic's in pages of
    /// `page_size` (the request is answered in the wire format its headers show).
    pub fn set_models(&self, models: Vec<ListedModel>, page_size: usize) {
        *lock(&self.shared.models) = (Some(models), page_size.max(1));
    }

    /// The `GET /v1/models` requests received so far (not part of [`LlmServer::requests`]).
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.model_requests).clone()
    }

    /// Waits until at least `count` requests arrived or `timeout` passed; returns them all.
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        self.wait_for_count(count, timeout);
        lock(&self.shared.requests).clone()
    }

    /// When the reply to request `index` (0-based, as in [`LlmServer::requests`]) had been
    /// written in full: the time the program under test has had its answer since (a benchmark
    /// times the host from here to its next request, leaving out this server's own work).
    pub fn replied_at(&self, index: usize) -> Option<Instant> {
        lock(&self.shared.replied).get(index).copied().flatten()
    }

    /// Waits until at least `count` requests arrived or `timeout` passed; returns how many
    /// did. Copies nothing, so a benchmark waiting on large requests does not compete with the
    /// program it times.
    pub fn wait_for_count(&self, count: usize, timeout: Duration) -> usize {
        let requests = lock(&self.shared.requests);
        self.shared
            .arrived
            .wait_timeout_while(requests, timeout, |requests| requests.len() < count)
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .len()
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the blocked accept; if that connection cannot be made, the acceptor is left
        // to end with the process rather than waited for.
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let woken = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok();
        if let Some(acceptor) = self.acceptor.take()
            && woken
        {
            let _ = acceptor.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    loop {
        let accepted = listener.accept();
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                let _ = thread::Builder::new()
                    .name("llm-server-conn".into())
                    .spawn(move || serve(stream, &shared));
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// One connection, one request, one reply; the connection then closes.
fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(REQUEST_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let Ok(request) = read_request(&stream) else {
        return;
    };
    if models::is_models_request(&request) {
        let reply = {
            let models = lock(&shared.models);
            models::answer(&request, models.0.as_deref(), models.1)
        };
        lock(&shared.model_requests).push(request);
        let _ = write_reply(stream, &reply, &shared.stop);
        return;
    }
    if let Some(reply) = gemini::refuse_unpaired(&request) {
        lock(&shared.refused).push(request);
        let _ = write_reply(stream, &reply, &shared.stop);
        return;
    }
    let responder = lock(&shared.side).clone();
    let side = responder.and_then(|f| f(&request));
    if let Some(reply) = side {
        lock(&shared.side_requests).push(request);
        let _ = write_reply(stream, &reply, &shared.stop);
        return;
    }
    let scripted = lock(&shared.replies).pop_front();
    let reply = scripted.map(|scripted| match scripted {
        Scripted::Fixed(reply) => reply,
        Scripted::Built(build) => build(&request),
    });
    let number = {
        let mut requests = lock(&shared.requests);
        requests.push(request);
        shared.arrived.notify_all();
        requests.len()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            &json!({"error": {"type": "api_error", "message": format!(
                "scripted LLM server: no reply queued for request {number}"
            )}}),
        )
    });
    let _ = write_reply(stream, &reply, &shared.stop);
    let mut replied = lock(&shared.replied);
    if replied.len() < number {
        replied.resize(number, None);
    }
    replied[number - 1] = Some(Instant::now());
}

pub mod anthropic;
pub mod gemini;
mod http;
mod models;
pub mod openai;
mod reply;
pub mod responses;
mod turn;

pub use http::RecordedRequest;
pub use reply::Reply;

pub use models::ListedModel;
pub use turn::Turn;

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use serde_json::Value;

    use super::turn::pieces;
    use super::*;

    fn raw_exchange(server: &LlmServer, request: &str) -> String {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_queue_in_order_and_records_requests() {
        let server = LlmServer::start().unwrap();
        server.push(Reply::sse_split_at("data: 1\n\n", &[3]));
        server.push(anthropic::error(
            401,
            "authentication_error",
            "invalid x-api-key",
        ));
        let body = r#"{"model":"m"}"#;
        let first = raw_exchange(
            &server,
            &format!(
                "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: k\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            ),
        );
        assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
        assert!(
            first.ends_with("3\r\ndat\r\n6\r\na: 1\n\n\r\n0\r\n\r\n"),
            "{first:?}"
        );
        let second = raw_exchange(&server, "GET /x HTTP/1.1\r\n\r\n");
        assert!(second.starts_with("HTTP/1.1 401 Unauthorized"), "{second}");
        assert!(second.contains("invalid x-api-key"));
        let third = raw_exchange(&server, "GET /y HTTP/1.1\r\n\r\n");
        assert!(third.contains("no reply queued for request 3"), "{third}");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(
            (requests[0].method.as_str(), requests[0].path.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(requests[0].header("x-api-key"), Some("k"));
        assert_eq!(requests[0].body, json!({"model": "m"}));
    }

    #[test]
    fn cut_stream_lacks_the_final_chunk() {
        let server = LlmServer::start().unwrap();
        server.push(Reply::sse_split_every("data: hello\n\n", 4).cut_after(6));
        let out = raw_exchange(&server, "GET / HTTP/1.1\r\n\r\n");
        assert!(out.ends_with("4\r\ndata\r\n2\r\n: \r\n"), "{out:?}");
    }

    #[test]
    fn builders_produce_the_wire_format() {
        let turn = Turn::tool_calls(&[("toolu_1", "File_read", r#"{"path":"src/main.rs"}"#)])
            .with_text("Let me look.");
        let sse = anthropic::sse(&turn);
        assert!(sse.starts_with("event: message_start\ndata: {"), "{sse}");
        assert!(sse.contains(r#""partial_json":"{\"path\""#), "{sse}");
        assert!(sse.contains(r#""stop_reason":"tool_use""#));
        assert!(sse.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
        let sse = openai::sse(&turn);
        let chunks: Vec<Value> = sse
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect();
        assert_eq!(
            chunks[2]["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "id": "toolu_1", "type": "function",
                   "function": {"name": "File_read", "arguments": ""}})
        );
        assert!(sse.contains(r#""finish_reason":"tool_calls""#));
        assert!(sse.ends_with("data: [DONE]\n\n"));
        assert_eq!(
            pieces("héllo wörld", 2),
            ["hé", "ll", "o ", "wö", "rl", "d"]
        );
    }

    #[test]
    fn a_gemini_request_with_unpaired_function_responses_is_refused_as_the_api_does() {
        let server = LlmServer::start().unwrap();
        server.push(gemini::text_turn("paired"));
        let post = |contents: Value| {
            let body = json!({"contents": contents}).to_string();
            raw_exchange(
                &server,
                &format!(
                    "POST /v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse HTTP/1.1\r\n\
                     Host: x\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                ),
            )
        };
        let call = json!({"role": "model", "parts": [
            {"functionCall": {"id": "c0", "name": "read_file", "args": {}}}]});
        let answer = json!({"functionResponse": {"id": "c0", "name": "read_file",
                                                 "response": {"output": "x"}}});
        let twice = post(json!([
            {"role": "user", "parts": [{"text": "go"}]},
            call,
            {"role": "user", "parts": [answer, answer]},
        ]));
        assert!(twice.starts_with("HTTP/1.1 400 "), "{twice}");
        assert!(twice.contains(r#""status":"INVALID_ARGUMENT""#), "{twice}");
        assert!(
            twice.contains("number of function response parts"),
            "{twice}"
        );
        // The refusal used no scripted reply: the paired request gets it.
        let once = post(json!([
            {"role": "user", "parts": [{"text": "go"}]},
            call,
            {"role": "user", "parts": [answer]},
        ]));
        assert!(once.starts_with("HTTP/1.1 200 OK"), "{once}");
        assert!(once.contains("paired"), "{once}");
        assert_eq!(server.refused_requests().len(), 1);
        assert_eq!(server.requests().len(), 1);
    }
}
