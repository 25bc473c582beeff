//! `ClientConfig`: how a client finds and starts its project's console server.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How a client finds and starts its server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The project root (made canonical by [`ConsoleClient::new`](crate::ConsoleClient::new)).
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
