//! One console inside the server: the PTY, its reader thread, the log file, the
//! in-memory tail, the exit supervisor, kill and wait.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cp_base::now_ms;
use portable_pty::{MasterPty, PtySize};
use uuid::Uuid;

use super::ServerOptions;
use super::log::BoundedLog;
use super::pty::Ptys;
use super::reaper::Reaper;
use super::spawn::spawn_child;
use super::tail::Tail;
use crate::ConsoleError;
use crate::console_info::{ConsoleInfo, ConsoleStatus, KillCause, SpawnSpec};
use crate::paths::RunPaths;
use crate::proctree::{self, TreeEnd};
use crate::protocol::WaitCondition;
use crate::signals::signal_name;
use crate::sys::RawExit;
use crate::terminal::TerminalReader;
use crate::{meta, pattern};

/// How long to wait for the last output after the command exits. Output can lag the exit,
/// and a leftover background process may hold the PTY open for much longer.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// Lines that scrolled off the screen a pattern wait still matches with the next output, so a
/// pattern spanning lines is found across two reads.
const PATTERN_CONTEXT_LINES: usize = 64;
/// Read buffer of the PTY reader thread.
const READ_CHUNK: usize = 64 * 1024;
/// After SIGKILL, how long to wait for the processes to vanish before giving up.
const AFTER_KILL: Duration = Duration::from_secs(5);

struct State {
    info: ConsoleInfo,
    tail: Tail,
    reader_done: bool,
    /// How the command ended, once the reaper said (the status waits for the output too).
    exit: Option<RawExit>,
    /// Bytes in the log file (what clients can read).
    log_len: u64,
    kill_cause: Option<KillCause>,
    log_error: Option<String>,
}

/// A console the server runs (or ran).
pub(super) struct Console {
    id: Uuid,
    paths: RunPaths,
    pgid: i32,
    kill_grace: Duration,
    state: Mutex<State>,
    changed: Condvar,
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    master: Mutex<Option<Box<dyn MasterPty + Send>>>,
    /// Held while the record is written, so two writes never share its temp file and the
    /// one that writes last writes the console as it is then.
    record: Mutex<()>,
}

/// Checks a spawn request before anything is started.
fn validate(spec: &SpawnSpec) -> Result<(), ConsoleError> {
    if let Some(argv) = &spec.argv
        && argv.first().is_none_or(String::is_empty)
    {
        return Err(ConsoleError::InvalidSpec(
            "'argv' is empty or names no program; give at least the program, e.g. [\"cargo\", \"test\"]"
                .into(),
        ));
    }
    if spec.command.trim().is_empty() {
        return Err(ConsoleError::InvalidSpec(
            "'command' is empty; give a shell command such as `cargo test`".into(),
        ));
    }
    if !spec.cwd.is_absolute() {
        return Err(ConsoleError::InvalidSpec(format!(
            "'cwd' `{}` must be an absolute path",
            spec.cwd.display()
        )));
    }
    if !spec.cwd.is_dir() {
        return Err(ConsoleError::InvalidSpec(format!(
            "'cwd' `{}` does not exist or is not a directory",
            spec.cwd.display()
        )));
    }
    if spec.nice.is_some_and(|n| !(1..=19).contains(&n)) {
        return Err(ConsoleError::InvalidSpec(format!(
            "'nice' is {}; give a niceness from 1 (a little lower) to 19 (the lowest)",
            spec.nice.unwrap_or_default()
        )));
    }
    if spec.exclusive && spec.label.as_deref().is_none_or(str::is_empty) {
        return Err(ConsoleError::InvalidSpec(
            "'exclusive' needs a 'label': the running consoles with that label are ended first"
                .into(),
        ));
    }
    if spec.rows == 0 || spec.cols == 0 {
        return Err(ConsoleError::InvalidSpec(format!(
            "PTY size {}x{} must be at least 1x1",
            spec.rows, spec.cols
        )));
    }
    Ok(())
}

impl Console {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts `bash -c COMMAND` in a new PTY, with its reader and supervisor threads.
    pub(super) fn start(
        paths: &RunPaths,
        spec: &SpawnSpec,
        instance: Uuid,
        reaper: &Reaper,
        ptys: &Ptys,
        opts: &ServerOptions,
    ) -> Result<Arc<Self>, ConsoleError> {
        validate(spec)?;
        let spawn_err = |reason: String| ConsoleError::Spawn {
            command: spec.command.clone(),
            reason,
        };
        let (tail_bytes, kill_grace, log_limits) =
            (opts.tail_bytes, opts.kill_grace, opts.log_limits);
        let pair = ptys
            .take(spec.rows, spec.cols)
            .map_err(|e| spawn_err(e.to_string()))?;
        let id = Uuid::new_v4();
        let log_path = paths.log_file(id);
        let pty_out = pair
            .master
            .try_clone_reader()
            .map_err(|e| spawn_err(format!("cloning the PTY reader: {e}")))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| spawn_err(format!("opening the PTY writer: {e}")))?;
        let (pid, exit_rx, at_once) = spawn_child(spec, id, pair.master.as_ref(), reaper)?;
        // The child opened the slave itself; ours would keep the PTY open after the child
        // exits and hide the end of output (EIO).
        drop(pair.slave);
        // The child is a session leader (see `spawn_child`), so its pid is its group id.
        let group = i32::try_from(pid).unwrap_or(0);
        // The log is created while the command starts (its output waits in the PTY until the
        // reader runs): creating a file can take a tenth of a millisecond, which the command
        // need not wait for. A log that cannot be created ends the command at once, and the
        // spawn fails as when nothing had started.
        let log = match RunPaths::private_file(&log_path, false) {
            Ok(log) => log,
            Err(e) => {
                proctree::kill_tree(group, &id.to_string(), Duration::ZERO);
                return Err(ConsoleError::io("creating console log", &log_path)(e));
            }
        };
        let info = ConsoleInfo {
            id,
            command: spec.command.clone(),
            cwd: spec.cwd.clone(),
            description: spec.description.clone(),
            label: spec.label.clone(),
            pid: Some(pid),
            status: ConsoleStatus::Running,
            started_at_ms: now_ms(),
            ended_at_ms: None,
            output_len: 0,
            server_instance: instance,
            rows: spec.rows,
            cols: spec.cols,
        };
        // Its record is written once the spawn is answered ([`Console::save_record`]).
        let console = Arc::new(Self {
            id,
            paths: paths.clone(),
            pgid: group,
            kill_grace,
            state: Mutex::new(State {
                info,
                tail: Tail::new(tail_bytes),
                reader_done: false,
                exit: None,
                log_len: 0,
                kill_cause: None,
                log_error: None,
            }),
            changed: Condvar::new(),
            writer: Mutex::new(Some(writer)),
            master: Mutex::new(Some(pair.master)),
            record: Mutex::new(()),
        });
        // The exit is heard on the reaper's thread: the console ends there when its output
        // has ended too, without waking the supervisor first.
        let heard = Arc::downgrade(&console);
        let _ = at_once.set(Box::new(move |exit| {
            if let Some(console) = heard.upgrade() {
                console.exited(exit);
            }
        }));
        // Without its threads the console would run unwatched: end it and say why.
        let abandon = |what: &str, e: std::io::Error| {
            proctree::kill_tree(console.pgid, &id.to_string(), Duration::ZERO);
            let _ = fs::remove_file(paths.log_file(id));
            let _ = fs::remove_file(paths.meta_file(id));
            spawn_err(format!(
                "the console server cannot start the {what} thread ({e}); it is out of threads, \
                 so the command was stopped. Retry when fewer consoles run"
            ))
        };
        let s = Arc::clone(&console);
        std::thread::Builder::new()
            .name(format!("pty-read-{id}"))
            .spawn(move || s.read_loop(pty_out, BoundedLog::new(log, log_limits)))
            .map_err(|e| abandon("reader", e))?;
        let s = Arc::clone(&console);
        let timeout = spec.timeout;
        std::thread::Builder::new()
            .name(format!("pty-wait-{id}"))
            .spawn(move || s.supervise(&exit_rx, timeout))
            .map_err(|e| abandon("supervisor", e))?;
        Ok(console)
    }

    /// A console a previous server (or this one, earlier) finished, loaded from disk so
    /// status, waits and tails work the same for it.
    pub(super) fn load_finished(
        paths: &RunPaths,
        info: ConsoleInfo,
        tail_bytes: usize,
    ) -> Arc<Self> {
        let info = meta::orphaned_view(paths, info);
        let last = read_log_end(&paths.log_file(info.id), tail_bytes).unwrap_or_default();
        Arc::new(Self {
            id: info.id,
            paths: paths.clone(),
            pgid: 0,
            kill_grace: Duration::ZERO,
            state: Mutex::new(State {
                tail: Tail::preloaded(tail_bytes, info.output_len, &last),
                log_len: info.output_len,
                info,
                reader_done: true,
                exit: None,
                kill_cause: None,
                log_error: None,
            }),
            changed: Condvar::new(),
            writer: Mutex::new(None),
            master: Mutex::new(None),
            record: Mutex::new(()),
        })
    }

    /// Writes the console's record as it is now (see `meta`): after its spawn is answered,
    /// and when it ended. A client asks the running server, which answers from memory; the
    /// record is for when no server runs. A failure is logged: the console runs on.
    pub(super) fn save_record(&self) {
        let _writing = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = meta::write_meta(&self.paths, &self.info()) {
            tracing::error!("console {}: {e}", self.id);
        }
    }

    /// The current metadata, with the live output length.
    pub(super) fn info(&self) -> ConsoleInfo {
        let st = self.lock();
        let mut info = st.info.clone();
        // The log's length, not the output's: clients read the log by offset, and a flood's
        // log is shorter than its output (see `log`).
        info.output_len = st.log_len;
        info
    }

    pub(super) fn is_running(&self) -> bool {
        self.lock().info.status.is_running()
    }

    /// Copies PTY output to the log file and the tail until the PTY closes (EIO).
    fn read_loop(&self, mut reader: Box<dyn Read + Send>, mut log: BoundedLog) {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // EIO: every slave fd is closed, i.e. the end of output.
                Err(_) => break,
            };
            let chunk = &buf[..n];
            // Written straight to the file (no userspace buffer) so a client reading the log
            // sees every byte the tail has.
            let log_result = log.write(chunk);
            let mut st = self.lock();
            st.log_len = log.len();
            if let Err(e) = log_result
                && st.log_error.is_none()
            {
                tracing::error!("console {}: writing the log failed: {e}", self.id);
                st.log_error = Some(e.to_string());
            }
            st.tail.push(chunk);
            drop(st);
            self.changed.notify_all();
        }
        let finished = log.finish();
        let mut st = self.lock();
        if let Err(e) = finished
            && st.log_error.is_none()
        {
            tracing::error!("console {}: compacting the log failed: {e}", self.id);
            st.log_error = Some(e.to_string());
        }
        st.log_len = log.len();
        st.reader_done = true;
        // The command ended before its output did: the console ends now.
        if let Some(exit) = st.exit {
            end(&mut st, Some(exit));
        }
        drop(st);
        self.changed.notify_all();
    }

    /// The reaper heard the command end: the console ends now if its output has ended too,
    /// else when it does (the reader) or at the supervisor's drain limit.
    fn exited(&self, exit: RawExit) {
        let mut st = self.lock();
        st.exit = Some(exit);
        if st.reader_done {
            end(&mut st, Some(exit));
        }
        drop(st);
        self.changed.notify_all();
    }

    /// Waits for the command to exit (killing it on timeout), drains the output, records
    /// the final status.
    fn supervise(&self, exit_rx: &Receiver<RawExit>, timeout: Option<Duration>) {
        let exit = match timeout {
            Some(limit) => match exit_rx.recv_timeout(limit) {
                Ok(exit) => Some(exit),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill_group(KillCause::Timeout);
                    exit_rx.recv().ok()
                }
                Err(RecvTimeoutError::Disconnected) => None,
            },
            None => exit_rx.recv().ok(),
        };
        let deadline = Instant::now() + DRAIN_AFTER_EXIT;
        let mut st = self.lock();
        // The reaper or the reader may have ended the console already.
        while !st.reader_done && st.info.status.is_running() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = self
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        end(&mut st, exit);
        drop(st);
        // Waiters hear of the end at once: clients ask this server, which answers from
        // memory, so the record on disk (for when the server is gone) need not come first.
        // A blocking callback waits here, and writing the record took up to a millisecond.
        self.changed.notify_all();
        *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = None;
        *self.master.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.save_record();
    }

    /// SIGTERM to every process of the console (its group, and whatever left the group but
    /// carries its marker), a grace period, SIGKILL, and wait until none is left. The reaper
    /// reaps the leader and (as subreaper) the orphans.
    fn kill_group(&self, cause: KillCause) {
        {
            let mut st = self.lock();
            if !st.info.status.is_running() {
                return;
            }
            st.kill_cause.get_or_insert(cause);
        }
        if let TreeEnd::Survivors(n) =
            proctree::kill_tree(self.pgid, &self.id.to_string(), self.kill_grace)
        {
            tracing::error!(
                "console {}: {n} process(es) still exist after SIGKILL",
                self.id
            );
        }
    }

    /// Kills the console's process group and waits until its final status is recorded.
    pub(super) fn kill(&self, cause: KillCause) -> ConsoleInfo {
        self.kill_group(cause);
        self.wait_until(Instant::now() + DRAIN_AFTER_EXIT + AFTER_KILL, |st| {
            !st.info.status.is_running()
        });
        self.info()
    }

    /// Writes `data` to the console's input.
    pub(super) fn send(&self, data: &[u8]) -> Result<(), ConsoleError> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let not_running = || ConsoleError::NotRunning {
            id: self.id,
            status: self.lock().info.status.to_string(),
        };
        // Waiters hear of the end before the supervisor drops the writer, and the PTY would
        // still take the bytes: an ended console refuses input from the moment it is ended.
        let ended = !self.lock().info.status.is_running();
        let Some(w) = writer.as_mut().filter(|_| !ended) else {
            return Err(not_running());
        };
        w.write_all(data)
            .and_then(|()| w.flush())
            .map_err(|_| not_running())
    }

    /// Resizes the PTY.
    pub(super) fn resize(&self, rows: u16, cols: u16) -> Result<(), ConsoleError> {
        let master = self.master.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(m) = master.as_ref() else {
            return Ok(());
        };
        m.resize(PtySize {
            rows: rows.max(1),
            cols: cols.max(1),
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| ConsoleError::Server(format!("resizing console {}: {e}", self.id)))
    }

    fn wait_until(&self, deadline: Instant, done: impl Fn(&State) -> bool) -> bool {
        let mut st = self.lock();
        loop {
            if done(&st) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Waits for `condition`; returns whether it was met.
    pub(super) fn wait(
        &self,
        condition: &WaitCondition,
        timeout: Duration,
    ) -> Result<bool, ConsoleError> {
        // A client may ask for any wait (`u64::MAX` seconds): cap it where the clock ends
        // instead of panicking on the overflow.
        let now = Instant::now();
        let deadline = now
            .checked_add(timeout)
            .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
            .unwrap_or(now);
        match condition {
            WaitCondition::Exit => Ok(self.wait_until(deadline, |st| !st.info.status.is_running())),
            WaitCondition::Pattern { regex, from_offset } => {
                let re = pattern::compile(regex)?;
                let size = {
                    let st = self.lock();
                    (st.info.rows, st.info.cols)
                };
                let mut reader = TerminalReader::new(size);
                // The last lines that scrolled off, so a pattern spanning lines still meets
                // the screen's top.
                let mut scrolled: Vec<String> = Vec::new();
                let mut next = *from_offset;
                loop {
                    let (chunk, total, finished) = {
                        let st = self.lock();
                        (
                            st.tail.bytes_from(next),
                            st.tail.total(),
                            !st.info.status.is_running(),
                        )
                    };
                    reader.feed(&chunk);
                    scrolled.extend(reader.take_scrolled());
                    let screen = reader.screen_lines();
                    let text = scrolled.iter().chain(&screen).map(String::as_str);
                    if re.is_match(&text.collect::<Vec<_>>().join("\n")) {
                        return Ok(true);
                    }
                    if finished {
                        return Ok(false);
                    }
                    scrolled.drain(..scrolled.len().saturating_sub(PATTERN_CONTEXT_LINES));
                    next = total;
                    if !self.wait_until(deadline, |st| {
                        st.tail.total() > total || !st.info.status.is_running()
                    }) {
                        return Ok(false);
                    }
                }
            }
        }
    }
}

/// Records how a console ended (`exit`, `None` when the server lost track of its command),
/// unless it has already: whichever of the reaper, the reader and the supervisor comes last
/// ends it, once.
fn end(st: &mut State, exit: Option<RawExit>) {
    if !st.info.status.is_running() {
        return;
    }
    st.info.status = match (st.kill_cause, exit) {
        (Some(cause), _) => ConsoleStatus::Killed { cause },
        (None, Some(RawExit::Code(code))) => ConsoleStatus::Exited { code },
        (None, Some(RawExit::Signal(sig))) => ConsoleStatus::Signaled {
            signal: signal_name(sig),
        },
        (None, None) => ConsoleStatus::Lost {
            reason: "the server lost track of the process".into(),
        },
    };
    st.info.ended_at_ms = Some(now_ms());
    st.info.output_len = st.log_len;
}

/// The last `max` bytes of a log file.
fn read_log_end(path: &Path, max: usize) -> std::io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    let start = len.saturating_sub(max as u64);
    f.seek(SeekFrom::Start(start))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(out)
}
