//! Runs with Codex CLI (`context-pilot run --agent codex`, the TUI's `--agent codex`) are not
//! supported yet: every entry point refuses with [`AgentError::RunsUnsupported`], which says
//! what works instead (`context-pilot init codex`, then Codex with Context Pilot's hooks and
//! MCP server).

use std::process::Command;

use cp_orchestrate::DriverError;

use crate::AgentError;
use crate::session::CliSession;
use crate::wiring::Wiring;

/// Why a run cannot use Codex CLI, and what works instead.
pub(super) const UNSUPPORTED: &str = "runs and the TUI with Codex CLI are not supported yet; \
what works is `context-pilot init codex`, then `codex` itself in the project: its edits \
(apply_patch and the shell) fire the callbacks, and the stop gate runs when it stops. \
Use `--agent claude` or `--agent gemini` for a run";

/// The error every run entry point gives.
pub(super) fn unsupported() -> AgentError {
    AgentError::RunsUnsupported {
        agent: super::SPEC.display_name,
        detail: UNSUPPORTED,
    }
}

/// Never reached: the driver refuses Codex before it wires anything.
pub(super) fn wire() -> Result<Wiring, AgentError> {
    Err(unsupported())
}

/// `codex exec --json PROMPT`; never run, as the driver refuses Codex first.
pub(super) fn session_command(session: &CliSession, prompt: &str) -> Command {
    let mut command = Command::new(&session.binary.path);
    command.args(["exec", "--json", prompt]);
    command
}

/// Never reached: the driver refuses Codex before any session.
pub(super) fn handoff_command() -> Result<Command, DriverError> {
    Err(DriverError::new(unsupported().to_string()))
}
