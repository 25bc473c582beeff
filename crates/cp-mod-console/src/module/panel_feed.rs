//! The thread that keeps a `ConsolePanel` current: it follows the console's log file and
//! status, feeds the VT100 parser, and asks the host to redraw (batched, ~30 ms). The state
//! it feeds ([`PanelState`]) is what the panel renders.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cp_base::Notifier;

use crate::client::ConsoleHandle;
use crate::console_info::ConsoleInfo;
use crate::screen::TermScreen;

/// Lines of scrollback each panel keeps.
const SCROLLBACK: usize = 10_000;
/// Raw bytes kept for `llm_context`.
const LLM_TAIL_BYTES: usize = 64 * 1024;

/// How often to look for new output when there was none.
const POLL: Duration = Duration::from_millis(30);
/// Most output parsed under one hold of the panel's lock: a frame drawing the panel waits at
/// most for one such piece, never for a whole multi-MiB replay.
const FEED_CHUNK: usize = 64 * 1024;
/// How often to ask the server for the status while output flows.
const STATUS_EVERY: Duration = Duration::from_millis(250);

/// What the feeder updates and the renderer reads.
pub(super) struct PanelState {
    pub(super) screen: TermScreen,
    pub(super) raw_tail: VecDeque<u8>,
    pub(super) info: ConsoleInfo,
    pub(super) offset: u64,
    pub(super) error: Option<String>,
}

impl PanelState {
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.screen.feed(bytes);
        let overflow = (self.raw_tail.len() + bytes.len()).saturating_sub(LLM_TAIL_BYTES);
        self.raw_tail.drain(..overflow.min(self.raw_tail.len()));
        let skip = bytes.len().saturating_sub(LLM_TAIL_BYTES);
        self.raw_tail.extend(&bytes[skip..]);
        self.offset += bytes.len() as u64;
    }
}

/// A fresh state for `info`, before any output.
pub(super) fn new_state(info: ConsoleInfo) -> PanelState {
    PanelState {
        screen: TermScreen::new(info.rows, info.cols, SCROLLBACK),
        raw_tail: VecDeque::new(),
        info,
        offset: 0,
        error: None,
    }
}

pub(super) fn start(
    handle: ConsoleHandle,
    state: Arc<Mutex<PanelState>>,
    stop: Arc<AtomicBool>,
    notifier: Notifier,
) {
    let name = format!("console-panel-{}", handle.id());
    let spawned = std::thread::Builder::new()
        .name(name)
        .spawn(move || follow(&handle, &state, &stop, &notifier));
    if let Err(e) = spawned {
        tracing::error!("could not start a console panel feeder: {e}");
    }
}

fn follow(
    handle: &ConsoleHandle,
    state: &Mutex<PanelState>,
    stop: &AtomicBool,
    notifier: &Notifier,
) {
    let lock = || state.lock().unwrap_or_else(PoisonError::into_inner);
    let mut last_status = Instant::now()
        .checked_sub(STATUS_EVERY)
        .unwrap_or_else(Instant::now);
    let mut last_refresh = Instant::now();
    let mut dirty = false;
    while !stop.load(Ordering::SeqCst) {
        let offset = lock().offset;
        let got = match handle.read_since(offset) {
            Ok(out) => out.bytes,
            Err(e) => {
                lock().error = Some(e.to_string());
                notifier.refresh();
                return;
            }
        };
        if !got.is_empty() {
            for piece in got.chunks(FEED_CHUNK) {
                lock().feed(piece);
            }
            dirty = true;
        }
        let mut finished = false;
        if got.is_empty() || last_status.elapsed() >= STATUS_EVERY {
            last_status = Instant::now();
            match handle.info() {
                Ok(info) => {
                    let mut st = lock();
                    finished = !info.status.is_running() && st.offset >= info.output_len;
                    if st.info != info {
                        st.info = info;
                        dirty = true;
                    }
                }
                Err(e) => {
                    lock().error = Some(e.to_string());
                    dirty = true;
                    finished = true;
                }
            }
        }
        if dirty && (finished || last_refresh.elapsed() >= POLL) {
            notifier.refresh();
            last_refresh = Instant::now();
            dirty = false;
        }
        if finished {
            return;
        }
        if got.is_empty() {
            std::thread::sleep(POLL);
        }
    }
}
