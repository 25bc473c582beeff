//! `ConsoleHandle`: what callers hold to drive one console.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use uuid::Uuid;

use super::transport::{Launch, Transport, unexpected};
use crate::console_info::{ConsoleInfo, ConsoleStatus};
use crate::protocol::{Request, Response, WaitCondition};
use crate::terminal::{self, DEFAULT_SIZE};
use crate::{ConsoleError, meta, pattern};

/// Most bytes one [`ConsoleHandle::read_since`] call returns.
pub const READ_CHUNK_MAX: usize = 4 * 1024 * 1024;
/// Most bytes of log [`ConsoleHandle::tail`] looks at.
const TAIL_SCAN_MAX: u64 = 4 * 1024 * 1024;

/// Raw output read from a console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The bytes, exactly as the program wrote them to its terminal.
    pub bytes: Vec<u8>,
    /// Offset to pass to the next `read_since`.
    pub next_offset: u64,
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitOutcome {
    /// The condition was met (for `wait_exit`: the console ended).
    pub met: bool,
    /// The console as it was when the wait ended.
    pub info: ConsoleInfo,
}

impl WaitOutcome {
    /// The wait ran out of time while the console still ran.
    pub fn timed_out(&self) -> bool {
        !self.met && self.info.status.is_running()
    }
}

/// The end of a console's raw output ([`ConsoleHandle::raw_tail`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawTail {
    /// The output, from the start of a line.
    pub bytes: Vec<u8>,
    /// How much output came before it and was left out.
    pub skipped: u64,
}

/// A console, running or finished. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ConsoleHandle {
    transport: Arc<Transport>,
    id: Uuid,
}

impl ConsoleHandle {
    pub(super) fn new(transport: Arc<Transport>, id: Uuid) -> Self {
        Self { transport, id }
    }

    /// The console id.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// The console's log file: every byte of output.
    pub fn log_path(&self) -> PathBuf {
        self.transport.paths().log_file(self.id)
    }

    /// Everything known about the console. When the server is gone, read from disk (a
    /// console that was running is then reported lost).
    pub fn info(&self) -> Result<ConsoleInfo, ConsoleError> {
        self.ask(&Request::Status { id: self.id })
    }

    /// Sends `request`, which the server answers with the console's record; without a
    /// server, the record on disk answers.
    fn ask(&self, request: &Request) -> Result<ConsoleInfo, ConsoleError> {
        match self.transport.request(request, Launch::No) {
            Ok(Response::Console { info }) => Ok(info),
            Ok(other) => Err(unexpected(&other)),
            Err(ConsoleError::ServerUnavailable { .. }) => self.info_from_disk(),
            Err(e) => Err(e),
        }
    }

    fn info_from_disk(&self) -> Result<ConsoleInfo, ConsoleError> {
        let paths = self.transport.paths();
        meta::read_meta(paths, self.id)?
            .map(|info| meta::orphaned_view(paths, info))
            .ok_or_else(|| ConsoleError::UnknownConsole(self.id.to_string()))
    }

    /// Running, exited (with code), killed, or lost.
    pub fn status(&self) -> Result<ConsoleStatus, ConsoleError> {
        Ok(self.info()?.status)
    }

    /// The last `lines` lines of output as a terminal of the console's size shows them
    /// ([`terminal_lines`](crate::terminal_lines)): lines that scrolled off the screen
    /// included, a progress bar redrawn or erased in place left as its final state.
    pub fn tail(&self, lines: usize) -> Result<String, ConsoleError> {
        let path = self.log_path();
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.info()?;
                return Ok(String::new());
            }
            Err(e) => return Err(ConsoleError::io("reading console log", &path)(e)),
        };
        let len = file
            .metadata()
            .map_err(ConsoleError::io("reading console log", &path))?
            .len();
        let mut window: u64 = 64 * 1024;
        loop {
            let start = len.saturating_sub(window);
            let mut bytes = Vec::new();
            file.seek(SeekFrom::Start(start))
                .and_then(|_| file.by_ref().take(len - start).read_to_end(&mut bytes))
                .map_err(ConsoleError::io("reading console log", &path))?;
            // A partial window may start mid-line: only trust it with more line breaks
            // than lines asked for.
            let breaks = bytes.split(|&b| b == b'\n').count() - 1;
            if start == 0 || window >= TAIL_SCAN_MAX || breaks > lines {
                return Ok(terminal::last_lines(&bytes, self.size(), lines));
            }
            window *= 4;
        }
    }

    /// The console's PTY size, from its record on disk (no request to the server), or the
    /// default when there is no record.
    fn size(&self) -> (u16, u16) {
        match meta::read_meta(self.transport.paths(), self.id) {
            Ok(Some(info)) => (info.rows, info.cols),
            _ => DEFAULT_SIZE,
        }
    }

    /// The last `max_bytes` of raw output (escape sequences kept, for a terminal view), from
    /// the start of a line: a cut mid-line or mid-escape would garble the first row.
    pub fn raw_tail(&self, max_bytes: u64) -> Result<RawTail, ConsoleError> {
        let path = self.log_path();
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RawTail::default()),
            Err(e) => return Err(ConsoleError::io("reading console log", &path)(e)),
        };
        let len = file
            .metadata()
            .map_err(ConsoleError::io("reading console log", &path))?
            .len();
        let start = len.saturating_sub(max_bytes);
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(start))
            .and_then(|_| file.take(len - start).read_to_end(&mut bytes))
            .map_err(ConsoleError::io("reading console log", &path))?;
        if start > 0
            && let Some(first_break) = bytes.iter().position(|&b| b == b'\n')
        {
            bytes.drain(..=first_break);
        }
        let skipped = len - bytes.len() as u64;
        Ok(RawTail { bytes, skipped })
    }

    /// Raw output from byte `offset` on (at most [`READ_CHUNK_MAX`] bytes a call), read
    /// from the console's log, which holds every byte even after the server is gone.
    pub fn read_since(&self, offset: u64) -> Result<Output, ConsoleError> {
        let path = self.log_path();
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.info()?;
                return Ok(Output {
                    bytes: Vec::new(),
                    next_offset: offset,
                });
            }
            Err(e) => return Err(ConsoleError::io("reading console log", &path)(e)),
        };
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.take(READ_CHUNK_MAX as u64).read_to_end(&mut bytes))
            .map_err(ConsoleError::io("reading console log", &path))?;
        Ok(Output {
            next_offset: offset + bytes.len() as u64,
            bytes,
        })
    }

    /// Writes `bytes` to the console's input (its terminal).
    pub fn send(&self, bytes: &[u8]) -> Result<(), ConsoleError> {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        match self
            .transport
            .request(&Request::Send { id: self.id, data }, Launch::No)
        {
            Ok(_) => Ok(()),
            Err(ConsoleError::ServerUnavailable { .. }) => Err(self.gone()),
            Err(e) => Err(e),
        }
    }

    /// Resizes the console's terminal.
    pub fn resize(&self, rows: u16, cols: u16) -> Result<(), ConsoleError> {
        match self.transport.request(
            &Request::Resize {
                id: self.id,
                rows,
                cols,
            },
            Launch::No,
        ) {
            Ok(_) | Err(ConsoleError::ServerUnavailable { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Waits up to `timeout` for the console to end.
    pub fn wait_exit(&self, timeout: Duration) -> Result<WaitOutcome, ConsoleError> {
        self.wait(WaitCondition::Exit, timeout)
    }

    /// Waits up to `timeout` until the output (from the start), read as a terminal shows it,
    /// matches the regular expression `pattern` (multi-line mode: `^`/`$` match at line
    /// ends). What a wait on a running console sees is said in `pattern.rs`: text on screen
    /// when the wait looks is met even if erased later.
    pub fn wait_pattern(
        &self,
        pattern: &str,
        timeout: Duration,
    ) -> Result<WaitOutcome, ConsoleError> {
        self.wait_pattern_from(pattern, 0, timeout)
    }

    /// Like [`ConsoleHandle::wait_pattern`], looking only at output from byte `offset` on.
    pub fn wait_pattern_from(
        &self,
        pattern: &str,
        offset: u64,
        timeout: Duration,
    ) -> Result<WaitOutcome, ConsoleError> {
        pattern::compile(pattern)?;
        self.wait(
            WaitCondition::Pattern {
                regex: pattern.to_owned(),
                from_offset: offset,
            },
            timeout,
        )
    }

    fn wait(
        &self,
        condition: WaitCondition,
        timeout: Duration,
    ) -> Result<WaitOutcome, ConsoleError> {
        let request = Request::Wait {
            id: self.id,
            condition: condition.clone(),
            timeout,
        };
        match self.transport.request_alone(&request) {
            Ok(Response::Waited { met, info }) => Ok(WaitOutcome { met, info }),
            Ok(other) => Err(unexpected(&other)),
            Err(ConsoleError::ServerUnavailable { .. }) => {
                // No server: the console is over; answer from disk.
                let info = self.info_from_disk()?;
                let met = match condition {
                    WaitCondition::Exit => true,
                    WaitCondition::Pattern { regex, from_offset } => {
                        let re = pattern::compile(&regex)?;
                        let start = from_offset.max(info.output_len.saturating_sub(TAIL_SCAN_MAX));
                        let mut bytes = Vec::new();
                        let mut offset = start;
                        loop {
                            let chunk = self.read_since(offset)?;
                            if chunk.bytes.is_empty() {
                                break;
                            }
                            offset = chunk.next_offset;
                            bytes.extend(chunk.bytes);
                        }
                        re.is_match(&terminal::terminal_text(&bytes, (info.rows, info.cols)))
                    }
                };
                Ok(WaitOutcome { met, info })
            }
            Err(e) => Err(e),
        }
    }

    /// Kills the console's whole process group (SIGTERM, grace period, SIGKILL) and waits
    /// until it is reaped. Killing a finished console changes nothing.
    pub fn kill(&self) -> Result<ConsoleInfo, ConsoleError> {
        self.ask(&Request::Kill { id: self.id })
    }

    /// Puts a console started niced ([`SpawnSpec::nice`](crate::SpawnSpec)) back to normal
    /// priority, as far as this user may: its session's autogroup always (what counts
    /// between sessions where the kernel groups them), its processes' own niceness only
    /// with the privilege to raise priority. For work someone now waits for. A console that
    /// is no longer running is left alone.
    pub fn restore_priority(&self) -> Result<(), ConsoleError> {
        let info = self.info()?;
        if let (true, Some(pid)) = (info.status.is_running(), info.pid) {
            crate::sys::restore_priority(pid);
        }
        Ok(())
    }

    fn gone(&self) -> ConsoleError {
        match self.info_from_disk() {
            Ok(info) => ConsoleError::NotRunning {
                id: self.id,
                status: info.status.to_string(),
            },
            Err(e) => e,
        }
    }
}
