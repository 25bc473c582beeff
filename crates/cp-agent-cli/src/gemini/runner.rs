//! [`GeminiRunner`]: the restart loop's [`SessionRunner`] over `gemini -p`.

use std::process::Command;

use cp_base::WORKER_ENV;
use cp_mod_checkpoint::{Handoff, SessionControl, SessionEnd, SessionRunner};
use serde_json::{Value, json};

use super::stream::parse_line;
use crate::binary::{AgentBinary, GEMINI};
use crate::drive::{Invocation, WindowSource, drive};
use crate::process::AgentProcess;
use crate::progress::Progress;
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};
use crate::{AgentConfig, AgentError};

/// Gemini CLI reads this file as its *system* settings, which override user and project
/// settings: the wiring reaches Gemini CLI without touching the project's `.gemini/`.
const SYSTEM_SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";
const SESSION_SETTINGS: &str = "session.json";
const HANDOFF_SETTINGS: &str = "handoff.json";

/// Runs restart-loop sessions as `gemini -p` invocations.
///
/// - A fresh session gets a new `--session-id`; only the handoff turn uses `--resume`, with
///   only Context Pilot's `Checkpoint_handoff` offered from the MCP server, no hooks, and the
///   default approval mode (so no edit or shell runs unasked).
/// - MCP and hooks go through a temp system-settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`),
///   which also turns folder trust off for the non-interactive run and selects API-key auth
///   when `GEMINI_API_KEY` is set.
/// - Gemini CLI reports token totals only at the end of a run, so only the tool-call
///   threshold applies (and a configured `context_window` has nothing to measure against).
pub struct GeminiRunner {
    binary: AgentBinary,
    config: AgentConfig,
    spec: WiringSpec,
    wiring: Wiring,
    window: WindowSource,
    progress: Progress,
    session_id: Option<String>,
    env: Vec<(String, String)>,
}

impl GeminiRunner {
    /// Locates `gemini` (config `agent.command`, else `PATH`), checks its version and writes
    /// the settings files.
    pub fn new(
        config: AgentConfig,
        spec: WiringSpec,
        progress: Progress,
    ) -> Result<Self, AgentError> {
        let binary = GEMINI.locate(config.command.as_deref())?;
        tracing::info!(path = %binary.path.display(), version = %binary.version, "using Gemini CLI");
        let api_key = std::env::var_os("GEMINI_API_KEY").is_some();
        let session = settings(&spec, Some(&spec.hook_settings), None, api_key);
        let handoff = settings(&spec, None, Some("Checkpoint_handoff"), api_key);
        let wiring =
            Wiring::write_private(&[(SESSION_SETTINGS, &session), (HANDOFF_SETTINGS, &handoff)])?;
        Ok(Self {
            binary,
            config,
            spec,
            wiring,
            window: WindowSource::default(),
            progress,
            session_id: None,
            env: Vec::new(),
        })
    }

    /// Adds an environment variable for every invocation (e.g. `GOOGLE_GEMINI_BASE_URL`).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The binary and its version.
    pub fn binary(&self) -> &AgentBinary {
        &self.binary
    }

    fn command(&self, prompt: &str, settings: &str) -> Command {
        let mut command = Command::new(&self.binary.path);
        command
            .arg("-p")
            .arg(prompt)
            .args(["--output-format", "stream-json"])
            .current_dir(&self.spec.root)
            .env(SYSTEM_SETTINGS_ENV, self.wiring.path(settings))
            .env(WORKER_ENV, self.spec.worker.as_str())
            // Gemini CLI re-executes itself with more memory by default; the child would
            // escape the process we watch.
            .env("GEMINI_CLI_NO_RELAUNCH", "true")
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(model) = &self.config.model {
            command.args(["--model", model]);
        }
        command
    }

    fn run_invocation(
        &mut self,
        command: Command,
        control: Option<&SessionControl>,
    ) -> Result<SessionEnd, AgentError> {
        let process = AgentProcess::spawn(command, self.binary.path.clone())?;
        let outcome = drive(
            Invocation {
                process,
                parse: parse_line,
                agent: GEMINI.name,
                control,
                window: &self.window,
                root: &self.spec.root,
                grace: self.config.stop_grace(),
            },
            &mut self.progress,
        );
        Ok(outcome.end)
    }
}

/// The system settings of one kind of invocation: the MCP server (only `only_tool` of it
/// when given), the hooks when given, folder trust off, and API-key auth when a key is set.
fn settings(
    spec: &WiringSpec,
    hooks: Option<&Value>,
    only_tool: Option<&str>,
    api_key: bool,
) -> Value {
    let mut server = spec.mcp_server();
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

impl SessionRunner for GeminiRunner {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let session_id = uuid::Uuid::new_v4().to_string();
        self.session_id = Some(session_id.clone());
        let prompt = if prompt.starts_with('-') {
            format!(" {prompt}")
        } else {
            prompt.to_owned()
        };
        let mut command = self.command(&prompt, SESSION_SETTINGS);
        command.args([
            "--session-id",
            &session_id,
            "--approval-mode",
            self.config.permission_mode.as_deref().unwrap_or("yolo"),
        ]);
        match self.run_invocation(command, Some(control)) {
            Ok(end) => end,
            Err(e) => SessionEnd::Failed(e.to_string()),
        }
    }

    fn request_handoff(
        &mut self,
        request: &str,
        _control: &SessionControl,
    ) -> Result<Option<Handoff>, String> {
        let Some(session_id) = self.session_id.clone() else {
            return Err("no Gemini CLI session to resume".to_owned());
        };
        let mut command = self.command(request, HANDOFF_SETTINGS);
        command.args(["--resume", &session_id, "--approval-mode", "default"]);
        match self.run_invocation(command, None) {
            Ok(SessionEnd::Failed(why)) => Err(why),
            Ok(_) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}
