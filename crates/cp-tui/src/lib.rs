//! Context Pilot's host: the `context-pilot` command line and terminal UI.
//!
//! - [`cli`]: the command line (clap). No subcommand opens the TUI in the project directory.
//! - [`host`]: assembles the modules of a host (files, consoles, callbacks, the checkpoint module) into
//!   one [`cp_base::Registry`] with its [`cp_base::ToolEnv`].
//! - [`mcp`]: `context-pilot mcp`, the same tools over MCP on stdio.
//! - [`hook`]: `context-pilot hook <event>`, the Claude Code / Gemini CLI hook receiver.
//! - [`init`]: `context-pilot init [claude|gemini|codex]`, which wires both into an agent's
//!   settings (without a name: the agents the project or `PATH` has).
//! - [`doctor`]: `context-pilot doctor`, what is wrong with this machine and project.
//! - [`tui`]: the ratatui application: sidebar of panels, main area, status bar, command
//!   palette, and the event loop that owns the state.
//!
//! The parts it drives live in their own crates: the LLM clients in [`cp_llm`], the built-in
//! agent loop in [`cp_agent`], the `File_*` tools in [`cp_mod_files`].
//!
//! ```
//! // What `context-pilot --project DIR` builds before the first frame, and a tool call
//! // through it (the palette and the agent use the same pipeline):
//! let dir = tempfile::tempdir().unwrap();
//! let project = cp_base::Project::discover(dir.path()).unwrap();
//! let host = cp_tui::host::Host::new(project, cp_base::WorkerId::default()).unwrap();
//! let results = cp_base::run_batch(host.registry(), &[cp_base::ToolCall::new(
//!     "1", "File_write", serde_json::json!({"file_path": "hello.txt", "content": "hi\n"}),
//! )], host.env());
//! assert!(!results[0].is_error, "{}", results[0].text);
//! assert_eq!(std::fs::read_to_string(dir.path().join("hello.txt")).unwrap(), "hi\n");
//! ```
//! ```

mod alerts;
pub mod cli;
#[cfg(test)]
mod cli_reference;
pub mod doctor;
mod headless_out;
pub mod hook;
pub mod host;
pub mod init;
mod logging;
pub mod mcp;
mod merge_tests;
pub mod models;
#[cfg(test)]
mod reference_page;
pub mod run;
mod run_external;
mod run_interrupt;
mod run_phases;
pub mod system;
pub mod trust;
pub mod tui;
pub mod viewer;
