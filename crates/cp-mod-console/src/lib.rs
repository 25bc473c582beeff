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
mod console_info;
mod error;
mod meta;
mod module;
mod paths;
mod pattern;
pub mod proctree;
mod protocol;
mod server;
mod signals;
mod sys;
#[cfg(feature = "test-support")]
mod test_support;
mod text;

pub use client::{
    ClientConfig, ConsoleClient, ConsoleHandle, Output, READ_CHUNK_MAX, SERVER_EXE_ENV, WaitOutcome,
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
pub use server::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_LOG_HEAD_BYTES, DEFAULT_LOG_TAIL_BYTES,
    DEFAULT_LOGS_MAX_AGE, DEFAULT_LOGS_MAX_BYTES, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_CONSOLES,
    DEFAULT_TAIL_BYTES, LogLimits, ServerOptions, run_server,
};
pub use signals::{signal_name, signal_number};
#[cfg(feature = "test-support")]
pub use test_support::server_exe_for_tests;
pub use text::{last_lines, plain_text};

/// Former name of [`ConsoleHandle`], kept while callers in other crates move to the new name.
pub type SessionHandle = ConsoleHandle;
/// Former name of [`ConsoleInfo`], kept while callers in other crates move to the new name.
pub type SessionInfo = ConsoleInfo;
/// Former name of [`ConsoleStatus`], kept while callers in other crates move to the new name.
pub type SessionStatus = ConsoleStatus;
