//! The connections of one client to its console server: a shared one for quick requests, a
//! small pool for waits, reconnecting (and, when allowed, starting the server) as needed.

use std::io::{BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::config::ClientConfig;
use super::launch;
use crate::ConsoleError;
use crate::paths::RunPaths;
use crate::protocol::{PROTOCOL_VERSION, Request, Response, read_line, write_line};

/// Most idle wait connections a client keeps open for reuse.
const MAX_IDLE_WAIT_CONNECTIONS: usize = 4;

/// One open, version-checked connection.
struct Connection {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    server_pid: u32,
}

/// Result of trying to connect.
enum Connect {
    Open(Connection),
    NoServer,
}

impl Connection {
    fn open(paths: &RunPaths) -> Result<Connect, ConsoleError> {
        let Ok(stream) = UnixStream::connect(paths.socket()) else {
            // Missing or stale socket: no live server.
            return Ok(Connect::NoServer);
        };
        let read_half = stream.try_clone().map_err(ConsoleError::io(
            "cloning the console socket",
            paths.socket(),
        ))?;
        let mut conn = Self {
            reader: BufReader::new(read_half),
            writer: stream,
            server_pid: 0,
        };
        if write_line(
            &mut conn.writer,
            &Request::Hello {
                version: PROTOCOL_VERSION,
            },
        )
        .is_err()
        {
            return Ok(Connect::NoServer);
        }
        match read_line::<Response>(&mut conn.reader) {
            Ok(Some(Response::Hello { version, pid })) => {
                if version != PROTOCOL_VERSION {
                    return Err(ConsoleError::VersionMismatch {
                        server_version: version,
                        client_version: PROTOCOL_VERSION,
                        server_pid: pid,
                    });
                }
                conn.server_pid = pid;
                Ok(Connect::Open(conn))
            }
            // A server that is shutting down closes new connections without a word.
            Ok(None) | Err(_) => Ok(Connect::NoServer),
            // A server at its limit says so.
            Ok(Some(Response::Error { error })) => Err(error.into()),
            Ok(Some(other)) => Err(ConsoleError::Protocol(format!(
                "expected hello from the server, got {other:?}"
            ))),
        }
    }

    fn roundtrip(&mut self, request: &Request) -> Result<Response, ConsoleError> {
        write_line(&mut self.writer, request)
            .map_err(|e| ConsoleError::Protocol(format!("sending to the console server: {e}")))?;
        read_line(&mut self.reader)?.ok_or_else(|| {
            ConsoleError::Protocol("the console server closed the connection".into())
        })
    }
}

/// Whether a call may start a server.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Launch {
    Yes,
    No,
}

/// The connections of one client (shared by its clones and by the handles it gave out).
pub(super) struct Transport {
    paths: RunPaths,
    config: ClientConfig,
    conn: Mutex<Option<Connection>>,
    /// Connections that served a wait and are free again. A wait blocks its connection, so it
    /// cannot use the shared one; reusing these saves a connect, a `hello` round trip and a
    /// server thread per wait.
    idle_waits: Mutex<Vec<Connection>>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleClient")
            .field("root", &self.paths.root())
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// Connections for the project of `paths`; nothing is opened yet.
    pub(super) fn new(paths: RunPaths, config: ClientConfig) -> Self {
        Self {
            paths,
            config,
            conn: Mutex::new(None),
            idle_waits: Mutex::new(Vec::new()),
        }
    }

    /// The project's run paths.
    pub(super) fn paths(&self) -> &RunPaths {
        &self.paths
    }

    /// The pid of the running server, if one answers.
    pub(super) fn server_pid(&self) -> Option<u32> {
        let mut guard = self.shared();
        if guard.is_none()
            && let Ok(Connect::Open(c)) = Connection::open(&self.paths)
        {
            *guard = Some(c);
        }
        guard.as_ref().map(|c| c.server_pid)
    }

    /// Asks the server to kill every console and exit, and waits until it has closed its
    /// socket and its process is gone (so a caller that then exits leaves nothing behind).
    /// No-op when none runs.
    pub(super) fn shutdown_server(&self) -> Result<(), ConsoleError> {
        // `server_pid` opens a connection (never launching a server) when none is open. A
        // server running in this very process (a thread, as in tests) ends without exiting.
        let pid = self
            .server_pid()
            .filter(|&pid| pid != std::process::id())
            .and_then(|pid| i32::try_from(pid).ok());
        match self.request(&Request::Shutdown, Launch::No) {
            Ok(_) | Err(ConsoleError::ServerUnavailable { .. }) => {
                *self.shared() = None;
                self.idle_waits().clear();
                let deadline = Instant::now() + self.config.start_timeout;
                while launch::socket_answers(&self.paths)
                    || pid.is_some_and(cp_base::proctree::is_alive)
                {
                    if Instant::now() >= deadline {
                        return Err(ConsoleError::Server(format!(
                            "the console server for {} did not exit after a shutdown request",
                            self.paths.root().display()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Sends `request` on the shared connection, (re)connecting as needed.
    pub(super) fn request(
        &self,
        request: &Request,
        launch: Launch,
    ) -> Result<Response, ConsoleError> {
        let mut guard = self.shared();
        let mut last_err = None;
        for _ in 0..3 {
            if guard.is_none() {
                *guard = Some(self.connect(launch)?);
            }
            let Some(conn) = guard.as_mut() else { continue };
            match conn.roundtrip(request) {
                Ok(response) => return into_result(response),
                Err(e) => {
                    // The server went away (or restarted): reconnect and retry.
                    *guard = None;
                    last_err = Some(e);
                }
            }
        }
        Err(last_err.unwrap_or_else(|| self.unavailable()))
    }

    /// Sends `request` on a connection of its own and hangs up without waiting for any
    /// answer, starting the server first if none answers. The `hello` goes with it, unanswered
    /// too: the server reads both from its side of the closed connection and carries the
    /// request out (see the server's `serve`). Nothing is heard back, so the server's refusals
    /// (a version it does not speak, its limit of clients or consoles) are in its log only.
    pub(super) fn send_unanswered(&self, request: &Request) -> Result<(), ConsoleError> {
        let mut lines = Vec::new();
        let hello = Request::Hello {
            version: PROTOCOL_VERSION,
        };
        write_line(&mut lines, &hello)
            .and_then(|()| write_line(&mut lines, request))
            .map_err(|e| ConsoleError::Protocol(format!("encoding a request: {e}")))?;
        for _ in 0..3 {
            // A refused connect is a missing or stale socket: no live server.
            if let Ok(mut stream) = UnixStream::connect(self.paths.socket())
                && stream.write_all(&lines).is_ok()
            {
                return Ok(());
            }
            launch::ensure_server(&self.paths, &self.config)?;
        }
        Err(self.unavailable())
    }

    /// Sends `request` on a connection of its own, for calls that block for long (waits), so
    /// they do not hold up other calls on this client. The connection is an idle one from
    /// an earlier wait when there is one, and goes back to the pool afterwards.
    pub(super) fn request_alone(&self, request: &Request) -> Result<Response, ConsoleError> {
        let pooled = self.idle_waits().pop();
        let reused = pooled.is_some();
        let mut conn = match pooled {
            Some(c) => c,
            None => self.connect(Launch::No)?,
        };
        let response = match conn.roundtrip(request) {
            Ok(r) => r,
            // An idle connection may belong to a server that has since exited: try once
            // more on a fresh one, which also tells "no server" apart from other errors.
            Err(_) if reused => {
                conn = self.connect(Launch::No)?;
                conn.roundtrip(request)?
            }
            Err(e) => return Err(e),
        };
        let mut idle = self.idle_waits();
        if idle.len() < MAX_IDLE_WAIT_CONNECTIONS {
            idle.push(conn);
        }
        drop(idle);
        into_result(response)
    }

    fn shared(&self) -> MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn idle_waits(&self) -> MutexGuard<'_, Vec<Connection>> {
        self.idle_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn connect(&self, launch: Launch) -> Result<Connection, ConsoleError> {
        for _ in 0..3 {
            if let Connect::Open(c) = Connection::open(&self.paths)? {
                return Ok(c);
            }
            if launch == Launch::No {
                return Err(self.unavailable());
            }
            launch::ensure_server(&self.paths, &self.config)?;
        }
        Err(self.unavailable())
    }

    fn unavailable(&self) -> ConsoleError {
        ConsoleError::ServerUnavailable {
            root: self.paths.root().to_path_buf(),
        }
    }
}

/// Turns an error response into the matching error.
fn into_result(response: Response) -> Result<Response, ConsoleError> {
    match response {
        Response::Error { error } => Err(error.into()),
        other => Ok(other),
    }
}

/// The error for an answer that does not fit the request.
pub(super) fn unexpected(response: &Response) -> ConsoleError {
    ConsoleError::Protocol(format!(
        "unexpected answer from the console server: {response:?}"
    ))
}
