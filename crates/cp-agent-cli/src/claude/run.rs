//! How a run wires Claude Code for one invocation, and the commands of a session and of its
//! handoff turn (`claude -p`).
//!
//! - A fresh session gets a new `--session-id`; the handoff turn `--resume`s the stopped one
//!   with no built-in tools, only `Checkpoint_handoff` allowed, and no hooks (the stop
//!   checkpoint must not hold it up).
//! - Context Pilot's MCP server (`--mcp-config`) and hooks (`--settings`) are passed per
//!   invocation from temp files; the hooks report their verdicts to the driver directly
//!   (`HOOK_REPORT_ENV`), and a `UserPromptSubmit` probe hook and the MCP server prove to it
//!   that Claude Code loaded them.
//! - Usage is measured from the stream: the prompt of the latest response (input + cache
//!   creation + cache read), de-duplicated by message id, against the window from config,
//!   else the model table, else what Claude Code reported at the end of an earlier session.

use std::process::Command;

use cp_orchestrate::DriverError;
use serde_json::{Value, json};

use crate::AgentError;
use crate::session::CliSession;
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};

const MCP_FILE: &str = "mcp.json";
const SETTINGS_FILE: &str = "settings.json";
/// The only tool the handoff turn may use.
const HANDOFF_TOOL: &str = "mcp__context-pilot__Checkpoint_handoff";

/// The MCP server and the hooks, as the files `--mcp-config` and `--settings` read.
pub(super) fn wire(spec: &WiringSpec, hooks: &Value) -> Result<Wiring, AgentError> {
    let wiring = Wiring::create()?;
    let mcp = json!({"mcpServers": {MCP_SERVER: spec.mcp_server(&wiring.report_path())}});
    wiring.write(MCP_FILE, &mcp)?;
    wiring.write(SETTINGS_FILE, hooks)?;
    Ok(wiring)
}

/// `claude -p PROMPT --output-format stream-json …` with the wiring, the permission mode
/// (default `acceptEdits`) and the allowed tools (Context Pilot's, and the configured ones).
pub(super) fn session_command(
    session: &CliSession,
    prompt: &str,
    session_args: &[String; 2],
) -> Command {
    let config = &session.config;
    let mut allowed = vec![format!("mcp__{MCP_SERVER}")];
    allowed.extend(config.allowed_tools.iter().cloned());
    let mode = config
        .permission_mode
        .clone()
        .unwrap_or_else(|| "acceptEdits".to_owned());
    let mut command = session.command(prompt);
    command
        .args(["--output-format", "stream-json", "--verbose"])
        .args(session_args)
        .arg("--mcp-config")
        .arg(session.wiring.path(MCP_FILE))
        .arg("--settings")
        .arg(session.wiring.path(SETTINGS_FILE))
        .args(["--permission-mode", &mode])
        // Variadic: it must come last.
        .arg("--allowedTools")
        .args(&allowed);
    command
}

/// The stopped session resumed with no built-in tool and only `Checkpoint_handoff` allowed;
/// `context-pilot mcp` saves the handoff, and the restart loop reads it from the store.
pub(super) fn handoff_command(session: &CliSession, request: &str) -> Result<Command, DriverError> {
    let session_id = session.resume_id()?;
    let mut command = session.command(request);
    command
        .args(["--output-format", "stream-json", "--verbose"])
        .args(["--resume", &session_id])
        .arg("--mcp-config")
        .arg(session.wiring.path(MCP_FILE))
        .args(["--tools", "", "--allowedTools", HANDOFF_TOOL]);
    Ok(command)
}
