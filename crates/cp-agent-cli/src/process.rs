//! One agent CLI process: its own process group, killed with the host (`PR_SET_PDEATHSIG`),
//! its stdout read line by line on a thread, and a stop that always leaves nothing behind.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::AgentError;

/// Lines of the agent's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// How long the group gets after SIGTERM when the agent is killed.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// What reading the next line of the agent's stdout gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A line (without its newline).
    Line(String),
    /// Nothing arrived within the timeout.
    Idle,
    /// The agent closed its stdout.
    Closed,
}

/// A running agent CLI.
#[derive(Debug)]
pub struct AgentProcess {
    child: Child,
    path: PathBuf,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
    reaped: Option<ExitStatus>,
}

impl AgentProcess {
    /// Starts `command` in a new process group, with stdin closed and stdout/stderr read.
    ///
    /// The child gets `PR_SET_PDEATHSIG` = SIGKILL, so it dies with the thread that started
    /// it (the host's main thread) even when the host is killed outright. Call this from the
    /// thread that lives as long as the run.
    pub fn spawn(mut command: Command, path: PathBuf) -> Result<Self, AgentError> {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: the closure only calls `prctl` and `getppid`, which are async-signal-safe,
        // as `pre_exec` requires between fork and exec in a multi-threaded process.
        let parent = std::process::id();
        unsafe {
            command.pre_exec(move || die_with_parent(parent));
        }
        let mut child = command.spawn().map_err(|source| AgentError::Spawn {
            path: path.clone(),
            source,
        })?;
        let (tx, lines) = channel();
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }));
        }
        if let Some(err) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    tracing::debug!(target: "agent_stderr", "{line}");
                    let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            }));
        }
        Ok(Self {
            child,
            path,
            lines,
            stderr,
            readers,
            reaped: None,
        })
    }

    /// The next stdout line, waiting at most `timeout`.
    pub fn next_line(&self, timeout: Duration) -> Next {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Next::Line(line),
            Err(RecvTimeoutError::Timeout) => Next::Idle,
            Err(RecvTimeoutError::Disconnected) => Next::Closed,
        }
    }

    /// Asks the agent to stop as a person pressing Ctrl-C would (SIGINT to the agent only).
    pub fn interrupt(&self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: `kill` has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
    }

    /// The last lines the agent wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Waits up to `grace` for the agent to exit, then ends its whole process group (its MCP
    /// servers and hooks included) and reaps it. Returns the agent's exit status when it
    /// exited by itself.
    pub fn finish(&mut self, grace: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + grace;
        while self.reaped.is_none() && Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => self.reaped = Some(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    tracing::warn!("waiting for {}: {e}", self.path.display());
                    break;
                }
            }
        }
        let status = self.reaped;
        self.end_group();
        status
    }

    fn end_group(&mut self) {
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // A marker no process carries: only the group and its descendants are ended, never
            // a console server that a hook or the MCP server started (it leaves the group).
            let marker = format!("unused-{}", cp_mod_console::proctree::new_marker());
            let end = cp_mod_console::proctree::kill_tree(pgid, &marker, KILL_GRACE);
            if end != cp_mod_console::proctree::TreeEnd::Gone {
                tracing::warn!(?end, "some agent processes survived SIGKILL");
            }
        }
        if self.reaped.is_none() {
            let _ = self.child.kill();
            self.reaped = self.child.wait().ok();
        }
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.readers.is_empty() && self.reaped.is_some() {
            return;
        }
        self.end_group();
    }
}

/// In the child: die with the parent; fail the spawn if the parent is already gone.
fn die_with_parent(parent: u32) -> std::io::Result<()> {
    // SAFETY: `prctl(PR_SET_PDEATHSIG)` and `getppid` touch no memory of ours.
    let (set, ppid) = unsafe {
        (
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL),
            libc::getppid(),
        )
    };
    if set != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if u32::try_from(ppid).ok() != Some(parent) {
        return Err(std::io::Error::other(
            "the host exited before the agent started",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> AgentProcess {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        AgentProcess::spawn(command, PathBuf::from("sh")).unwrap()
    }

    #[test]
    fn lines_arrive_in_order_then_the_stream_closes() {
        let mut p = sh("echo one; echo two >&2; echo three");
        let limit = Duration::from_secs(60);
        assert_eq!(p.next_line(limit), Next::Line("one".into()));
        assert_eq!(p.next_line(limit), Next::Line("three".into()));
        assert_eq!(p.next_line(limit), Next::Closed);
        assert!(p.finish(limit).is_some_and(|s| s.success()));
        assert_eq!(p.stderr_tail(), "two");
    }

    #[test]
    fn an_agent_ignoring_sigint_is_killed_with_its_children_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child.pid");
        let script = format!(
            "trap '' INT; sleep 300 & echo $! > {}; echo ready; wait",
            pidfile.display()
        );
        let mut p = sh(&script);
        assert_eq!(
            p.next_line(Duration::from_secs(60)),
            Next::Line("ready".into())
        );
        p.interrupt();
        assert_eq!(p.finish(Duration::from_millis(200)), None);
        let child: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The background `sleep` was in the agent's group: it is gone (or a zombie of init).
        let state = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z"), "{state}");
    }
}
