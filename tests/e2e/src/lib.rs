//! End-to-end test support for Context Pilot.
//!
//! - [`TuiSession`]: the real `context-pilot` binary in a real PTY, with its screen parsed by
//!   a VT100 emulator, so tests type keys and read what a person would see.
//! - [`binary_path`]: where `cargo test` put the binary.
//! - [`git_repo`]: a fresh git repository in a temp dir.
//!
//! ```no_run
//! use std::time::Duration;
//! let repo = cp_e2e::git_repo();
//! let mut tui = cp_e2e::TuiSession::start(repo.path(), &[], &[]).unwrap();
//! tui.wait_for("Conversation", Duration::from_secs(10)).unwrap();
//! tui.send(b"\x03"); // Ctrl-C
//! tui.wait_exit(Duration::from_secs(5)).unwrap();
//! ```

mod pty;
mod repo;

pub use pty::{TuiSession, binary_path};
pub use repo::{git, git_repo};
