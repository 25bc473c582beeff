//! How a run wires Gemini CLI for one invocation, and the commands of a session and of its
//! handoff turn (`gemini -p`).
//!
//! - A fresh session gets a new `--session-id`. The handoff turn offers only Context
//!   Pilot's `Checkpoint_handoff` from the MCP server, no hooks, and the default approval
//!   mode, in which headless Gemini CLI offers none of its tools that edit or run commands.
//!   (An empty `tools.core` allowlist would hide the MCP tool too: 0.61 filters both.) Where
//!   Gemini CLI's `--resume` is broken ([`super::SPEC`]`.resume_since`), it runs in a fresh
//!   session given the stopped session's transcript, tool history and `git diff`;
//!   otherwise it resumes the stopped session. Later interactive turns are carried the same
//!   way.
//! - MCP and hooks go through a private Gemini CLI home (`GEMINI_CLI_HOME`) whose
//!   `.gemini/` links the person's own and whose `settings.json` is theirs with the wiring
//!   merged in (see [`super::home`] for why not a system-settings file: Gemini CLI ignores
//!   one that root does not own). The wiring also turns folder trust off for the
//!   non-interactive run and selects API-key auth when `GEMINI_API_KEY` is set. A
//!   `BeforeAgent` probe hook and the MCP server prove to the run that Gemini CLI loaded them.
//! - Gemini CLI's stream reports tokens only at the end of a run; the prompt size of each
//!   response comes from its `AfterModel` hook instead, which the run's hooks add
//!   (`context-pilot model-usage`, reporting through `HOOK_REPORT_ENV`), against the window
//!   from config, else the model table.

use std::path::Path;
use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::{Value, json};

use super::handoff::handoff_prompt;
use super::home;
use crate::AgentError;
use crate::session::CliSession;
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};

/// The private Gemini CLI homes of the two kinds of invocation (see [`super::home`]).
const SESSION_HOME: &str = "session-home";
const HANDOFF_HOME: &str = "handoff-home";

/// The two private homes: a session's (the MCP server and `hooks`) and the handoff turn's
/// (only `Checkpoint_handoff`, no hooks).
pub(super) fn wire(spec: &WiringSpec, hooks: &Value) -> Result<Wiring, AgentError> {
    let api_key = std::env::var_os("GEMINI_API_KEY").is_some();
    let wiring = Wiring::create_private()?;
    let report = wiring.report_path();
    let session = settings(spec, &report, Some(hooks), None, api_key);
    let handoff = settings(spec, &report, None, Some("Checkpoint_handoff"), api_key);
    let person = home::person_home();
    home::build(&wiring.path(SESSION_HOME), person.as_deref(), &session)?;
    home::build(&wiring.path(HANDOFF_HOME), person.as_deref(), &handoff)?;
    Ok(wiring)
}

/// `gemini -p PROMPT --output-format stream-json` in the session's home, with the approval
/// mode (default `yolo`, as a headless run cannot ask).
pub(super) fn session_command(
    session: &CliSession,
    prompt: &str,
    session_args: &[String; 2],
) -> Command {
    let mode = session
        .config
        .permission_mode
        .clone()
        .unwrap_or_else(|| "yolo".to_owned());
    let mut command = command(session, prompt, SESSION_HOME);
    command.args(session_args).args(["--approval-mode", &mode]);
    command
}

/// The stopped session resumed where that is safe, else a fresh session told what the
/// stopped one did; in the handoff home, in the default approval mode.
pub(super) fn handoff_command(
    session: &CliSession,
    request: &str,
    control: &SessionControl,
) -> Result<Command, DriverError> {
    let session_id = session.resume_id()?;
    let mut command = if session.can_resume() {
        let mut command = command(session, request, HANDOFF_HOME);
        command.args(["--resume", &session_id]);
        command
    } else {
        // A fresh session of its own, told what the stopped one did.
        let prompt = handoff_prompt(
            request,
            &session.transcript,
            &control.tool_history(),
            &session.spec.root,
        );
        let mut command = command(session, &prompt, HANDOFF_HOME);
        command.args(["--session-id", &uuid::Uuid::new_v4().to_string()]);
        command
    };
    command.args(["--approval-mode", "default"]);
    Ok(command)
}

fn command(session: &CliSession, prompt: &str, home: &str) -> Command {
    let mut command = session.command(prompt);
    command
        .args(["--output-format", "stream-json"])
        .env(home::HOME_ENV, session.wiring.path(home))
        // Gemini CLI re-executes itself with more memory by default; the child would
        // escape the process we watch.
        .env("GEMINI_CLI_NO_RELAUNCH", "true");
    command
}

/// The wiring of one kind of invocation: the MCP server (only `only_tool` of it when given)
/// reporting to `report`, the hooks when given, folder trust off, and API-key auth when a
/// key is set.
fn settings(
    spec: &WiringSpec,
    report: &Path,
    hooks: Option<&Value>,
    only_tool: Option<&str>,
    api_key: bool,
) -> Value {
    let mut server = spec.mcp_server(report);
    if let Some(tool) = only_tool {
        server["includeTools"] = json!([tool]);
        server["trust"] = json!(true);
    }
    let mut doc = json!({
        "mcpServers": {MCP_SERVER: server},
        "security": {"folderTrust": {"enabled": false}},
    });
    if api_key {
        doc["security"]["auth"] = json!({"selectedType": "gemini-api-key"});
    }
    if let Some(Value::Object(hooks)) = hooks {
        for (key, value) in hooks {
            doc[key] = value.clone();
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handoff_settings_offer_only_the_handoff_tool_and_no_hooks() {
        let spec = WiringSpec {
            program: "context-pilot".into(),
            root: "/p".into(),
            worker: cp_base::WorkerId::default(),
        };
        let hooks = json!({"hooks": {"AfterAgent": []}});
        let report = Path::new("/w/reports.jsonl");
        let session = settings(&spec, report, Some(&hooks), None, true);
        assert!(session["hooks"]["AfterAgent"].is_array());
        assert_eq!(
            session["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(session["security"]["folderTrust"]["enabled"], false);
        let handoff = settings(&spec, report, None, Some("Checkpoint_handoff"), false);
        assert!(handoff.get("hooks").is_none());
        assert_eq!(
            handoff["mcpServers"][MCP_SERVER]["includeTools"],
            json!(["Checkpoint_handoff"])
        );
        assert!(handoff["security"].get("auth").is_none());
        assert_eq!(
            session["mcpServers"][MCP_SERVER]["env"]["CP_HOOK_REPORT"],
            "/w/reports.jsonl"
        );
    }
}
