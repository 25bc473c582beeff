//! Setting Context Pilot up, and checking the set-up:
//!
//! - [`about`]: the version, commit and install channel of this binary (`--version`).
//! - [`init`]: `context-pilot init [claude|gemini|codex]` wires the MCP server and the hooks
//!   into an agent's settings (without a name: the agents the project or `PATH` has).
//! - [`doctor`]: `context-pilot doctor`, what is wrong with this machine and project.
//! - [`plugins`]: the Claude Code plugin, Gemini CLI extension and Codex CLI plugin, written
//!   from the agents' descriptors.
//! - [`models`]: `context-pilot models`, the configured provider's model list.
//!
//! ```no_run
//! // What `context-pilot init claude --dry-run` prints for a project:
//! let claude = cp_agent_cli::AGENT_CLIS[0];
//! let changes = cp_setup::init::plan(claude, std::path::Path::new("."), "context-pilot")?;
//! for change in &changes {
//!     print!("{}", change.diff());
//! }
//! # Ok::<(), cp_setup::init::InitError>(())
//! ```

pub mod about;
pub mod doctor;
pub mod init;
pub mod models;
pub mod plugins;
