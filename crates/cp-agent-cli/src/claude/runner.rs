//! [`ClaudeRunner`]: the restart loop's [`SessionRunner`] over `claude -p`.

use cp_orchestrate::{Handoff, RunnerError, SessionControl, SessionEnd, SessionRunner};
use serde_json::json;

use super::{model_window, parse_line};
use crate::binary::{AgentBinary, CLAUDE};
use crate::cancel::CancelCheck;
use crate::interactive::CliRunner;
use crate::progress::Progress;
use crate::session::{CliKind, CliSession};
use crate::wiring::{MCP_SERVER, Wiring, WiringSpec};
use crate::{AgentConfig, AgentError};

const MCP_FILE: &str = "mcp.json";
const SETTINGS_FILE: &str = "settings.json";
/// The only tool the handoff turn may use.
const HANDOFF_TOOL: &str = "mcp__context-pilot__Checkpoint_handoff";

/// Runs restart-loop sessions as `claude -p` invocations.
///
/// - A fresh session gets a new `--session-id`; the handoff turn `--resume`s the stopped one
///   with no built-in tools, only `Checkpoint_handoff` allowed, and no hooks (the stop
///   checkpoint must not hold it up).
/// - Context Pilot's MCP server (`--mcp-config`) and hooks (`--settings`) are passed per
///   invocation from temp files; the hooks report their verdicts to the runner directly
///   (`HOOK_REPORT_ENV`), and a `UserPromptSubmit` probe hook and the MCP server prove to it
///   that Claude Code loaded them.
/// - Usage is measured from the stream: the prompt of the latest response (input + cache
///   creation + cache read), de-duplicated by message id, against the window from config,
///   else the model table, else what Claude Code reported at the end of an earlier session.
pub struct ClaudeRunner {
    session: CliSession,
}

impl ClaudeRunner {
    /// Locates `claude` (config `agent.command`, else `PATH`), checks its version and writes
    /// the wiring files.
    pub fn new(
        config: AgentConfig,
        spec: WiringSpec,
        progress: Progress,
    ) -> Result<Self, AgentError> {
        let kind = CliKind {
            cli: CLAUDE,
            parse: parse_line,
            model_window,
        };
        let session = CliSession::start(&kind, config, spec, progress, |spec| {
            let wiring = Wiring::create()?;
            let mcp = json!({"mcpServers": {MCP_SERVER: spec.mcp_server(&wiring.report_path())}});
            wiring.write(MCP_FILE, &mcp)?;
            wiring.write(SETTINGS_FILE, &spec.hook_settings)?;
            Ok(wiring)
        })?;
        Ok(Self { session })
    }

    /// Adds an environment variable for every invocation (e.g. `ANTHROPIC_BASE_URL`).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.session.env.push((name.into(), value.into()));
        self
    }

    /// The binary and its version.
    pub fn binary(&self) -> &AgentBinary {
        &self.session.binary
    }

    /// The id of the latest session (`--session-id` of the last fresh run).
    pub fn session_id(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }
}

impl CliRunner for ClaudeRunner {
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

impl SessionRunner for ClaudeRunner {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let (prompt, session) = self.session.fresh_or_resumed(prompt);
        let config = &self.session.config;
        let mut allowed = vec![format!("mcp__{MCP_SERVER}")];
        allowed.extend(config.allowed_tools.iter().cloned());
        let mode = config
            .permission_mode
            .clone()
            .unwrap_or_else(|| "acceptEdits".to_owned());
        let mut command = self.session.command(&prompt);
        command
            .args(["--output-format", "stream-json", "--verbose"])
            .args(&session)
            .arg("--mcp-config")
            .arg(self.session.wiring.path(MCP_FILE))
            .arg("--settings")
            .arg(self.session.wiring.path(SETTINGS_FILE))
            .args(["--permission-mode", &mode])
            // Variadic: it must come last.
            .arg("--allowedTools")
            .args(&allowed);
        self.session.run(command, control)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        _control: &SessionControl,
    ) -> Result<Option<Handoff>, RunnerError> {
        let session_id = self.session.resume_id()?;
        let mut command = self.session.command(request);
        command
            .args(["--output-format", "stream-json", "--verbose"])
            .args(["--resume", &session_id])
            .arg("--mcp-config")
            .arg(self.session.wiring.path(MCP_FILE))
            .args(["--tools", "", "--allowedTools", HANDOFF_TOOL]);
        self.session.handoff(command)?;
        // `context-pilot mcp` saved the handoff; the restart loop reads it from the store.
        Ok(None)
    }
}
