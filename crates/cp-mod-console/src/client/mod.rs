//! The client side: a connection to the project's console server, started on demand, and
//! handles on the consoles it runs.
//!
//! Dependencies point one way: `ConsoleClient` (here) → [`handle`] → [`transport`] →
//! [`launch`] → [`config`], all on top of the crate's shared files (protocol, paths, meta).

mod config;
mod handle;
mod launch;
mod transport;

use std::path::Path;
use std::sync::Arc;

use uuid::Uuid;

pub use self::config::ClientConfig;
pub use self::handle::{ConsoleHandle, Output, READ_CHUNK_MAX, RawTail, WaitOutcome};
pub use self::launch::SERVER_EXE_ENV;
use self::transport::{Launch, Transport, unexpected};
use crate::console_info::{ConsoleInfo, SpawnSpec};
use crate::paths::RunPaths;
use crate::protocol::{Request, Response};
use crate::{ConsoleError, meta};

/// A client of one project's console server. Cheap to clone; clones share one connection.
///
/// Only [`ConsoleClient::spawn`] starts a server. Every other call works without one, from
/// the files on disk: consoles that were running when the server died show as lost.
#[derive(Clone)]
pub struct ConsoleClient {
    transport: Arc<Transport>,
}

impl std::fmt::Debug for ConsoleClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.transport.fmt(f)
    }
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
            transport: Arc::new(Transport::new(paths, config)),
        })
    }

    /// A client with the default configuration.
    pub fn for_project(root: impl AsRef<Path>) -> Result<Self, ConsoleError> {
        Self::new(ClientConfig::new(root.as_ref()))
    }

    /// The project's run paths (socket, logs, metadata).
    pub fn paths(&self) -> &RunPaths {
        self.transport.paths()
    }

    /// The project root (canonical).
    pub fn project_root(&self) -> &Path {
        self.paths().root()
    }

    /// Starts a console, starting the server first if none runs.
    pub fn spawn(&self, spec: SpawnSpec) -> Result<ConsoleHandle, ConsoleError> {
        match self
            .transport
            .request(&Request::Spawn { spec }, Launch::Yes)?
        {
            Response::Console { info } => Ok(self.handle(info.id)),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks the server to start a console and returns without waiting for it: the request
    /// is sent whole on a connection of its own, and the server starts the console after this
    /// client has hung up (even when its process has exited). Starts the server first if none
    /// runs. For a caller that needs no handle and must not wait, as the hook process asking
    /// for a warm run at every edit. Only a failure to reach the server is an error; what the
    /// server refuses (its limits) is in its log.
    pub fn spawn_unanswered(&self, spec: SpawnSpec) -> Result<(), ConsoleError> {
        self.transport.send_unanswered(&Request::Spawn { spec })
    }

    /// A handle on an existing console (running or finished, in this server or on disk).
    pub fn attach(&self, id: Uuid) -> Result<ConsoleHandle, ConsoleError> {
        let handle = self.handle(id);
        handle.info()?;
        Ok(handle)
    }

    /// Every console the project has a record of, oldest first.
    pub fn list(&self) -> Result<Vec<ConsoleInfo>, ConsoleError> {
        match self.transport.request(&Request::List, Launch::No) {
            Ok(Response::Consoles { consoles }) => Ok(consoles),
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
        self.transport.server_pid()
    }

    /// Asks the server to kill every console and exit, and waits until it has closed its
    /// socket. No-op when none runs.
    pub fn shutdown_server(&self) -> Result<(), ConsoleError> {
        self.transport.shutdown_server()
    }

    fn handle(&self, id: Uuid) -> ConsoleHandle {
        ConsoleHandle::new(Arc::clone(&self.transport), id)
    }
}
