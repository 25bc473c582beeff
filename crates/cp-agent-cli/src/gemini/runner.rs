//! [`GeminiRunner`]: the restart loop's [`SessionRunner`] over `gemini -p`.

use cp_orchestrate::{Handoff, RunnerError, SessionControl, SessionEnd, SessionRunner};
use serde_json::{Value, json};

use std::path::Path;

use super::handoff::handoff_prompt;
use super::home;
use super::stream::{model_window, parse_line};
use crate::binary::{AgentBinary, GEMINI};
use crate::cancel::CancelCheck;
use crate::interactive::CliRunner;
use crate::progress::Progress;
use crate::session::{CliKind, CliSession};
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};
use crate::{AgentConfig, AgentError};

/// The private Gemini CLI homes of the two kinds of invocation (see [`super::home`]).
const SESSION_HOME: &str = "session-home";
const HANDOFF_HOME: &str = "handoff-home";

/// Runs restart-loop sessions as `gemini -p` invocations.
///
/// - A fresh session gets a new `--session-id`. The handoff turn offers only Context
///   Pilot's `Checkpoint_handoff` from the MCP server, no hooks, and the default approval
///   mode, in which headless Gemini CLI offers none of its tools that edit or run commands.
///   (An empty `tools.core` allowlist would hide the MCP tool too: 0.61 filters both.) Where
///   Gemini CLI's `--resume` is broken ([`GEMINI`]`.resume_since`), it runs in a fresh
///   session given the stopped session's transcript, tool history and `git diff`;
///   otherwise it resumes the stopped session. Later interactive turns are carried the same
///   way.
/// - MCP and hooks go through a private Gemini CLI home (`GEMINI_CLI_HOME`) whose
///   `.gemini/` links the person's own and whose `settings.json` is theirs with the wiring
///   merged in (see [`super::home`] for why not a system-settings file: Gemini CLI ignores
///   one that root does not own). The wiring also turns folder trust off for the
///   non-interactive run and selects API-key auth when `GEMINI_API_KEY` is set. A
///   `BeforeAgent` probe hook and the MCP server prove to the run that Gemini CLI loaded them.
/// - Gemini CLI's stream reports tokens only at the end of a run; the prompt size of each
///   response comes from its `AfterModel` hook instead, which the caller's hook settings add
///   (`context-pilot model-usage`, reporting through `HOOK_REPORT_ENV`), against the window
///   from config, else the model table.
pub struct GeminiRunner {
    session: CliSession,
}

impl GeminiRunner {
    /// Locates `gemini` (config `agent.command`, else `PATH`), checks its version and writes
    /// the settings files.
    pub fn new(
        config: AgentConfig,
        spec: WiringSpec,
        progress: Progress,
    ) -> Result<Self, AgentError> {
        let kind = CliKind {
            cli: GEMINI,
            parse: parse_line,
            model_window,
        };
        let session = CliSession::start(&kind, config, spec, progress, |spec| {
            let api_key = std::env::var_os("GEMINI_API_KEY").is_some();
            let wiring = Wiring::create_private()?;
            let report = wiring.report_path();
            let session = settings(spec, &report, Some(&spec.hook_settings), None, api_key);
            let handoff = settings(spec, &report, None, Some("Checkpoint_handoff"), api_key);
            let person = home::person_home();
            home::build(&wiring.path(SESSION_HOME), person.as_deref(), &session)?;
            home::build(&wiring.path(HANDOFF_HOME), person.as_deref(), &handoff)?;
            Ok(wiring)
        })?;
        Ok(Self { session })
    }

    /// Adds an environment variable for every invocation (e.g. `GOOGLE_GEMINI_BASE_URL`).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.session.env.push((name.into(), value.into()));
        self
    }

    /// The id of the latest session (`--session-id` of the last fresh run).
    pub fn session_id(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }

    /// The binary and its version.
    pub fn binary(&self) -> &AgentBinary {
        &self.session.binary
    }

    fn command(&self, prompt: &str, home: &str) -> std::process::Command {
        let mut command = self.session.command(prompt);
        command
            .args(["--output-format", "stream-json"])
            .env(home::HOME_ENV, self.session.wiring.path(home))
            // Gemini CLI re-executes itself with more memory by default; the child would
            // escape the process we watch.
            .env("GEMINI_CLI_NO_RELAUNCH", "true");
        command
    }
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

impl CliRunner for GeminiRunner {
    fn continue_session(&mut self) {
        self.session.continuing = true;
    }

    fn set_cancel(&mut self, cancel: Option<CancelCheck>) {
        self.session.cancel = cancel;
    }

    fn resume_session(&mut self, session_id: String) {
        self.session.session_id = Some(session_id);
    }

    fn current_session(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }
}

impl SessionRunner for GeminiRunner {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let (prompt, session) = self.session.fresh_or_resumed(prompt);
        let mode = self
            .session
            .config
            .permission_mode
            .clone()
            .unwrap_or_else(|| "yolo".to_owned());
        let mut command = self.command(&prompt, SESSION_HOME);
        command.args(&session).args(["--approval-mode", &mode]);
        self.session.run(command, control)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, RunnerError> {
        let session_id = self.session.resume_id()?;
        let mut command = if self.session.can_resume() {
            let mut command = self.command(request, HANDOFF_HOME);
            command.args(["--resume", &session_id]);
            command
        } else {
            // A fresh session of its own, told what the stopped one did.
            let prompt = handoff_prompt(
                request,
                &self.session.transcript,
                &control.tool_history(),
                &self.session.spec.root,
            );
            let mut command = self.command(&prompt, HANDOFF_HOME);
            command.args(["--session-id", &uuid::Uuid::new_v4().to_string()]);
            command
        };
        command.args(["--approval-mode", "default"]);
        self.session.handoff(command)?;
        Ok(None)
    }
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
            hook_settings: json!({"hooks": {"AfterAgent": []}}),
        };
        let report = Path::new("/w/reports.jsonl");
        let session = settings(&spec, report, Some(&spec.hook_settings), None, true);
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
