//! How a console server runs: its limits and times, from the defaults or from the
//! `CP_CONSOLE_*` environment a client passes to the server it starts.

use std::path::PathBuf;
use std::time::Duration;

use super::log::LogLimits;
use super::prune::{DEFAULT_LOGS_MAX_AGE, DEFAULT_LOGS_MAX_BYTES};

/// Default idle time before the server exits: no console running, no client connected.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default size of each console's in-memory tail.
pub const DEFAULT_TAIL_BYTES: usize = 1024 * 1024;
/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(3);
/// Default limit of consoles running at once (each holds a PTY and two threads).
pub const DEFAULT_MAX_CONSOLES: usize = 64;
/// Default limit of connected clients (each holds a thread).
pub const DEFAULT_MAX_CLIENTS: usize = 256;
/// How the console server runs.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The project whose consoles it owns.
    pub project_root: PathBuf,
    /// Exit after this long with no running console and no connected client.
    pub idle_timeout: Duration,
    /// Bytes of output kept in memory per console (the log file keeps everything).
    pub tail_bytes: usize,
    /// Time between SIGTERM and SIGKILL when a console is killed.
    pub kill_grace: Duration,
    /// How much of each console's output its log keeps.
    pub log_limits: LogLimits,
    /// Logs of consoles that ended longer ago than this are deleted.
    pub logs_max_age: Duration,
    /// The oldest finished consoles' logs are deleted while all logs are larger than this.
    pub logs_max_bytes: u64,
    /// Most consoles running at once; a spawn past it fails with a clear error.
    pub max_consoles: usize,
    /// Most clients connected at once; a connection past it gets a clear error.
    pub max_clients: usize,
}

impl ServerOptions {
    /// Options with the defaults.
    pub fn new(project_root: impl Into<PathBuf>) -> Self {
        Self {
            project_root: project_root.into(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            tail_bytes: DEFAULT_TAIL_BYTES,
            kill_grace: DEFAULT_KILL_GRACE,
            log_limits: LogLimits::default(),
            logs_max_age: DEFAULT_LOGS_MAX_AGE,
            logs_max_bytes: DEFAULT_LOGS_MAX_BYTES,
            max_consoles: DEFAULT_MAX_CONSOLES,
            max_clients: DEFAULT_MAX_CLIENTS,
        }
    }

    /// Defaults, overridden by `CP_CONSOLE_IDLE_TIMEOUT_MS`, `CP_CONSOLE_TAIL_BYTES`,
    /// `CP_CONSOLE_KILL_GRACE_MS`, `CP_CONSOLE_LOG_HEAD_BYTES`, `CP_CONSOLE_LOG_TAIL_BYTES`,
    /// `CP_CONSOLE_LOGS_MAX_AGE_MS`, `CP_CONSOLE_LOGS_MAX_BYTES`, `CP_CONSOLE_MAX_CONSOLES`
    /// (its old name `CP_CONSOLE_MAX_SESSIONS` still read, when the new one is not set) and
    /// `CP_CONSOLE_MAX_CLIENTS` when set to a number (a client passes them to the server it
    /// starts; see `ClientConfig::server_env`).
    pub fn from_env(project_root: impl Into<PathBuf>) -> Self {
        Self::from_vars(project_root, |name| std::env::var(name).ok())
    }

    /// [`ServerOptions::from_env`] with the variables `var` gives.
    fn from_vars(project_root: impl Into<PathBuf>, var: impl Fn(&str) -> Option<String>) -> Self {
        let num = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let mut opts = Self::new(project_root);
        if let Some(ms) = num("CP_CONSOLE_IDLE_TIMEOUT_MS") {
            opts.idle_timeout = Duration::from_millis(ms);
        }
        if let Some(bytes) = num("CP_CONSOLE_TAIL_BYTES") {
            opts.tail_bytes = usize::try_from(bytes).unwrap_or(DEFAULT_TAIL_BYTES).max(1);
        }
        if let Some(ms) = num("CP_CONSOLE_KILL_GRACE_MS") {
            opts.kill_grace = Duration::from_millis(ms);
        }
        if let Some(bytes) = num("CP_CONSOLE_LOG_HEAD_BYTES") {
            opts.log_limits.head = bytes;
        }
        if let Some(bytes) = num("CP_CONSOLE_LOG_TAIL_BYTES") {
            opts.log_limits.tail = bytes.max(1);
        }
        if let Some(ms) = num("CP_CONSOLE_LOGS_MAX_AGE_MS") {
            opts.logs_max_age = Duration::from_millis(ms);
        }
        if let Some(bytes) = num("CP_CONSOLE_LOGS_MAX_BYTES") {
            opts.logs_max_bytes = bytes;
        }
        let count = |name: &str, default: usize| {
            num(name).map_or(default, |n| usize::try_from(n).unwrap_or(default).max(1))
        };
        let max_consoles = count(MAX_CONSOLES_OLD_ENV, opts.max_consoles);
        opts.max_consoles = count(MAX_CONSOLES_ENV, max_consoles);
        opts.max_clients = count("CP_CONSOLE_MAX_CLIENTS", opts.max_clients);
        opts
    }
}

/// The most running consoles a server keeps (default [`DEFAULT_MAX_CONSOLES`]).
pub const MAX_CONSOLES_ENV: &str = "CP_CONSOLE_MAX_CONSOLES";

/// The old name of [`MAX_CONSOLES_ENV`], from when a console was called a session; read when
/// the new one is not set.
const MAX_CONSOLES_OLD_ENV: &str = "CP_CONSOLE_MAX_SESSIONS";

#[cfg(test)]
mod tests {
    use super::*;

    fn max_consoles(vars: &[(&str, &str)]) -> usize {
        ServerOptions::from_vars("/p", |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
        .max_consoles
    }

    #[test]
    fn the_console_limit_is_read_under_its_name_and_its_old_one() {
        assert_eq!(max_consoles(&[]), DEFAULT_MAX_CONSOLES);
        assert_eq!(max_consoles(&[(MAX_CONSOLES_ENV, "3")]), 3);
        assert_eq!(max_consoles(&[(MAX_CONSOLES_OLD_ENV, "5")]), 5);
        assert_eq!(
            max_consoles(&[(MAX_CONSOLES_OLD_ENV, "5"), (MAX_CONSOLES_ENV, "3")]),
            3
        );
    }
}
