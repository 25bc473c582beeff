//! Regular module ticks while the server waits for calls, as the TUI's event loop does:
//! modules pick up on-disk changes and finished background work between calls.
//!
//! Background results that arrived are moved to the worker's outbox at each tick, so they
//! reach the agent through whichever front-end it calls next: this server's next tool call,
//! or a hook (an agent with both wired in edits with its own tools too).

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use cp_host::Deliveries;
use cp_host::Host;

const TICK: Duration = Duration::from_secs(1);

/// A thread ticking every module about once a second until stopped.
pub struct Ticker {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    pub fn start(host: Host) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mcp-ticker".into())
            .spawn(move || {
                let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    host.registry().tick(host.env());
                    deliveries.keep_undelivered();
                }
            })
            .map_err(|e| tracing::warn!("MCP ticker not started: {e}"))
            .ok();
        Self { stop, thread }
    }

    pub fn stop(mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
