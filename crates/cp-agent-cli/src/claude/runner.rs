//! [`ClaudeRunner`]: the restart loop's [`SessionRunner`] over `claude -p`.

use std::process::Command;

use cp_base::WORKER_ENV;
use cp_mod_checkpoint::{Handoff, SessionControl, SessionEnd, SessionRunner};
use serde_json::json;

use super::{model_window, parse_line};
use crate::binary::{AgentBinary, CLAUDE};
use crate::drive::{Invocation, WindowSource, drive};
use crate::process::AgentProcess;
use crate::progress::Progress;
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};
use crate::{AgentConfig, AgentError};

const MCP_FILE: &str = "mcp.json";
const SETTINGS_FILE: &str = "settings.json";
/// The only tool the handoff turn may use.
const HANDOFF_TOOL: &str = "mcp__context-pilot__Checkpoint_handoff";

/// Runs restart-loop sessions as `claude -p` invocations.
///
/// - A fresh session gets a new `--session-id`; the handoff turn `--resume`s the stopped one
///   with only `Checkpoint_handoff` allowed and no hooks (the stop checkpoint must not hold
///   it up).
/// - Context Pilot's MCP server (`--mcp-config`) and hooks (`--settings`) are passed per
///   invocation from temp files.
/// - Usage is measured from the stream: the prompt of the latest response (input + cache
///   creation + cache read), de-duplicated by message id, against the window from config,
///   else the model table, else what Claude Code reported at the end of an earlier run.
pub struct ClaudeRunner {
    binary: AgentBinary,
    config: AgentConfig,
    spec: WiringSpec,
    wiring: Wiring,
    window: WindowSource,
    progress: Progress,
    session_id: Option<String>,
    env: Vec<(String, String)>,
}

impl ClaudeRunner {
    /// Locates `claude` (config `agent.command`, else `PATH`), checks its version and writes
    /// the wiring files.
    pub fn new(
        config: AgentConfig,
        spec: WiringSpec,
        progress: Progress,
    ) -> Result<Self, AgentError> {
        let binary = CLAUDE.locate(config.command.as_deref())?;
        tracing::info!(path = %binary.path.display(), version = %binary.version, "using Claude Code");
        let mcp = json!({"mcpServers": {MCP_SERVER: spec.mcp_server()}});
        let wiring = Wiring::write(&[(MCP_FILE, &mcp), (SETTINGS_FILE, &spec.hook_settings)])?;
        let window = WindowSource {
            configured: config.context_window,
            table: Some(model_window),
            reported: None,
        };
        Ok(Self {
            binary,
            config,
            spec,
            wiring,
            window,
            progress,
            session_id: None,
            env: Vec::new(),
        })
    }

    /// Adds an environment variable for every invocation (e.g. `ANTHROPIC_BASE_URL`).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The binary and its version.
    pub fn binary(&self) -> &AgentBinary {
        &self.binary
    }

    /// The id of the latest session (`--session-id` of the last fresh run).
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn command(&self, prompt: &str) -> Command {
        let mut command = Command::new(&self.binary.path);
        command
            .arg("-p")
            // A prompt starting with `-` would be read as an option.
            .arg(if prompt.starts_with('-') {
                format!(" {prompt}")
            } else {
                prompt.to_owned()
            })
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--mcp-config",
            ])
            .arg(self.wiring.path(MCP_FILE))
            .current_dir(&self.spec.root)
            .env(WORKER_ENV, self.spec.worker.as_str())
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
                agent: CLAUDE.name,
                control,
                window: &self.window,
                root: &self.spec.root,
                grace: self.config.stop_grace(),
            },
            &mut self.progress,
        );
        if outcome.reported_window.is_some() {
            self.window.reported = outcome.reported_window;
        }
        Ok(outcome.end)
    }
}

impl SessionRunner for ClaudeRunner {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let session_id = uuid::Uuid::new_v4().to_string();
        self.session_id = Some(session_id.clone());
        let mut command = self.command(prompt);
        let mut allowed = vec![format!("mcp__{MCP_SERVER}")];
        allowed.extend(self.config.allowed_tools.iter().cloned());
        command
            .args([
                "--session-id",
                &session_id,
                "--include-hook-events",
                "--settings",
            ])
            .arg(self.wiring.path(SETTINGS_FILE))
            .args([
                "--permission-mode",
                self.config
                    .permission_mode
                    .as_deref()
                    .unwrap_or("acceptEdits"),
            ])
            .arg("--allowedTools")
            .args(&allowed);
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
            return Err("no Claude Code session to resume".to_owned());
        };
        let mut command = self.command(request);
        command.args([
            "--resume",
            &session_id,
            "--tools",
            "",
            "--allowedTools",
            HANDOFF_TOOL,
        ]);
        match self.run_invocation(command, None) {
            Ok(SessionEnd::Failed(why)) => Err(why),
            Ok(_) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}
