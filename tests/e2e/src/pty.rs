//! The real binary in a real PTY, with a VT100 screen.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::frames::FrameLog;

/// The `context-pilot` binary that `cargo test` built next to the test executables.
///
/// Integration tests live in `target/<profile>/deps/`; the binary is one level up. Cargo
/// builds it before running any test because `context-pilot` has integration tests.
pub fn binary_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    profile_dir.join("context-pilot")
}

/// A running `context-pilot` in a PTY.
pub struct TuiSession {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    frames: Arc<Mutex<FrameLog>>,
    /// Set once the reader has read the last byte the program wrote (end of file: every
    /// holder of the terminal closed it).
    output_ended: Arc<AtomicBool>,
}

/// How long [`TuiSession::wait_exit`] waits, after the exit, for the program's last output
/// to be read: only a process that kept the terminal open (none should) makes it wait this
/// long.
const OUTPUT_DRAIN_CAP: Duration = Duration::from_secs(10);

impl TuiSession {
    /// Starts the binary with `args` in `cwd` (120×32), with extra environment `env`.
    pub fn start(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Self, String> {
        Self::start_sized(cwd, args, env, 120, 32)
    }

    /// Starts a specific binary (e.g. a copy the test can later break), at 120×32.
    pub fn start_exe(
        exe: &Path,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self, String> {
        Self::spawn(exe, cwd, args, env, (120, 32))
    }

    pub fn start_sized(
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        cols: u16,
        rows: u16,
    ) -> Result<Self, String> {
        Self::spawn(&binary_path(), cwd, args, env, (cols, rows))
    }

    fn spawn(
        exe: &Path,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        (cols, rows): (u16, u16),
    ) -> Result<Self, String> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| format!("openpty: {e}"))?;
        let mut cmd = CommandBuilder::new(exe);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        // Trust is recorded per user: never in the real ~/.config (a test may override).
        cmd.env("XDG_CONFIG_HOME", crate::config_home());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| format!("spawn: {e}"))?;
        drop(pair.slave);
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| format!("reader: {e}"))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| format!("writer: {e}"))?;
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let frames = Arc::new(Mutex::new(FrameLog::default()));
        let output_ended = Arc::new(AtomicBool::new(false));
        let (p, r, f, ended) = (
            parser.clone(),
            raw.clone(),
            frames.clone(),
            output_ended.clone(),
        );
        thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        ended.store(true, Ordering::Release);
                        return;
                    }
                    Ok(n) => {
                        // Each frame in the read is recorded, then whatever follows the last.
                        let mut from = 0;
                        let ends = crate::frames::frame_ends(&buf[..n]);
                        for end in ends.into_iter().chain([n]) {
                            if end <= from && end != n {
                                continue;
                            }
                            let screen = {
                                let mut parser = p.lock().unwrap_or_else(PoisonError::into_inner);
                                parser.process(&buf[from..end]);
                                parser.screen().contents()
                            };
                            from = end;
                            f.lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .record(screen);
                        }
                        r.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .extend_from_slice(&buf[..n]);
                    }
                }
            }
        });
        Ok(Self {
            master: pair.master,
            writer,
            child,
            parser,
            raw,
            frames,
            output_ended,
        })
    }

    /// The screen as plain text, one line per row.
    pub fn screen(&self) -> String {
        self.parser
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .screen()
            .contents()
    }

    /// Everything the program wrote, raw.
    pub fn raw_output(&self) -> Vec<u8> {
        self.raw
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Later waits count only the screens drawn from now on. Typing does this by itself; call
    /// it after acting on the program another way (a signal, a file it watches).
    pub fn forget_drawn(&self) {
        self.frames
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .mark_input();
    }

    /// Types bytes as a terminal would send them.
    pub fn send(&mut self, bytes: &[u8]) {
        self.forget_drawn();
        let _ = self.writer.write_all(bytes);
        let _ = self.writer.flush();
    }

    /// Types text one key at a time (so each char is a key event, as with a person typing).
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let mut buf = [0u8; 4];
            self.send(c.encode_utf8(&mut buf).as_bytes());
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Waits until the screen contains `needle`, or did at some moment since the test last
    /// typed (text that scrolled away or was covered counts: it was drawn). Returns the screen
    /// it was found on; on timeout, the current screen in the error.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> Result<String, String> {
        crate::within(timeout, || {
            let screen = self.screen();
            if screen.contains(needle) {
                return Some(screen);
            }
            self.frames
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .find_since_input(needle)
        })
        .ok_or_else(|| {
            format!(
                "timed out waiting for {needle:?}; screen:\n{}",
                self.screen()
            )
        })
    }

    /// Waits until `done(screen)` holds; on timeout returns the screen in the error.
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        crate::within(timeout, || Some(self.screen()).filter(|s| done(s)))
            .ok_or_else(|| format!("timed out waiting until {what}; screen:\n{}", self.screen()))
    }

    /// Waits until the agent's turn has ended with `final_text` as its last reply, and returns
    /// the saved session.
    ///
    /// Both facts are durable: the session the TUI saves when a turn ends holds `final_text` in
    /// its last assistant message, and the status bar, which says "agent working" for as long as
    /// a turn runs, no longer does. Neither can scroll away before the test looks.
    pub fn wait_turn_end(
        &self,
        project: &Path,
        final_text: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, String> {
        let started = Instant::now();
        let session =
            crate::wait_saved_session(project, "the turn's last reply is saved", timeout, |s| {
                crate::last_assistant_message(s).is_some_and(|m| m.contains(final_text))
            })?;
        let left = timeout.saturating_sub(started.elapsed());
        self.wait_until("the status bar shows the agent idle", left, |s| {
            !s.contains("agent working") && !s.contains("reload pending")
        })?;
        // The session saved when the turn ended is the one to return.
        Ok(crate::saved_session(project).unwrap_or(session))
    }

    /// Quits with Ctrl-C, confirming the "Quit anyway?" question if work is still running;
    /// returns the exit code.
    pub fn quit(&mut self, timeout: Duration) -> Result<u32, String> {
        self.send(b"\x03");
        let mut confirmed = false;
        crate::within(timeout, || {
            let exited = self.exit_code();
            if exited.is_none() && !confirmed && self.screen().contains("Quit anyway?") {
                self.send(b"y");
                confirmed = true;
            }
            exited
        })
        .unwrap_or_else(|| {
            Err(format!(
                "did not quit in {timeout:?}; screen:\n{}",
                self.screen()
            ))
        })
    }

    /// Resizes the PTY.
    pub fn resize(&self, cols: u16, rows: u16) {
        let _ = self.master.resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        });
        self.parser
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .screen_mut()
            .set_size(rows, cols);
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Waits for the process to exit; returns its exit code. Once it returns, what the
    /// program wrote last (restoring the terminal, say) is in [`TuiSession::raw_output`] and on
    /// the screen: the exit is known before the reader has read the end of the output, so
    /// this also waits for the end of the output.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<u32, String> {
        let started = Instant::now();
        let code = crate::within(timeout, || self.exit_code()).unwrap_or_else(|| {
            Err(format!(
                "did not exit in {timeout:?}; screen:\n{}",
                self.screen()
            ))
        })?;
        let drain = timeout
            .saturating_sub(started.elapsed())
            .min(OUTPUT_DRAIN_CAP);
        crate::within(drain, || {
            self.output_ended.load(Ordering::Acquire).then_some(())
        });
        Ok(code)
    }

    /// The exit code once the process has exited, or why it could not be waited for; `None`
    /// while it runs.
    fn exit_code(&mut self) -> Option<Result<u32, String>> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(Ok(status.exit_code())),
            Ok(None) => None,
            Err(e) => Some(Err(format!("wait: {e}"))),
        }
    }
}

impl Drop for TuiSession {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
