//! Consoles for Context Pilot: commands in PTYs, owned by a per-project **console server**
//! so they outlive the host that started them.
//!
//! The first client that needs a console starts the server (`EXE console-server --project
//! ROOT`, detached in its own session). The server runs `bash -c COMMAND` in a PTY, writes
//! every byte to `.context-pilot/run/consoles/<uuid>.log`, keeps a bounded tail in memory for
//! waits, and exits after a while with no sessions and no clients. Clients talk to it over a
//! Unix socket with versioned JSON lines.
//!
//! ```no_run
//! use std::time::Duration;
//! use cp_mod_console::{ConsoleClient, SpawnSpec};
//!
//! # fn main() -> Result<(), cp_mod_console::ConsoleError> {
//! let client = ConsoleClient::for_project("/path/to/project")?;
//! let session = client.spawn(SpawnSpec::new("cargo test", "/path/to/project"))?;
//! let done = session.wait_exit(Duration::from_secs(60))?;
//! println!("{}: {}", done.info.status, session.tail(5)?);
//! # Ok(())
//! # }
//! ```

mod client;
mod error;
mod handle;
mod keys;
mod launch;
mod meta;
mod module;
mod panel;
mod panel_feed;
mod paths;
pub mod proctree;
mod protocol;
mod server;
mod session_info;
mod sys;
mod text;
mod tools;

pub use client::{ClientConfig, ConsoleClient};
pub use error::ConsoleError;
pub use handle::{Output, READ_CHUNK_MAX, SessionHandle, WaitOutcome};
pub use keys::decode_keys;
pub use launch::SERVER_EXE_ENV;
pub use module::{ConsoleModule, EASY_BASH_TIMEOUT};
pub use panel::{ConsolePanel, console_panel_id};
pub use paths::RunPaths;
pub use protocol::PROTOCOL_VERSION;
pub use server::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_LOG_HEAD_BYTES, DEFAULT_LOG_TAIL_BYTES,
    DEFAULT_LOGS_MAX_AGE, DEFAULT_LOGS_MAX_BYTES, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_SESSIONS,
    DEFAULT_TAIL_BYTES, LogLimits, ServerOptions, run_server,
};
pub use session_info::{
    DEFAULT_COLS, DEFAULT_ROWS, KillCause, SessionInfo, SessionStatus, SpawnSpec, now_ms,
};
pub use text::{last_lines, plain_text};
