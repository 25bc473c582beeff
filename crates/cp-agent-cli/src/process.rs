//! One agent CLI process: its own process group, killed with the host (`PR_SET_PDEATHSIG`),
//! its stdout read line by line on a thread, and a stop that always leaves nothing behind:
//! the group and every process that left it with `setsid` ([`cp_base::proctree`], which finds
//! them by the run marker in their environment).

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_base::proctree::{self, RUN_MARKER_ENV, TreeEnd};

use crate::AgentError;
use crate::stderr_excerpt::StderrExcerpt;

/// How long reading the rest of a finished agent's stderr may take.
const STDERR_SETTLE: Duration = Duration::from_secs(2);
/// How long the group gets after SIGTERM (and after SIGKILL) when the agent is ended.
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
    stderr: Arc<Mutex<StderrExcerpt>>,
    /// Set by the stderr reader when the pipe closed.
    stderr_done: Arc<AtomicBool>,
    reaped: Option<ExitStatus>,
    /// The run marker every process of this agent carries ([`RUN_MARKER_ENV`]).
    marker: String,
    /// Set once the group was ended (by [`AgentProcess::finish`]).
    finished: bool,
    /// Known to [`proctree::end_at_once`] while it lives: a host that must exit at once (a
    /// second Ctrl-C) ends the agent's group and every process that left it.
    _tracked: proctree::Tracked,
}

impl AgentProcess {
    /// Starts `command` in a new process group, marked as one run ([`RUN_MARKER_ENV`]), with
    /// stdin closed and stdout/stderr read.
    ///
    /// The child gets `PR_SET_PDEATHSIG` = SIGKILL, so it dies with the thread that started
    /// it (the host's main thread) even when the host is killed outright. Call this from the
    /// thread that lives as long as the run.
    pub fn spawn(mut command: Command, path: PathBuf) -> Result<Self, AgentError> {
        let marker = proctree::new_marker();
        command
            .env(RUN_MARKER_ENV, &marker)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: the closure only calls `signal`, `prctl` and `getppid`, which are
        // async-signal-safe, as `pre_exec` requires between fork and exec in a multi-threaded
        // process.
        let parent = std::process::id();
        unsafe {
            command.pre_exec(move || {
                hear_interrupts();
                die_with_parent(parent)
            });
        }
        let mut child = command.spawn().map_err(|source| AgentError::Spawn {
            path: path.clone(),
            source,
        })?;
        let (tx, lines) = channel();
        let stderr = Arc::new(Mutex::new(StderrExcerpt::default()));
        // The readers are not joined: a process that inherited the pipes could keep them
        // open; each thread ends when its pipe closes or its receiver is gone.
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr_done = Arc::new(AtomicBool::new(false));
        if let Some(err) = child.stderr.take() {
            let excerpt = Arc::clone(&stderr);
            let done = Arc::clone(&stderr_done);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    tracing::debug!(target: "agent_stderr", "{line}");
                    excerpt
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(line);
                }
                done.store(true, Ordering::SeqCst);
            });
        } else {
            stderr_done.store(true, Ordering::SeqCst);
        }
        let tracked = proctree::track(i32::try_from(child.id()).unwrap_or(0), &marker);
        Ok(Self {
            _tracked: tracked,
            child,
            path,
            lines,
            stderr,
            stderr_done,
            reaped: None,
            marker,
            finished: false,
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

    /// The first and the last lines the agent wrote to stderr. After
    /// [`finish`](Self::finish) it waits up to [`STDERR_SETTLE`] for the reader to reach the
    /// end of the pipe.
    pub fn stderr_excerpt(&self) -> String {
        let deadline = Instant::now() + STDERR_SETTLE;
        while self.finished && !self.stderr_done.load(Ordering::SeqCst) && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .render()
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

    /// Ends the agent's process group and every process that left it with `setsid`:
    /// SIGTERM, up to [`KILL_GRACE`], then SIGKILL ([`proctree::kill_tree`]); reaps the agent.
    /// A console server that a hook or the MCP server started is spared: it serves other
    /// clients too, and says so ([`proctree::SHARED_ENV`]).
    fn end_group(&mut self) {
        self.finished = true;
        let Ok(pgid) = i32::try_from(self.child.id()) else {
            return;
        };
        let end = proctree::kill_tree(pgid, &self.marker, KILL_GRACE);
        if self.reaped.is_none() {
            // Gone or a zombie now, unless it survived SIGKILL: never wait for that one.
            self.reaped = self.child.try_wait().ok().flatten();
        }
        if let TreeEnd::Survivors(left) = end {
            tracing::warn!(pgid, left, "some agent processes survived SIGKILL");
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if !self.finished {
            self.end_group();
        }
    }
}

/// In the child: SIGINT and SIGQUIT back to their default handling. A host started with them
/// ignored (in the background of a script, by `nohup`) would pass that on, and an agent that
/// cannot be interrupted cannot be stopped gracefully at a tool boundary.
fn hear_interrupts() {
    // SAFETY: `signal` is async-signal-safe and touches no memory of ours.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGQUIT, libc::SIG_DFL);
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
        assert_eq!(p.stderr_excerpt(), "two");
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

    #[test]
    fn a_child_that_left_the_group_with_setsid_is_killed_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("daemon.pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {pid}; exec sleep 300' & \
             while [ ! -s {pid} ]; do sleep 0.01; done; echo ready; wait",
            pid = pidfile.display()
        );
        let mut p = sh(&script);
        assert_eq!(
            p.next_line(Duration::from_secs(60)),
            Next::Line("ready".into())
        );
        let daemon: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let stat = || std::fs::read_to_string(format!("/proc/{daemon}/stat")).unwrap_or_default();
        let before = stat();
        let fields: Vec<&str> = before
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let agent = i32::try_from(p.child.id()).unwrap();
        assert_ne!(
            fields[2],
            agent.to_string(),
            "the daemon left the agent's group"
        );
        p.interrupt();
        p.finish(Duration::ZERO);
        // A process group kill would have missed it; the run marker finds it.
        let after = stat();
        assert!(after.is_empty() || after.contains(") Z"), "{after}");
    }
}
