//! Running the test command: the [`TestRunner`] seam and the process-group runner that
//! [`super::ConsoleTestRunner`] falls back on when no console server can be started.

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use cp_base::CancelToken;
use cp_mod_console::{DEFAULT_SIZE, proctree, terminal_text};

use serde::{Deserialize, Serialize};

/// What to run.
#[derive(Debug, Clone)]
pub struct TestSpec {
    /// Shell command, run as `sh -c <command>`.
    pub command: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Limit; when it expires the whole process group is killed.
    pub timeout: Duration,
    /// Extra environment for the command.
    pub env: Vec<(OsString, OsString)>,
    /// Set when the person cancels the turn (Esc): the console runner kills the run at once
    /// and reports it [`TestExit::Stopped`]. (The direct fallback runner lets it finish.)
    pub cancel: CancelToken,
    /// Where a runner that starts the command in a console writes the console's id as soon as
    /// it runs, so a later stop can find the run when this one is gone.
    pub console_file: Option<PathBuf>,
}

/// How a test run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TestExit {
    /// The command exited with this code.
    Code {
        /// The exit code.
        code: i32,
    },
    /// The command was killed by this signal (not by us).
    Signal {
        /// The signal number.
        signal: i32,
    },
    /// The timeout expired and the process group was killed.
    TimedOut {
        /// The limit that expired, in seconds.
        after_secs: u64,
    },
    /// Stopped from outside before it finished: killed from its console, or its console
    /// server went away.
    Stopped {
        /// What happened, for people.
        reason: String,
    },
}

impl TestExit {
    /// Only exit code 0 is a pass.
    pub fn success(&self) -> bool {
        matches!(self, Self::Code { code: 0 })
    }
}

/// The raw result of a run; parsing happens elsewhere, so every runner shares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// How it ended.
    pub exit: TestExit,
    /// stdout and stderr interleaved as written (at most the last `max_output` bytes), as a
    /// terminal shows them: escape sequences and redraws resolved to plain lines.
    pub output: String,
    /// Wall time.
    pub elapsed: Duration,
    /// Something the agent should know about how the run went (e.g. that it ran outside the
    /// console server).
    pub note: Option<String>,
}

/// Runs a test command to completion or timeout.
///
/// [`super::ConsoleTestRunner`] (the default) runs it as a console, visible in the
/// Consoles panel; [`ProcessGroupRunner`] runs it directly.
pub trait TestRunner: Send + Sync {
    /// Runs `spec`. `Err` only when the command could not be started at all.
    fn run(&self, spec: &TestSpec) -> std::io::Result<TestRun>;

    /// Takes over the run of `spec` that an earlier stop started in the console `console`
    /// (`started_at_ms` after the Unix epoch) and whose process is gone: waits for it to end
    /// (up to the spec's limit) and reads its result, as [`TestRunner::run`] would have.
    /// `None` when this runner starts no consoles.
    fn adopt(
        &self,
        console: &str,
        spec: &TestSpec,
        started_at_ms: u64,
    ) -> Option<std::io::Result<TestRun>> {
        let _ = (console, spec, started_at_ms);
        None
    }
}

/// Runs the command in its own process group with plain pipes. On timeout: SIGTERM to every
/// process of the run ([`proctree::kill_tree`]: the group and whatever left it with `setsid`),
/// a grace period, then SIGKILL, and the child is always reaped. Processes the command left
/// behind are ended the same way, so no orphans remain.
///
/// The fallback of [`super::ConsoleTestRunner`] when the console server cannot be started.
#[derive(Debug, Clone)]
pub struct ProcessGroupRunner {
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Output kept, in bytes, counted from the end.
    pub max_output: usize,
    /// Also copy the output to this process's stdout as it arrives (a warm run, whose
    /// stdout is its console, shows the tests there as they run).
    pub echo: bool,
}

impl Default for ProcessGroupRunner {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(2),
            max_output: 2 * 1024 * 1024,
            echo: false,
        }
    }
}

const POLL: Duration = Duration::from_millis(10);

impl TestRunner for ProcessGroupRunner {
    fn run(&self, spec: &TestSpec) -> std::io::Result<TestRun> {
        let (mut reader, writer) = std::io::pipe()?;
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&spec.command)
            .current_dir(&spec.cwd)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        for (key, value) in &spec.env {
            cmd.env(key, value);
        }
        // Tags every process of the run, including one that leaves the group with `setsid`.
        let marker = proctree::new_marker();
        cmd.env(proctree::RUN_MARKER_ENV, &marker);
        let started = Instant::now();
        let mut child = cmd.spawn()?;
        // The Command holds the pipe's write ends; drop it so EOF arrives when the group exits.
        drop(cmd);
        let pgid = i32::try_from(child.id()).unwrap_or(0);

        let buffer = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, done_rx) = mpsc::channel();
        {
            let buffer = Arc::clone(&buffer);
            let max = self.max_output;
            let echo = self.echo;
            let spawned = thread::Builder::new()
                .name("test-output".into())
                .spawn(move || {
                    let mut chunk = [0u8; 8192];
                    loop {
                        match reader.read(&mut chunk) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if echo {
                                    let mut out = std::io::stdout().lock();
                                    // Only a view of the run: a closed stdout loses nothing.
                                    let _ = std::io::Write::write_all(&mut out, &chunk[..n]);
                                    let _ = std::io::Write::flush(&mut out);
                                }
                                let mut buf = buffer.lock().unwrap_or_else(PoisonError::into_inner);
                                buf.extend_from_slice(&chunk[..n]);
                                if buf.len() > max {
                                    let cut = buf.len() - max;
                                    buf.drain(..cut);
                                }
                            }
                        }
                    }
                    let _ = done_tx.send(());
                });
            if let Err(e) = spawned {
                // Nobody would drain the pipe: stop the command rather than let it block.
                proctree::kill_tree(pgid, &marker, Duration::ZERO);
                let _ = child.wait();
                return Err(std::io::Error::other(format!(
                    "cannot start a thread to read the test output ({e}); the tests did not run"
                )));
            }
        }

        let deadline = started + spec.timeout;
        let exit = loop {
            if let Some(status) = child.try_wait()? {
                break exit_of(status);
            }
            if Instant::now() >= deadline {
                proctree::kill_tree(pgid, &marker, self.grace);
                // Reap; after SIGKILL this returns promptly.
                let _ = child.wait();
                break TestExit::TimedOut {
                    after_secs: spec.timeout.as_secs(),
                };
            }
            thread::sleep(POLL);
        };
        let elapsed = started.elapsed();
        // Leftovers the command started (`server &`, or a `setsid` daemon) must not outlive
        // the run.
        proctree::kill_tree(pgid, &marker, self.grace);
        // A process outside the group may still hold the pipe; do not wait for it forever.
        let _ = done_rx.recv_timeout(Duration::from_secs(2));
        let bytes = buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(TestRun {
            exit,
            // What a terminal would show: `\r` redraws and erased lines resolved.
            output: terminal_text(&bytes, DEFAULT_SIZE),
            elapsed,
            note: None,
        })
    }
}

fn exit_of(status: std::process::ExitStatus) -> TestExit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => TestExit::Code { code },
        (None, Some(signal)) => TestExit::Signal { signal },
        (None, None) => TestExit::Code { code: -1 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(command: &str, timeout: Duration) -> TestSpec {
        TestSpec {
            command: command.into(),
            cwd: std::env::temp_dir(),
            timeout,
            env: vec![("CP_TEST_VALUE".into(), "from-spec".into())],
            cancel: CancelToken::new(),
            console_file: None,
        }
    }

    #[test]
    fn captures_interleaved_output_and_exit_code() {
        let run = ProcessGroupRunner::default()
            .run(&spec(
                "echo out; echo err >&2; echo $CP_TEST_VALUE; exit 3",
                Duration::from_secs(20),
            ))
            .unwrap();
        assert_eq!(run.exit, TestExit::Code { code: 3 });
        assert_eq!(run.output, "out\nerr\nfrom-spec\n");
        assert!(!run.exit.success());
    }

    #[test]
    fn keeps_only_the_tail_of_huge_output() {
        let runner = ProcessGroupRunner {
            max_output: 100,
            ..ProcessGroupRunner::default()
        };
        let run = runner
            .run(&spec(
                "i=0; while [ $i -lt 500 ]; do echo line$i; i=$((i+1)); done",
                Duration::from_secs(20),
            ))
            .unwrap();
        assert!(run.exit.success());
        assert!(run.output.len() <= 100);
        assert!(run.output.ends_with("line499\n"), "{}", run.output);
    }

    #[test]
    fn signal_death_is_reported() {
        let run = ProcessGroupRunner::default()
            .run(&spec("kill -9 $$", Duration::from_secs(20)))
            .unwrap();
        assert_eq!(run.exit, TestExit::Signal { signal: 9 });
    }

    #[test]
    fn missing_working_directory_is_an_error() {
        let mut s = spec("true", Duration::from_secs(5));
        s.cwd = PathBuf::from("/nonexistent/cp-checkpoint-test");
        assert!(ProcessGroupRunner::default().run(&s).is_err());
    }

    #[test]
    fn background_processes_left_by_a_passing_command_are_ended() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let run = ProcessGroupRunner::default()
            .run(&spec(
                &format!("sleep 300 & echo $! > '{}'; echo done", pid_file.display()),
                Duration::from_secs(20),
            ))
            .unwrap();
        assert!(run.exit.success());
        assert_eq!(run.output, "done\n");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        let dead = || {
            std::fs::read_to_string(&stat).map_or(true, |s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
        };
        // Safety limit only: the group was signalled before run() returned.
        let mut tries = 0;
        while !dead() && tries < 250 {
            std::thread::sleep(Duration::from_millis(20));
            tries += 1;
        }
        assert!(dead(), "background sleep {} survived", pid.trim());
    }

    /// Live processes whose command line carries `tag`; killed on drop, so a failing test
    /// leaves nothing behind.
    struct Tagged(String);

    impl Tagged {
        fn pids(&self) -> Vec<i32> {
            std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    let zombie =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
                            s.rsplit_once(')')
                                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                        });
                    !zombie && String::from_utf8_lossy(&cmd).contains(&self.0)
                })
                .collect()
        }
    }

    impl Drop for Tagged {
        fn drop(&mut self) {
            for pid in self.pids() {
                // SAFETY: kill(2) on one positive pid found above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }

    #[test]
    fn a_timeout_ends_a_daemon_that_left_the_group_with_setsid() {
        // Unique to this test (pid and clock), so the check and the clean-up hit only ours.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let tag = Tagged(format!("{}{nanos:09}", std::process::id()));
        let runner = ProcessGroupRunner {
            grace: Duration::from_millis(300),
            ..ProcessGroupRunner::default()
        };
        let run = runner
            .run(&spec(
                &format!(
                    "(setsid bash -c 'sleep 200.{t}' &); sleep 300.{t}",
                    t = tag.0
                ),
                Duration::from_secs(2),
            ))
            .unwrap();
        assert_eq!(run.exit, TestExit::TimedOut { after_secs: 2 });
        let mut tries = 0;
        while !tag.pids().is_empty() && tries < 3000 {
            std::thread::sleep(Duration::from_millis(20));
            tries += 1;
        }
        assert_eq!(
            tag.pids(),
            Vec::<i32>::new(),
            "processes of the run survive"
        );
    }
}
