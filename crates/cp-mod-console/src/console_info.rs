//! What a console is: the spawn request, its status, and the record shared by server,
//! client and the files on disk (`<uuid>.json`).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Default PTY size for consoles that do not ask for one.
pub const DEFAULT_ROWS: u16 = 40;
/// Default PTY width.
pub const DEFAULT_COLS: u16 = 120;

/// A request to start a console: `bash -c COMMAND` (or a program run directly, see
/// [`SpawnSpec::exec`]) in a PTY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpawnSpec {
    /// The shell command, run as `bash -c COMMAND`. With `argv` set: its shell-quoted form,
    /// shown to people.
    pub command: String,
    /// When set, this program and its arguments run directly, without a shell in between
    /// (one process start fewer). A server that predates this field ignores it and runs
    /// `command`, which does the same through bash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// Working directory; must exist.
    pub cwd: PathBuf,
    /// Extra environment variables, set on top of the server's environment.
    pub env: BTreeMap<String, String>,
    /// PTY rows.
    pub rows: u16,
    /// PTY columns.
    pub cols: u16,
    /// What the console is for, shown to people and to the model.
    pub description: Option<String>,
    /// A short tag for grouping (e.g. `callback:CB1`).
    pub label: Option<String>,
    /// Kill the whole process group after this long.
    pub timeout: Option<Duration>,
    /// Run at low priority: the niceness (1 to 19) of the console's processes, and of its
    /// session's scheduling group where the kernel groups sessions (autogroup), so work no
    /// one waits for yields the CPU. A server that predates this field ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<u8>,
    /// At most one console with this spec's `label` runs: starting this one ends every
    /// running console with the same label first (each whole process tree, as a kill does,
    /// in the background). A server that predates this field ignores it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
}

impl SpawnSpec {
    /// A spec with the default size, no extra env, no timeout.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            command: command.into(),
            argv: None,
            cwd: cwd.into(),
            env: BTreeMap::new(),
            rows: DEFAULT_ROWS,
            cols: DEFAULT_COLS,
            description: None,
            label: None,
            timeout: None,
            nice: None,
            exclusive: false,
        }
    }
    /// A spec that runs `argv[0]` (looked up in `PATH` unless it holds a `/`) with the rest
    /// as its arguments, directly: no shell parses anything, so arguments need no quoting.
    ///
    /// ```
    /// let spec = cp_mod_console::SpawnSpec::exec(["bash", "/p/check it.sh"], "/p");
    /// assert_eq!(spec.command, "exec 'bash' '/p/check it.sh'");
    /// ```
    pub fn exec<I, S>(argv: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argv: Vec<String> = argv.into_iter().map(Into::into).collect();
        let quoted: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
        Self {
            argv: Some(argv),
            ..Self::new(format!("exec {}", quoted.join(" ")), cwd)
        }
    }
    /// Adds one environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
    /// Sets the PTY size.
    #[must_use]
    pub fn size(mut self, rows: u16, cols: u16) -> Self {
        self.rows = rows;
        self.cols = cols;
        self
    }
    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets the label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    /// Kills the process group when the command runs longer than `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// Runs the console at niceness `nice` (clamped to 1..=19; see [`SpawnSpec::nice`]).
    #[must_use]
    pub fn nice(mut self, nice: u8) -> Self {
        self.nice = Some(nice.clamp(1, 19));
        self
    }
    /// Makes this the only running console with its label (see [`SpawnSpec::exclusive`]).
    #[must_use]
    pub fn exclusive(mut self) -> Self {
        self.exclusive = true;
        self
    }
}

/// Why a console was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillCause {
    /// A client asked for it.
    Request,
    /// The spec's timeout ran out.
    Timeout,
    /// The server was asked to shut down.
    Shutdown,
}

/// Where a console is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ConsoleStatus {
    /// The command still runs.
    Running,
    /// The command exited by itself with this code.
    Exited {
        /// Exit code.
        code: i32,
    },
    /// The command was terminated by a signal nobody here sent.
    Signaled {
        /// Signal name, e.g. `SIGSEGV`.
        signal: String,
    },
    /// The process group was killed (TERM, grace, KILL) and reaped.
    Killed {
        /// Who asked.
        cause: KillCause,
    },
    /// The console server died while the console ran; its processes went with it.
    Lost {
        /// A message for people.
        reason: String,
    },
}

impl ConsoleStatus {
    /// True while the command runs.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }
    /// True when the command exited with code 0.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Exited { code: 0 })
    }
}

impl fmt::Display for ConsoleStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Running => f.write_str("running"),
            Self::Exited { code } => write!(f, "exited with code {code}"),
            Self::Signaled { signal } => write!(f, "terminated by {signal}"),
            Self::Killed {
                cause: KillCause::Request,
            } => f.write_str("killed on request"),
            Self::Killed {
                cause: KillCause::Timeout,
            } => f.write_str("killed after its timeout"),
            Self::Killed {
                cause: KillCause::Shutdown,
            } => f.write_str("killed when the console server shut down"),
            Self::Lost { reason } => write!(f, "lost: {reason}"),
        }
    }
}

/// Everything known about one console. This is also what `<uuid>.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleInfo {
    /// The console id.
    pub id: Uuid,
    /// The shell command.
    pub command: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Description, if any.
    pub description: Option<String>,
    /// Label, if any.
    pub label: Option<String>,
    /// Pid of `bash`, which is also the process group id.
    pub pid: Option<u32>,
    /// Current status.
    pub status: ConsoleStatus,
    /// Start time, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// End time, when it ended.
    pub ended_at_ms: Option<u64>,
    /// Bytes of output so far.
    pub output_len: u64,
    /// Instance id of the server that ran it (to detect consoles lost with a dead server).
    pub server_instance: Uuid,
    /// PTY rows it was started with.
    #[serde(default = "default_rows")]
    pub rows: u16,
    /// PTY columns it was started with.
    #[serde(default = "default_cols")]
    pub cols: u16,
}

fn default_rows() -> u16 {
    DEFAULT_ROWS
}

fn default_cols() -> u16 {
    DEFAULT_COLS
}

impl ConsoleInfo {
    /// How long it ran (or has been running, measured against `now_ms`).
    pub fn runtime(&self, now_ms: u64) -> Duration {
        let end = self.ended_at_ms.unwrap_or(now_ms);
        Duration::from_millis(end.saturating_sub(self.started_at_ms))
    }
}

/// `s` as one single-quoted bash word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
