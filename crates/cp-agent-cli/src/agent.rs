//! The descriptor of one agent CLI: everything Context Pilot knows about it, in one place.
//!
//! Each agent's folder (`claude/`, `gemini/`, `codex/`) implements [`AgentCli`] once, and the table of
//! kinds ([`crate::AGENT_CLIS`]) lists them. The rest of the code asks the descriptor and never
//! names an agent:
//!
//! - what it is: [`AgentSpec`] (names, binary, minimum version, install hint, when `--resume`
//!   is safe, hook events and the versions wired with each, edit tools, stream parser and
//!   model table);
//! - what its hooks answer: [`AgentCli::hook_reply`];
//! - how `context-pilot init` wires it into a project: [`AgentCli::project_settings`];
//! - how a run wires it for one invocation, and the commands of a session and of its handoff
//!   turn: [`AgentCli::run_hooks`], [`AgentCli::wire`], [`AgentCli::session_command`],
//!   [`AgentCli::handoff_command`]. Stopping (SIGINT at a tool boundary, a grace period, then
//!   its process tree) and resuming (`--resume ID`, else a fresh session given the
//!   conversation so far) are the same for every agent; the spec says from which version its
//!   `--resume` can be trusted.

use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::Value;

use crate::AgentError;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::{SettingsFile, hooks_of};
use crate::session::CliSession;
use crate::spec::{AgentSpec, Version};
use crate::wiring::{Wiring, WiringSpec};

/// One thing an agent must allow before it uses a project's wiring, and whether it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentTrust {
    /// Whether it is allowed.
    pub ok: bool,
    /// What was checked and found, e.g. "Codex CLI trusts /work/app".
    pub what: String,
    /// How to allow it, when it is not.
    pub fix: Option<String>,
}

/// One agent CLI Context Pilot drives and wires; implemented once in each agent's folder.
pub trait AgentCli: Sync + std::fmt::Debug {
    /// What the agent is (plain data).
    fn spec(&self) -> &'static AgentSpec;

    /// What a hook prints on stdout at an event of `kind` that decided `reply`, in this
    /// agent's format; `None` prints nothing.
    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String>;

    /// The project settings files `context-pilot init` merges Context Pilot into (the MCP
    /// server running `program mcp`, and the hooks running `program hook …`), for the
    /// agent's `version` (`None`: not known, the newest release's wiring). Hooks of ours for
    /// events that version's wiring lacks are removed.
    fn project_settings(&self, program: &str, version: Option<Version>) -> Vec<SettingsFile>;

    /// What `context-pilot init` tells the person after wiring the project at `root`, beyond
    /// what it changed (e.g. steps to take in the agent itself).
    fn init_notes(&self, _root: &std::path::Path) -> Option<String> {
        None
    }

    /// What the agent itself must allow before it uses the wiring `init` wrote into the
    /// project at `root` (e.g. Codex's project trust and hook trust, kept in the user's own
    /// config), as `context-pilot doctor` reports it; nothing by default.
    fn trust_checks(&self, _root: &std::path::Path) -> Vec<AgentTrust> {
        Vec::new()
    }

    /// The hooks (`{"hooks": {…}}`) a run passes for one invocation of `version`: by default
    /// those `init` writes.
    fn run_hooks(&self, program: &str, version: Option<Version>) -> Value {
        hooks_of(self.project_settings(program, version))
    }

    /// Writes one run's wiring (the MCP server of `spec`, and `hooks`, which hold the probe
    /// hook already) where this agent reads it for one invocation.
    fn wire(&self, spec: &WiringSpec, hooks: &Value) -> Result<Wiring, AgentError>;

    /// The command of a session: `session.command(prompt)` plus this agent's options, with
    /// `session_args` (`--session-id NEW` or `--resume ID`).
    fn session_command(
        &self,
        session: &CliSession,
        prompt: &str,
        session_args: &[String; 2],
    ) -> Command;

    /// The command of the handoff turn after `session` was stopped: only `Checkpoint_handoff`
    /// may be used, and no hooks run.
    fn handoff_command(
        &self,
        session: &CliSession,
        request: &str,
        control: &SessionControl,
    ) -> Result<Command, DriverError>;
}
