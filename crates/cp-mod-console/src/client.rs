//! The client side: a connection to the project's console server, started on demand.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use uuid::Uuid;

use crate::handle::SessionHandle;
use crate::protocol::{PROTOCOL_VERSION, Request, Response, read_line, write_line};
use crate::{ConsoleError, RunPaths, SessionInfo, SpawnSpec, launch, meta};

/// How a client finds and starts its server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The project root (made canonical by [`ConsoleClient::new`]).
    pub project_root: PathBuf,
    /// The server executable, run as `EXE console-server --project ROOT`. `None`: the
    /// `CP_CONSOLE_SERVER_EXE` environment variable, else the current executable.
    pub server_exe: Option<PathBuf>,
    /// Extra environment for a server this client starts (e.g. `CP_CONSOLE_IDLE_TIMEOUT_MS`).
    pub server_env: BTreeMap<String, String>,
    /// How long to wait for a starting server to answer.
    pub start_timeout: Duration,
}

impl ClientConfig {
    /// Defaults for `project_root`.
    pub fn new(project_root: impl Into<PathBuf>) -> Self {
        Self {
            project_root: project_root.into(),
            server_exe: None,
            server_env: BTreeMap::new(),
            start_timeout: Duration::from_secs(10),
        }
    }
}

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

/// Most idle wait connections a client keeps open for reuse.
const MAX_IDLE_WAIT_CONNECTIONS: usize = 4;

struct Inner {
    paths: RunPaths,
    config: ClientConfig,
    conn: Mutex<Option<Connection>>,
    /// Connections that served a wait and are free again. A wait blocks its connection, so it
    /// cannot use the shared one; reusing these saves a connect, a `hello` round trip and a
    /// server thread per wait.
    idle_waits: Mutex<Vec<Connection>>,
}

/// A client of one project's console server. Cheap to clone; clones share one connection.
///
/// Only [`ConsoleClient::spawn`] starts a server. Every other call works without one, from
/// the files on disk: sessions that were running when the server died show as lost.
#[derive(Clone)]
pub struct ConsoleClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ConsoleClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleClient")
            .field("root", &self.inner.paths.root())
            .finish_non_exhaustive()
    }
}

/// Whether a call may start a server.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launch {
    Yes,
    No,
}

impl ConsoleClient {
    /// A client for the project at `config.project_root` (which must exist). Connects lazily.
    pub fn new(config: ClientConfig) -> Result<Self, ConsoleError> {
        let root = std::fs::canonicalize(&config.project_root).map_err(ConsoleError::io(
            "opening the project root",
            &config.project_root,
        ))?;
        let paths = RunPaths::new(&root);
        let config = ClientConfig {
            project_root: root,
            ..config
        };
        Ok(Self {
            inner: Arc::new(Inner {
                paths,
                config,
                conn: Mutex::new(None),
                idle_waits: Mutex::new(Vec::new()),
            }),
        })
    }

    /// A client with the default configuration.
    pub fn for_project(root: impl AsRef<Path>) -> Result<Self, ConsoleError> {
        Self::new(ClientConfig::new(root.as_ref()))
    }

    /// The project's run paths (socket, logs, metadata).
    pub fn paths(&self) -> &RunPaths {
        &self.inner.paths
    }

    /// The project root (canonical).
    pub fn project_root(&self) -> &Path {
        self.inner.paths.root()
    }

    /// Starts a session, starting the server first if none runs.
    pub fn spawn(&self, spec: SpawnSpec) -> Result<SessionHandle, ConsoleError> {
        match self.request(&Request::Spawn { spec }, Launch::Yes)? {
            Response::Session { info } => Ok(SessionHandle::new(self.clone(), info.id)),
            other => Err(unexpected(&other)),
        }
    }

    /// A handle on an existing session (running or finished, in this server or on disk).
    pub fn attach(&self, id: Uuid) -> Result<SessionHandle, ConsoleError> {
        let handle = SessionHandle::new(self.clone(), id);
        handle.info()?;
        Ok(handle)
    }

    /// Every session the project has a record of, oldest first.
    pub fn list(&self) -> Result<Vec<SessionInfo>, ConsoleError> {
        match self.request(&Request::List, Launch::No) {
            Ok(Response::Sessions { sessions }) => Ok(sessions),
            Ok(other) => Err(unexpected(&other)),
            Err(ConsoleError::ServerUnavailable { .. }) => Ok(meta::list_metas(self.paths())
                .into_iter()
                .map(|i| meta::orphaned_view(self.paths(), i))
                .collect()),
            Err(e) => Err(e),
        }
    }

    /// The pid of the running server, if one answers.
    pub fn server_pid(&self) -> Option<u32> {
        let mut guard = self
            .inner
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if guard.is_none()
            && let Ok(Connect::Open(c)) = Connection::open(self.paths())
        {
            *guard = Some(c);
        }
        guard.as_ref().map(|c| c.server_pid)
    }

    /// Asks the server to kill every session and exit, and waits until it has closed its
    /// socket. No-op when none runs.
    pub fn shutdown_server(&self) -> Result<(), ConsoleError> {
        match self.request(&Request::Shutdown, Launch::No) {
            Ok(_) | Err(ConsoleError::ServerUnavailable { .. }) => {
                *self
                    .inner
                    .conn
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = None;
                self.idle_waits().clear();
                let deadline = std::time::Instant::now() + self.inner.config.start_timeout;
                while launch::socket_answers(self.paths()) {
                    if std::time::Instant::now() >= deadline {
                        return Err(ConsoleError::Server(format!(
                            "the console server for {} did not exit after a shutdown request",
                            self.project_root().display()
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
    pub(crate) fn request(
        &self,
        request: &Request,
        launch: Launch,
    ) -> Result<Response, ConsoleError> {
        let mut guard = self
            .inner
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
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

    /// Sends `request` on a connection of its own, for calls that block for long (waits), so
    /// they do not hold up other calls on this client. The connection is an idle one from
    /// an earlier wait when there is one, and goes back to the pool afterwards.
    pub(crate) fn request_alone(&self, request: &Request) -> Result<Response, ConsoleError> {
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

    fn idle_waits(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.inner
            .idle_waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn connect(&self, launch: Launch) -> Result<Connection, ConsoleError> {
        for _ in 0..3 {
            if let Connect::Open(c) = Connection::open(self.paths())? {
                return Ok(c);
            }
            if launch == Launch::No {
                return Err(self.unavailable());
            }
            launch::ensure_server(self.paths(), &self.inner.config)?;
        }
        Err(self.unavailable())
    }

    fn unavailable(&self) -> ConsoleError {
        ConsoleError::ServerUnavailable {
            root: self.project_root().to_path_buf(),
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

pub(crate) fn unexpected(response: &Response) -> ConsoleError {
    ConsoleError::Protocol(format!(
        "unexpected answer from the console server: {response:?}"
    ))
}
