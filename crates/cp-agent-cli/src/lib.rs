//! Drives the agent CLIs people already have — Claude Code, Gemini CLI and Codex CLI — as the
//! sessions of Context Pilot's restart loop, measuring their context use from their own
//! output; and says everything else Context Pilot needs to know about them (their hooks, what
//! `context-pilot init` writes).
//!
//! **Agents are data.** Each agent CLI has one folder here (`claude/`, `gemini/`, `codex/`) whose
//! descriptor implements [`AgentCli`]: its names, binary, minimum version and install hint,
//! hook events and replies, edit tools, what `context-pilot init` writes into a project, how a
//! run wires it for one invocation, its stream parser and model table, and from which version
//! its `--resume` is safe ([`AgentSpec`]). The table [`AGENT_CLIS`] lists them, and
//! [`AgentKind`] names one (or the built-in loop). Nothing else names an agent.
//!
//! [`CliDriver`] implements `cp_orchestrate::SessionDriver` for every agent: each session
//! is one headless invocation (`claude -p … --output-format stream-json`, `gemini -p …
//! --output-format stream-json`, `codex exec --json …`) with Context Pilot's MCP server and
//! hooks passed for that invocation only. The stream is parsed into typed events; usage and tool calls go to the
//! restart loop's `SessionControl`; past a threshold the agent is interrupted after the tool in
//! flight (SIGINT, a grace period, then its process tree), and the stopped session is resumed
//! for one turn to submit its handoff. Every agent runs in its own process group, marked as
//! one run so that processes which leave the group are found too, and dies with the host
//! (`PR_SET_PDEATHSIG`), so nothing is left behind.
//!
//! A run that cannot wire its agent does not pretend: the MCP server and a probe hook report to
//! the run when the agent loads them, and at the agent's first response a run missing either
//! is stopped with the cause the agent gave (see the `wired` module).
//!
//! Before anything runs, the driver finds the CLI and checks its version; a missing one is a
//! clear error that says how to install it:
//!
//! ```
//! use cp_agent_cli::{AgentConfig, AgentError, AgentKind, CliDriver, WiringSpec};
//!
//! let config = AgentConfig {
//!     command: Some("/nonexistent/claude".into()),
//!     ..AgentConfig::default()
//! };
//! let spec = WiringSpec {
//!     program: "context-pilot".into(),
//!     root: std::env::temp_dir(),
//!     worker: cp_base::WorkerId::default(),
//! };
//! let claude: AgentKind = "claude".parse()?;
//! let Err(error) = CliDriver::new(claude, config, spec, Box::new(|_: &_| {})) else {
//!     panic!("there is no such binary");
//! };
//! assert!(error.to_string().contains("npm install -g @anthropic-ai/claude-code"), "{error}");
//! # let _: &AgentError = &error;
//! # Ok::<(), AgentError>(())
//! ```
//!
//! A workflow phase driven by Claude Code, with smart restart:
//!
//! ```no_run
//! use cp_agent_cli::{AgentConfig, CliDriver, ProgressEvent, WiringSpec};
//! use cp_base::{Project, WorkerId};
//! use cp_orchestrate::{RestartConfig, RestartLoop};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let project = Project::at("/work/app");
//! let spec = WiringSpec {
//!     program: "context-pilot".into(),
//!     root: project.root().to_path_buf(),
//!     worker: WorkerId::default(),
//! };
//! let progress = Box::new(|event: &ProgressEvent| println!("{event}"));
//! let config = AgentConfig::load(&project)?;
//! let mut driver = CliDriver::new("claude".parse()?, config, spec, progress)?;
//! let restart = RestartLoop::new(project, RestartConfig::default());
//! restart.run_phase("build", "Add a --verbose flag.", &mut driver, &mut |_: &_| {})?;
//! # Ok(()) }
//! ```
//!
//! Files: `agent` (the descriptor), `kind` (the table and [`AgentKind`]), `driver` and
//! `session` (one driver for every agent), `invocation`, `process`, `item`, `progress`,
//! `transcript`, `session_log` (one invocation of the CLI), `wiring`, `wired`, `hook_report` (a
//! run's wiring and its proof), `hook_reply`, `project_settings`, `settings_json` (hooks and
//! `init`), `binary`, `installed` (which agent CLIs `PATH` holds), `config`, `error`.

mod agent;
mod binary;
mod claude;
mod codex;
mod config;
mod driver;
mod error;
mod gemini;
mod hook_reply;
mod hook_report;
mod installed;
mod interactive;
mod invocation;
mod item;
mod kind;
mod process;
mod progress;
mod project_settings;
mod session;
mod session_log;
mod settings_json;
mod spec;
mod stderr_excerpt;
mod transcript;
mod wired;
mod wiring;

pub use agent::{AgentCli, AgentTrust};
pub use binary::{AgentBinary, parse_version};
pub use codex::{CodexTrustEdit, plugin_hook_trust, trust_in_codex};
pub use config::{AGENT_CONFIG_KEY, AgentConfig};
pub use driver::CliDriver;
pub use error::AgentError;
pub use hook_reply::{EventKind, Reply, with_system_message};
pub use hook_report::{HOOK_REPORT_ENV, HookReport, HookReportKind};
pub use installed::{Found, Presence, look_for, look_for_agents};
pub use interactive::InteractiveDriver;
pub use kind::{AGENT_CLIS, AgentKind, edit_tool, hook_event};
pub use progress::{Progress, ProgressEvent};
pub use project_settings::{
    Apply, HOOK_TIMEOUT_SECS, SettingsFile, ShapeError, TomlMergeError, has_our_hook, hook_command,
    hooks_of, mcp_server_program, merge_toml,
};
pub use settings_json::Json;
pub use spec::{
    AgentSpec, EditArgumentsError, EditPaths, EditTool, EditedPath, HookEventSpec, HookMatcher,
    SessionLogSpec, Version,
};
pub use wired::{MCP_WIRED, PROBE_COMMAND};
pub use wiring::{MCP_SERVER, WiringSpec};
