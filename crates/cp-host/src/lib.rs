//! The host every front-end of Context Pilot shares: the TUI, `context-pilot hook`,
//! `context-pilot mcp` and the headless `context-pilot run` all build the same [`Host`], so they
//! share one implementation of every tool and one on-disk state.
//!
//! - [`Host`]: the project, the worker, the notice queue and the registered modules (files,
//!   consoles, callbacks, the stop gate, the host's own [`system`] tools and file [`viewer`]).
//! - Carried deliveries: what a short-lived process (a hook call, an MCP session) could not
//!   hand to the agent itself. Module state it still watched is [`Carried`] to the worker's
//!   next process; notifications wait in the worker's [`Outbox`]; [`collect_waiting`] takes
//!   both for an idle agent.
//! - [`program`]: the `context-pilot` program the agents and the warm runs start.
//! - [`trust`]: `context-pilot trust`, and the one-time notice that an untrusted project's
//!   callbacks are off.
//! - [`logging`]: logs go to `.context-pilot/logs/`, never to the screen.
//!
//! This crate draws nothing and runs no async runtime: the hook path depends on it.
//!
//! ```
//! // What every front-end builds before the first tool call, and a tool call through it:
//! let dir = tempfile::tempdir().unwrap();
//! let project = cp_base::Project::discover(dir.path()).unwrap();
//! let host = cp_host::Host::new(project, cp_base::WorkerId::default()).unwrap();
//! let results = cp_base::run_batch(host.registry(), &[cp_base::ToolCall::new(
//!     "1", "File_write", serde_json::json!({"file_path": "hello.txt", "content": "hi\n"}),
//! )], host.env());
//! assert!(!results[0].is_error, "{}", results[0].text);
//! assert_eq!(std::fs::read_to_string(dir.path().join("hello.txt")).unwrap(), "hi\n");
//! ```

mod carry;
mod host;
pub mod logging;
mod outbox;
pub mod program;
pub mod system;
pub mod trust;
pub mod viewer;
mod waiting;

pub use carry::{Carried, LOCK_FILE, MODULES_FILE, SETTLE_CAP};
pub use host::{Host, HostBuilder, HostError};
pub use outbox::{Collected, Deliveries, OUTBOX_FILE, Outbox, render as render_notes};
pub use waiting::collect_waiting;
