//! The default test runner: the test command runs as a console of the project's
//! console server, so it shows up in the Consoles panel, its full output stays in the
//! console's log, and a timeout kills its whole process group.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use cp_base::CancelToken;
use cp_mod_console::{
    ConsoleClient, ConsoleError, ConsoleHandle, ConsoleInfo, ConsoleStatus, KillCause, SpawnSpec,
    proctree, signal_number, terminal_text,
};

use super::runner::{ProcessGroupRunner, TestExit, TestRun, TestRunner, TestSpec};
use uuid::Uuid;

/// Label of the stop gate's test consoles in the console list.
pub const TEST_SESSION_LABEL: &str = "checkpoint:tests";

/// How long past the test timeout the runner waits for the server to report the kill (its
/// TERM grace period and the final drain of output) before it kills the console itself.
const KILL_REPORT_SLACK: Duration = Duration::from_secs(30);

/// Runs the test command in a console: `bash -c COMMAND` in a PTY owned by the
/// project's console server, with the spec's timeout (the server kills the process group
/// when it runs out: TERM, grace period, KILL). The whole output is read back from the
/// console's log (cargo's counts are summed over every test binary, so the parser needs all
/// of it) and rendered as the console's terminal would show it (a VT100 screen of the PTY's
/// size), so redrawn progress bars leave no remnants.
///
/// When the console server cannot be started or reached, the run falls back to
/// [`ProcessGroupRunner`] (same timeout and group kill, without a console) and
/// [`TestRun::note`] says so.
#[derive(Debug, Clone)]
pub struct ConsoleTestRunner {
    client: ConsoleClient,
    fallback: ProcessGroupRunner,
    /// Output kept, in bytes, counted from the end.
    pub max_output: usize,
}

impl ConsoleTestRunner {
    /// A runner using `client`'s console server.
    pub fn new(client: ConsoleClient) -> Self {
        Self {
            client,
            fallback: ProcessGroupRunner::default(),
            max_output: 16 * 1024 * 1024,
        }
    }

    /// A runner for the console server of the project at `root` (started on demand by the
    /// first run, with the executable `ConsoleClient` picks: `CP_CONSOLE_SERVER_EXE`, else
    /// this program).
    pub fn for_project(root: &Path) -> Result<Self, ConsoleError> {
        Ok(Self::new(ConsoleClient::for_project(root)?))
    }

    fn spawn_spec(spec: &TestSpec) -> io::Result<SpawnSpec> {
        let mut console = SpawnSpec::new(spec.command.clone(), spec.cwd.clone())
            .timeout(spec.timeout)
            .label(TEST_SESSION_LABEL)
            .description(format!("stop gate tests: {}", spec.command));
        for (key, value) in &spec.env {
            let (Some(key), Some(value)) = (key.to_str(), value.to_str()) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "environment variable {} for the test command is not valid UTF-8; \
                         consoles take UTF-8 environments only",
                        key.to_string_lossy()
                    ),
                ));
            };
            console = console.env(key, value);
        }
        Ok(console)
    }

    /// The console's output from the log, at most `max_output` bytes from the end, as text.
    fn output(&self, console: &ConsoleHandle, len: u64, size: (u16, u16)) -> io::Result<String> {
        let start = len.saturating_sub(self.max_output as u64);
        let mut bytes = Vec::new();
        let mut offset = start;
        loop {
            let chunk = console.read_since(offset).map_err(io::Error::other)?;
            if chunk.bytes.is_empty() {
                break;
            }
            offset = chunk.next_offset;
            bytes.extend_from_slice(&chunk.bytes);
        }
        if start > 0 {
            // Started mid-line: drop the partial first line.
            let cut = bytes.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
            bytes.drain(..cut);
        }
        Ok(terminal_text(&bytes, size))
    }
}

impl TestRunner for ConsoleTestRunner {
    fn run(&self, spec: &TestSpec) -> io::Result<TestRun> {
        let spawn = Self::spawn_spec(spec)?;
        let size = (spawn.rows, spawn.cols);
        let started = Instant::now();
        let console = match self.client.spawn(spawn) {
            Ok(console) => console,
            // The command itself is at fault (missing directory, bad spec): report it.
            Err(e @ (ConsoleError::Spawn { .. } | ConsoleError::InvalidSpec(_))) => {
                return Err(io::Error::other(e));
            }
            // No console server: still run the tests, and say how.
            Err(e) => {
                tracing::warn!(
                    "stop gate: console server unavailable ({e}); running the tests directly"
                );
                let mut run = self.fallback.run(spec)?;
                run.note = Some(format!(
                    "ran outside the console server, which could not be started ({e}); \
                     the output is not in the Consoles panel"
                ));
                return Ok(run);
            }
        };
        if let Some(file) = &spec.console_file
            && let Err(e) = cp_base::write_atomic(file, console.id().to_string().as_bytes())
        {
            tracing::warn!("stop gate: the test console's id is not kept: {e}");
        }
        self.collect(&console, spec, started, size)
    }

    fn adopt(
        &self,
        console_id: &str,
        spec: &TestSpec,
        started_at_ms: u64,
    ) -> Option<io::Result<TestRun>> {
        let adopted = || {
            let id = uuid::Uuid::parse_str(console_id)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let console = self.client.attach(id).map_err(io::Error::other)?;
            let ago = Duration::from_millis(cp_base::now_ms().saturating_sub(started_at_ms));
            let started = Instant::now().checked_sub(ago).unwrap_or_else(Instant::now);
            let size = Self::spawn_spec(spec).map(|c| (c.rows, c.cols))?;
            self.collect(&console, spec, started, size)
        };
        Some(adopted())
    }
}

impl ConsoleTestRunner {
    /// Waits for `console`, a test console started at `started`, to end, within the spec's
    /// limit, ends what it left behind, and reads its result.
    fn collect(
        &self,
        console: &ConsoleHandle,
        spec: &TestSpec,
        started: Instant,
        size: (u16, u16),
    ) -> io::Result<TestRun> {
        let (mut info, cancelled) = wait_or_cancel(
            console,
            spec.timeout.saturating_add(KILL_REPORT_SLACK),
            &spec.cancel,
        )?;
        if info.status.is_running() {
            // The server should have killed it at the timeout; make sure.
            info = console.kill().map_err(io::Error::other)?;
        }
        let elapsed = started.elapsed();
        if let Some(pgid) = info.pid.and_then(|p| i32::try_from(p).ok()) {
            // Leftovers the command started (`server &`, or a `setsid` daemon, found by the
            // console's marker) must not outlive the run; the server reaps them.
            proctree::kill_tree(pgid, &console.id().to_string(), self.fallback.grace);
        }
        let exit = match &info.status {
            ConsoleStatus::Killed {
                cause: KillCause::Request,
            } if cancelled => TestExit::Stopped {
                reason: "cancelled by the user (Esc); the whole process group was killed".into(),
            },
            ConsoleStatus::Exited { code } => TestExit::Code { code: *code },
            ConsoleStatus::Killed {
                cause: KillCause::Timeout,
            }
            | ConsoleStatus::Running => TestExit::TimedOut {
                after_secs: spec.timeout.as_secs(),
            },
            ConsoleStatus::Signaled { signal } => TestExit::Signal {
                // -1: a name the console would never report.
                signal: signal_number(signal).unwrap_or(-1),
            },
            other @ (ConsoleStatus::Killed { .. } | ConsoleStatus::Lost { .. }) => {
                TestExit::Stopped {
                    reason: format!("console {}: {other}", console.id()),
                }
            }
        };
        Ok(TestRun {
            exit,
            output: self.output(console, info.output_len, size)?,
            elapsed,
            note: None,
        })
    }
}

/// How often a running test console looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Waits up to `limit` for `console` to end, in short rounds so `cancel` (Esc) is seen at
/// once; returns its last status and whether the cancel cut it short (the console is then
/// killed as a group).
pub(super) fn wait_or_cancel(
    console: &ConsoleHandle,
    limit: Duration,
    cancel: &CancelToken,
) -> io::Result<(ConsoleInfo, bool)> {
    let started = Instant::now();
    loop {
        let left = limit.saturating_sub(started.elapsed());
        let waited = console
            .wait_exit(left.min(CANCEL_POLL))
            .map_err(io::Error::other)?;
        if !waited.info.status.is_running() || left <= CANCEL_POLL {
            return Ok((waited.info, false));
        }
        if cancel.is_cancelled() {
            let info = console.kill().map_err(io::Error::other)?;
            return Ok((info, true));
        }
    }
}

/// Ends the console `id` of the project at `root` (its whole process tree), when it runs.
pub(crate) fn end_console(root: &Path, id: &str) {
    let Ok(id) = Uuid::parse_str(id) else {
        return;
    };
    let ended = ConsoleClient::for_project(root).and_then(|client| {
        let handle = client.attach(id)?;
        if handle.info()?.status.is_running() {
            handle.kill()?;
        }
        Ok(())
    });
    if let Err(e) = ended {
        tracing::debug!("warm run console {id}: {e}");
    }
}
