//! The crate's error type.

use std::path::PathBuf;

use uuid::Uuid;

/// Everything that can go wrong talking to, or running, the console server.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// A file or socket operation failed.
    #[error("{context} ({path}): {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The file or socket involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A console's metadata file could not be parsed.
    #[error("console metadata file {path} is corrupt: {source}; it was left untouched")]
    CorruptMeta {
        /// The metadata file.
        path: PathBuf,
        /// Why it could not be parsed.
        #[source]
        source: serde_json::Error,
    },
    /// The peer sent something that is not valid protocol.
    #[error("console protocol error: {0}")]
    Protocol(String),
    /// The running server speaks another protocol version.
    #[error(
        "the console server (pid {server_pid}) speaks protocol version {server_version} but this \
         client speaks version {client_version}; stop the old server with `kill {server_pid}` \
         (its running consoles will be lost) and retry"
    )]
    VersionMismatch {
        /// Version of the running server.
        server_version: u32,
        /// Version of this client.
        client_version: u32,
        /// Pid of the running server.
        server_pid: u32,
    },
    /// No server is running and this operation does not start one.
    #[error("no console server is running for {root}")]
    ServerUnavailable {
        /// The project root.
        root: PathBuf,
    },
    /// The server could not be started.
    #[error("could not start the console server with `{command}`: {reason}")]
    Launch {
        /// The command line used.
        command: String,
        /// Why it failed.
        reason: String,
    },
    /// Another server already owns this project.
    #[error("a console server is already running for {root}")]
    AlreadyRunning {
        /// The project root.
        root: PathBuf,
    },
    /// The console id is not known to the server nor on disk.
    #[error("unknown console id `{0}`; list the consoles to see the valid ids")]
    UnknownConsole(String),
    /// The spawn request is invalid (empty command, missing cwd, …).
    #[error("invalid console request: {0}")]
    InvalidSpec(String),
    /// A wait pattern is not a valid regular expression.
    #[error("invalid pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// The regex error.
        reason: String,
    },
    /// The console no longer runs, so it cannot take input.
    #[error("console {id} is not running ({status}); it cannot take input")]
    NotRunning {
        /// The console.
        id: Uuid,
        /// Its final status, as text.
        status: String,
    },
    /// Spawning the PTY or the process failed.
    #[error("could not start `{command}`: {reason}")]
    Spawn {
        /// The command.
        command: String,
        /// Why.
        reason: String,
    },
    /// Any other error reported by the server.
    #[error("console server: {0}")]
    Server(String),
}

impl ConsoleError {
    /// Wraps an I/O error with what was being done and on which path.
    pub(crate) fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            context,
            path,
            source,
        }
    }
}
