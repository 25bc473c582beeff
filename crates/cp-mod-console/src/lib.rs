//! Consoles: commands run in PTYs that outlive the host that started them, because a
//! per-project **console server** owns them.
//!
//! A client ([`ConsoleClient`]) asks the project's server to start a console
//! ([`ConsoleClient::spawn`]) and gets a [`ConsoleHandle`] to wait on it, read its output,
//! type into it or kill its whole process tree. The first client that needs a console starts
//! the server (`EXE console-server --project ROOT`, detached in its own Unix session). The
//! server runs `bash -c COMMAND` in a PTY, writes every byte to
//! `.context-pilot/run/consoles/<uuid>.log`, keeps a bounded tail in memory for waits, and
//! exits after a while with no consoles running and no clients. Clients talk to it over a
//! Unix socket with versioned JSON lines. [`ConsoleModule`] offers all this to the agent as
//! the `console_*` tools, with one [`ConsolePanel`] per console.
//!
//! Here the server runs in a thread of the example itself ([`run_server`]), so no server
//! executable is needed:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use cp_mod_console::{ClientConfig, ConsoleClient, ServerOptions, SpawnSpec, run_server};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = tempfile::tempdir()?;
//! let root = project.path().canonicalize()?;
//! let server = {
//!     let options = ServerOptions::new(&root);
//!     std::thread::spawn(move || run_server(options))
//! };
//! let mut config = ClientConfig::new(&root);
//! // The server above is the one to use: never start another.
//! config.server_exe = Some("/nonexistent/cp-console-server".into());
//! let client = ConsoleClient::new(config)?;
//! let started = Instant::now();
//! while client.server_pid().is_none() && started.elapsed() < Duration::from_secs(60) {
//!     std::thread::sleep(Duration::from_millis(10));
//! }
//!
//! let console = client.spawn(SpawnSpec::new("echo hello from a console", &root))?;
//! let done = console.wait_exit(Duration::from_secs(60))?;
//! assert!(done.info.status.is_success(), "{}", done.info.status);
//! assert_eq!(console.tail(1)?, "hello from a console");
//!
//! client.shutdown_server()?;
//! server.join().expect("server thread")?;
//! # Ok(())
//! # }
//! ```
//!
//! Layout, with dependencies pointing one way: `module/` (tools, panels) → `client/`
//! (connection, handles, server launch) → `protocol` (wire types); `server/` (the daemon) →
//! `protocol`. Both sides share `console_info` (what a console is), `meta` (its record on
//! disk), `paths`, `pattern`, `terminal` (output read as a terminal shows it, which the stop gate
//! reads test output with too), `signals`, `proctree` and `sys`.

mod client;
mod console_info;
mod error;
mod meta;
mod module;
mod paths;
mod pattern;
mod protocol;
/// Ending every process of a run (moved to `cp_base::proctree`, which agent drivers share).
pub use cp_base::proctree;
mod screen;
mod server;
mod signals;
mod sys;
mod terminal;
#[cfg(feature = "test-support")]
mod test_support;

pub use client::{
    ClientConfig, ConsoleClient, ConsoleHandle, Output, READ_CHUNK_MAX, RawTail, SERVER_EXE_ENV,
    WaitOutcome,
};
pub use console_info::{
    ConsoleInfo, ConsoleStatus, DEFAULT_COLS, DEFAULT_ROWS, KillCause, SpawnSpec,
};
pub use error::ConsoleError;
pub use module::{
    BadKeyEscape, ConsoleModule, ConsolePanel, EASY_BASH_TIMEOUT, console_panel_id, decode_keys,
};
pub use paths::RunPaths;
pub use protocol::PROTOCOL_VERSION;
pub use screen::TermScreen;
pub use server::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_LOG_HEAD_BYTES, DEFAULT_LOG_TAIL_BYTES,
    DEFAULT_LOGS_MAX_AGE, DEFAULT_LOGS_MAX_BYTES, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CONSOLES,
    DEFAULT_TAIL_BYTES, LogLimits, MAX_CONSOLES_ENV, ServerOptions, run_server,
};
pub use signals::{signal_name, signal_number};
pub use terminal::{DEFAULT_SIZE, TerminalReader, last_lines, terminal_lines, terminal_text};
#[cfg(feature = "test-support")]
pub use test_support::{TEST_SERVER_EXE_ENV, server_exe_for_tests};
