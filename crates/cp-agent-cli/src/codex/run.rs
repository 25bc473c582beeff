//! How a run wires Codex CLI for one invocation, and the commands of a session and of its
//! handoff turn (`codex exec --json`).
//!
//! - A session is `codex exec --json PROMPT`; Codex names the thread (`thread.started`), and
//!   a later turn of it is `codex exec resume THREAD PROMPT`.
//! - Everything Context Pilot adds comes as `-c` overrides of that invocation, so nothing is
//!   written into the project or the person's `~/.codex`: the MCP server
//!   (`mcp_servers.context-pilot`), the hooks (`hooks.PostToolUse`, `hooks.Stop`, and the
//!   `UserPromptSubmit` probe that proves they were loaded), and the trust of exactly those
//!   hooks (`hooks.state`, see [`super::hook_trust`]). A hook a cloned repository ships in its
//!   `.codex/` stays as untrusted as it was; the copies of our hooks `init codex` wrote there
//!   are turned off for the run, which passes its own.
//! - Codex cannot ask anyone in `exec`, so approvals are off (`approval_policy="never"`) and
//!   the sandbox is `agent.permission_mode` (default `danger-full-access`, as Gemini CLI's
//!   default is `yolo`: the stop gate wants the agent to commit, and `workspace-write` keeps
//!   `.git` read-only).
//! - The handoff turn resumes the stopped thread with only `Checkpoint_handoff` of the MCP
//!   server enabled (approved in advance), a read-only sandbox and none of the run's hooks.
//! - Usage comes from the session file (see [`super::rollout`]).

use std::process::Command;

use cp_orchestrate::DriverError;
use serde_json::{Value, json};
use toml_edit::{Array, InlineTable};

use super::hook_trust::{hook_state, project_copies_disabled};
use crate::AgentError;
use crate::session::{CliSession, prompt_argument};
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};

/// The only tool the handoff turn may use.
const HANDOFF_TOOL: &str = "Checkpoint_handoff";
/// Codex's own tools the handoff turn does without (measured on 0.169.0: these drop
/// `exec_command`, `write_stdin`, `web_search` and the goal tools from the request).
const HANDOFF_TOOLS_OFF: [(&str, &str); 4] = [
    ("features.shell_tool", "false"),
    ("features.unified_exec", "false"),
    ("features.goals", "false"),
    ("web_search", "\"disabled\""),
];
/// The sandbox of a session unless `agent.permission_mode` names another.
const DEFAULT_SANDBOX: &str = "danger-full-access";
/// Environment the MCP server needs that Codex does not pass to MCP servers by default.
const MCP_PASSED_ENV: &[&str] = &["XDG_CONFIG_HOME"];

/// The wiring directory holds only the file the hooks and the MCP server report to: the rest
/// is `-c` overrides built for each command.
pub(super) fn wire(_spec: &WiringSpec, _hooks: &Value) -> Result<Wiring, AgentError> {
    Wiring::create()
}

/// `codex exec --json [resume THREAD] PROMPT` with the MCP server, `hooks` and their trust.
pub(super) fn session_command(
    session: &CliSession,
    prompt: &str,
    session_args: &[String; 2],
    hooks: &Value,
) -> Command {
    let sandbox = session
        .config
        .permission_mode
        .clone()
        .unwrap_or_else(|| DEFAULT_SANDBOX.to_owned());
    let mut overrides = vec![
        ("mcp_servers", mcp_servers(session, false)),
        ("sandbox_mode", json!(sandbox)),
        ("approval_policy", json!("never")),
    ];
    if let Some(events) = hooks["hooks"].as_object() {
        for (event, groups) in events {
            overrides.push((event.as_str(), groups.clone()));
        }
    }
    let mut state = hook_state(hooks);
    if let Value::Object(state) = &mut state {
        state.extend(project_copies_disabled(&session.spec.root));
    }
    let resume = (session_args[0] == "--resume").then_some(session_args[1].as_str());
    let mut command = exec(session, resume);
    for (key, value) in &overrides {
        let key = match *key {
            "mcp_servers" | "sandbox_mode" | "approval_policy" => (*key).to_owned(),
            event => format!("hooks.{event}"),
        };
        command
            .arg("-c")
            .arg(format!("{key}={}", toml_inline(value)));
    }
    command
        .arg("-c")
        .arg(format!("hooks.state={}", toml_inline(&state)));
    finish(&mut command, resume, prompt);
    command
}

/// The stopped thread resumed with only `Checkpoint_handoff`, read-only and without hooks.
pub(super) fn handoff_command(session: &CliSession, request: &str) -> Result<Command, DriverError> {
    let thread = session.resume_id()?;
    let mut command = exec(session, Some(&thread));
    for (key, value) in [
        ("mcp_servers", mcp_servers(session, true)),
        ("sandbox_mode", json!("read-only")),
        ("approval_policy", json!("never")),
    ] {
        command
            .arg("-c")
            .arg(format!("{key}={}", toml_inline(&value)));
    }
    // Nor Codex's shell, web search or goals; `apply_patch` stays offered (no setting drops
    // it), but the read-only sandbox refuses it.
    for (key, value) in HANDOFF_TOOLS_OFF {
        command.arg("-c").arg(format!("{key}={value}"));
    }
    finish(&mut command, Some(&thread), request);
    Ok(command)
}

/// `codex exec [resume] --json --skip-git-repo-check [-m MODEL]` in the project.
fn exec(session: &CliSession, resume: Option<&str>) -> Command {
    let mut command = session.bare_command();
    command.arg("exec");
    if resume.is_some() {
        command.arg("resume");
    }
    command.args(["--json", "--skip-git-repo-check"]);
    if let Some(model) = &session.config.model {
        command.args(["-m", model]);
    }
    command
}

/// The thread to resume, if any, and the prompt, after every option.
fn finish(command: &mut Command, resume: Option<&str>, prompt: &str) {
    if let Some(thread) = resume {
        command.arg(thread);
    }
    command.arg(prompt_argument(prompt));
}

/// `{"context-pilot": {command, args, env[, enabled_tools, tools]}}`: the MCP server reporting
/// to the run, offering only `Checkpoint_handoff` (approved in advance) when `handoff_only`.
fn mcp_servers(session: &CliSession, handoff_only: bool) -> Value {
    let mut server = session.spec.mcp_server(&session.wiring.report_path());
    for name in MCP_PASSED_ENV {
        if let Some(value) = std::env::var_os(name) {
            server["env"][*name] = json!(value.to_string_lossy());
        }
    }
    if handoff_only {
        server["enabled_tools"] = json!([HANDOFF_TOOL]);
        server["tools"] = json!({HANDOFF_TOOL: {"approval_mode": "approve"}});
    }
    json!({ MCP_SERVER: server })
}

/// `value` as an inline TOML value, as `-c key=VALUE` reads it.
fn toml_inline(value: &Value) -> String {
    to_toml(value).to_string().trim().to_owned()
}

fn to_toml(value: &Value) -> toml_edit::Value {
    match value {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => n.as_i64().map_or_else(
            || toml_edit::Value::from(n.as_f64().unwrap_or(0.0)),
            toml_edit::Value::from,
        ),
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(items) => {
            toml_edit::Value::Array(items.iter().map(to_toml).collect::<Array>())
        }
        Value::Object(map) => {
            let mut table = InlineTable::new();
            for (key, item) in map {
                table.insert(key, to_toml(item));
            }
            toml_edit::Value::InlineTable(table)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_becomes_inline_toml_with_odd_keys_quoted() {
        let value = json!({"/<session-flags>/config.toml:stop:0:0": {"trusted_hash": "sha256:ab"},
            "list": [{"type": "command", "command": "say \"hi\"", "timeout": 60}], "on": true});
        let text = toml_inline(&value);
        let parsed: toml_edit::DocumentMut = format!("x = {text}").parse().unwrap();
        assert_eq!(
            parsed["x"]["/<session-flags>/config.toml:stop:0:0"]["trusted_hash"].as_str(),
            Some("sha256:ab")
        );
        assert_eq!(
            parsed["x"]["list"][0]["command"].as_str(),
            Some("say \"hi\"")
        );
        assert_eq!(parsed["x"]["list"][0]["timeout"].as_integer(), Some(60));
    }
}
