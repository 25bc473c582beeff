//! Drives the agent CLIs people already have — Claude Code and Gemini CLI — as the sessions
//! of Context Pilot's restart loop, measuring their context use from their own output.
//!
//! [`ClaudeRunner`] and [`GeminiRunner`] implement `cp_orchestrate::SessionRunner`: each
//! session is one headless invocation (`claude -p … --output-format stream-json`, `gemini
//! -p … --output-format stream-json`) with Context Pilot's MCP server and hooks passed for
//! that invocation only. The stream is parsed into typed events; usage and tool calls go to
//! the restart loop's `SessionControl`; past a threshold the agent is interrupted after the
//! tool in flight (SIGINT, a grace period, then its process group), and the stopped session
//! is resumed for one turn to submit its handoff. Every agent runs in its own process group
//! and dies with the host (`PR_SET_PDEATHSIG`), so nothing is left behind.
//!
//! A run that cannot wire its agent does not pretend: the MCP server and a probe hook report to
//! the run when the agent loads them, and at the agent's first response a run missing either
//! is stopped with the cause the agent gave (see the `wired` module).
//!
//! Before anything runs, the runner finds the CLI and checks its version; a missing one is a
//! clear error that says how to install it:
//!
//! ```
//! use cp_agent_cli::{AgentConfig, AgentError, ClaudeRunner, WiringSpec};
//!
//! let config = AgentConfig {
//!     command: Some("/nonexistent/claude".into()),
//!     ..AgentConfig::default()
//! };
//! let spec = WiringSpec {
//!     program: "context-pilot".into(),
//!     root: std::env::temp_dir(),
//!     worker: cp_base::WorkerId::default(),
//!     hook_settings: serde_json::json!({"hooks": {}}),
//! };
//! let Err(error) = ClaudeRunner::new(config, spec, Box::new(|_: &_| {})) else {
//!     panic!("there is no such binary");
//! };
//! assert!(error.to_string().contains("npm install -g @anthropic-ai/claude-code"), "{error}");
//! # let _: &AgentError = &error;
//! ```
//!
//! A workflow phase driven by Claude Code, with smart restart:
//!
//! ```no_run
//! use cp_agent_cli::{AgentConfig, AgentEvent, ClaudeRunner, WiringSpec};
//! use cp_base::{Project, WorkerId};
//! use cp_orchestrate::{RestartConfig, RestartLoop};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = Project::at("/work/app");
//! let spec = WiringSpec {
//!     program: "context-pilot".into(),
//!     root: project.root().to_path_buf(),
//!     worker: WorkerId::default(),
//!     hook_settings: serde_json::json!({"hooks": {}}),
//! };
//! let progress = Box::new(|event: &AgentEvent| println!("{event}"));
//! let mut runner = ClaudeRunner::new(AgentConfig::load(&project)?, spec, progress)?;
//! let restart = RestartLoop::new(project, RestartConfig::default());
//! restart.run_phase("build", "Add a --verbose flag.", &mut runner, &mut |_: &_| {})?;
//! # Ok(()) }
//! ```

mod binary;
mod cancel;
mod claude;
mod config;
mod drive;
mod error;
mod gemini;
mod hook_report;
mod interactive;
mod item;
mod process;
mod progress;
mod session;
mod stderr_excerpt;
mod transcript;
mod wired;
mod wiring;

pub use binary::{AgentBinary, AgentCli, CLAUDE, GEMINI};
pub use cancel::CancelCheck;
pub use claude::{ClaudeRunner, model_window as claude_model_window};
pub use config::{AGENT_CONFIG_KEY, AgentConfig, AgentKind};
pub use error::AgentError;
pub use gemini::GeminiRunner;
pub use hook_report::{HOOK_REPORT_ENV, HookReport, HookVerdict};
pub use interactive::CliRunner;
pub use progress::{AgentEvent, Progress};
pub use wired::{MCP_WIRED, PROBE_COMMAND};
pub use wiring::{MCP_SERVER, WiringSpec};
