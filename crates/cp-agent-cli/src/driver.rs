//! [`CliDriver`]: the restart loop's [`SessionDriver`] over any agent CLI, and the one
//! constructor of a driver for a kind.
//!
//! Every session is one headless invocation the agent's descriptor builds
//! ([`AgentCli::session_command`](crate::AgentCli::session_command)); the driver, the stop at a
//! tool boundary, the resume and the handoff turn are the same for every agent.

use cp_base::CancelToken;
use cp_orchestrate::{
    DriverError, Handoff, SESSION_BASE_ENV, SessionControl, SessionDriver, SessionEnd,
};

use crate::binary::AgentBinary;
use crate::interactive::CliRunner;
use crate::kind::AgentKind;
use crate::progress::Progress;
use crate::session::CliSession;
use crate::wiring::WiringSpec;
use crate::{AgentConfig, AgentError};

/// Runs restart-loop sessions as invocations of one agent CLI.
pub struct CliDriver {
    agent: &'static dyn crate::AgentCli,
    session: CliSession,
}

impl CliDriver {
    /// The driver of `kind`: locates its CLI (config `agent.command`, else `PATH`), checks its
    /// version and writes the run's wiring. The built-in loop has none
    /// ([`AgentError::Builtin`]).
    pub fn new(
        kind: AgentKind,
        config: AgentConfig,
        spec: WiringSpec,
        progress: Progress,
    ) -> Result<Self, AgentError> {
        let agent = kind.cli().ok_or(AgentError::Builtin)?;
        let session = start(agent, config, spec, progress)?;
        Ok(Self { agent, session })
    }

    /// Adds an environment variable for every invocation (e.g. `ANTHROPIC_BASE_URL`).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.session.env.push((name.into(), value.into()));
        self
    }

    /// "Claude Code" or "Gemini CLI".
    pub fn display_name(&self) -> &'static str {
        self.agent.spec().display_name
    }

    /// The binary and its version.
    pub fn binary(&self) -> &AgentBinary {
        &self.session.binary
    }

    /// The id of the latest session (`--session-id` of the last fresh run).
    pub fn session_id(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }

    /// The context window of the configured model, when config or the model table knows it.
    pub fn configured_window(&self) -> Option<u64> {
        self.session
            .window
            .window(self.session.config.model.as_deref())
    }
}

impl CliRunner for CliDriver {
    fn continue_session(&mut self) {
        self.session.continuing = true;
    }

    fn set_cancel(&mut self, cancel: Option<CancelToken>) {
        self.session.cancel = cancel;
    }

    fn resume_session(&mut self, session_id: String) {
        self.session.session_id = Some(session_id);
    }

    fn current_session(&self) -> Option<&str> {
        self.session.session_id.as_deref()
    }
}

impl SessionDriver for CliDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        let (prompt, session_args) = self.session.fresh_or_resumed(prompt);
        let mut command = self
            .agent
            .session_command(&self.session, &prompt, &session_args);
        // The stop gate behind the agent's hooks checks what the phase committed since it
        // began, a restart's auto-commit included.
        if let Some(base) = control.base()
            && let Ok(json) = serde_json::to_string(base)
        {
            command.env(SESSION_BASE_ENV, json);
        }
        self.session.run(command, control)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        let command = self
            .agent
            .handoff_command(&self.session, request, control)?;
        self.session.handoff(command)?;
        // `context-pilot mcp` saved the handoff; the restart loop reads it from the store.
        Ok(None)
    }
}

/// Locates the CLI of `agent` (config `agent.command`, else `PATH`), checks its version, and
/// writes its wiring: its run hooks with the probe hook added (see [`crate::wired`]).
fn start(
    agent: &dyn crate::AgentCli,
    config: AgentConfig,
    spec: WiringSpec,
    progress: Progress,
) -> Result<CliSession, AgentError> {
    let cli = agent.spec();
    let binary = cli.locate(config.command.as_deref())?;
    tracing::info!(
        path = %binary.path.display(),
        version = %binary.version,
        "using {}",
        cli.display_name
    );
    let hooks = spec.hooks_with_probe(
        agent.run_hooks(&spec.program, binary.parsed_version()),
        cli.probe_event,
    );
    let wiring = agent.wire(&spec, &hooks)?;
    Ok(CliSession::new(cli, binary, config, spec, wiring, progress))
}
