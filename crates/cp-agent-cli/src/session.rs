//! One agent CLI's state across the sessions of a run, the same for every agent: the located
//! binary, the wiring, the window source, the progress sink, the current session id, and
//! running one invocation through the driver.

use std::process::Command;

use cp_base::WORKER_ENV;
use cp_orchestrate::{DriverError, SessionControl, SessionEnd};

use crate::binary::AgentBinary;
use crate::hook_report::{HOOK_REPORT_ENV, ReportReader};
use crate::invocation::{Invocation, WindowSource, drive};
use crate::process::AgentProcess;
use crate::progress::Progress;
use crate::session_log::SessionLog;
use crate::spec::AgentSpec;
use crate::transcript::Transcript;
use crate::wiring::{Wiring, WiringSpec};
use crate::{AgentConfig, AgentError};
use cp_base::CancelToken;

/// One agent CLI's state across the sessions of a run.
pub struct CliSession {
    /// Which CLI.
    pub cli: &'static AgentSpec,
    /// The located binary.
    pub binary: AgentBinary,
    /// The `"agent"` config.
    pub config: AgentConfig,
    /// Project and worker.
    pub spec: WiringSpec,
    /// The per-run settings files.
    pub wiring: Wiring,
    /// Where the context window comes from.
    pub window: WindowSource,
    /// Where events go.
    pub progress: Progress,
    /// The latest fresh session's id.
    pub session_id: Option<String>,
    /// Extra environment for every invocation.
    pub env: Vec<(String, String)>,
    /// The next fresh run resumes the latest session instead (the next turn of an
    /// interactive conversation).
    pub continuing: bool,
    /// Whether the person cancelled the running turn.
    pub cancel: Option<CancelToken>,
    /// The conversation of the latest session, as far as the stream showed it.
    pub transcript: Transcript,
    /// The next invocation resumes `session_id` (its session record so far is not news).
    pub resuming: bool,
}

impl CliSession {
    /// A run's session state for the CLI `cli`, found at `binary`, wired by `wiring`. The
    /// window comes from config, else the model table.
    pub fn new(
        cli: &'static AgentSpec,
        binary: AgentBinary,
        config: AgentConfig,
        spec: WiringSpec,
        wiring: Wiring,
        progress: Progress,
    ) -> Self {
        let window = WindowSource {
            configured: config.context_window,
            table: Some(cli.model_window),
            reported: None,
        };
        Self {
            cli,
            binary,
            config,
            spec,
            wiring,
            window,
            progress,
            session_id: None,
            env: Vec::new(),
            continuing: false,
            cancel: None,
            transcript: Transcript::default(),
            resuming: false,
        }
    }

    /// `binary -p PROMPT` in the project, as the run's worker, with the extra environment
    /// and the configured model.
    pub fn command(&self, prompt: &str) -> Command {
        let mut command = self.bare_command();
        command.arg("-p").arg(prompt_argument(prompt));
        if let Some(model) = &self.config.model {
            command.args(["--model", model]);
        }
        command
    }

    /// The binary in the project, as the run's worker, with the extra environment: no
    /// arguments yet.
    pub fn bare_command(&self) -> Command {
        let mut command = Command::new(&self.binary.path);
        command
            .current_dir(&self.spec.root)
            .env(WORKER_ENV, self.spec.worker.as_str())
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// A new id for a fresh session, remembered for the handoff turn.
    pub fn new_session_id(&mut self) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.session_id = Some(id.clone());
        id
    }

    /// Whether this CLI's `--resume` gives a session the model's API accepts (see
    /// [`AgentSpec::resume_since`]).
    pub fn can_resume(&self) -> bool {
        self.cli.resume_works(&self.binary.version)
    }

    /// The prompt and session option of a run. Continuing a conversation that has a session
    /// is `--resume ID`; where the CLI cannot resume safely, a fresh session is given the
    /// conversation so far before `prompt` instead (when Context Pilot saw it; after a restart
    /// of Context Pilot only `--resume` can carry it). Otherwise: `--session-id NEW`.
    pub fn fresh_or_resumed(&mut self, prompt: &str) -> (String, [String; 2]) {
        let continuing = std::mem::take(&mut self.continuing);
        self.resuming = false;
        if continuing && let Some(id) = self.session_id.clone() {
            if self.can_resume() || self.transcript.is_empty() {
                self.transcript.prompt(prompt);
                self.resuming = true;
                return (prompt.to_owned(), ["--resume".to_owned(), id]);
            }
            tracing::info!(
                agent = self.cli.display_name,
                version = %self.binary.version,
                "continuing in a fresh session with the conversation so far (its --resume is not safe)"
            );
            let carried = continued_prompt(&self.transcript, prompt);
            let id = uuid::Uuid::new_v4().to_string();
            self.session_id = Some(id.clone());
            self.transcript.prompt(prompt);
            return (carried, ["--session-id".to_owned(), id]);
        }
        let id = self.new_session_id();
        if self.cli.names_its_sessions {
            // The agent's own id arrives with its first event; until then there is nothing
            // to resume (a session that failed before naming itself is not continued).
            self.session_id = None;
        }
        self.transcript.clear();
        self.transcript.prompt(prompt);
        (prompt.to_owned(), ["--session-id".to_owned(), id])
    }

    /// The session the handoff turn resumes.
    pub fn resume_id(&self) -> Result<String, DriverError> {
        self.session_id.clone().ok_or_else(|| {
            DriverError::new(format!("no {} session to resume", self.cli.display_name))
        })
    }

    /// Runs `command` to its end; `control` is `None` for the handoff turn. The hooks the
    /// agent runs report their verdicts to a fresh file of the wiring (`HOOK_REPORT_ENV`).
    pub fn invoke(
        &mut self,
        mut command: Command,
        control: Option<&SessionControl>,
    ) -> Result<SessionEnd, AgentError> {
        let path = self.wiring.report_path();
        let reports = ReportReader::create(path.clone())
            .map_err(|source| AgentError::Wiring { path, source })?;
        command.env(HOOK_REPORT_ENV, reports.path());
        // The handoff turn resumes the stopped session; a session resumes when asked to.
        let resumed = (control.is_none() || std::mem::take(&mut self.resuming))
            .then(|| self.session_id.clone())
            .flatten();
        let log = self
            .cli
            .session_log
            .map(|spec| SessionLog::new(spec, self.env.clone(), resumed));
        let process = AgentProcess::spawn(command, self.binary.path.clone())?;
        let outcome = drive(
            Invocation {
                process,
                parse: self.cli.parse_line,
                agent: self.cli.display_name,
                control,
                window: &self.window,
                root: &self.spec.root,
                grace: self.config.stop_grace(),
                cancel: self.cancel.as_ref(),
                reports,
                transcript: &mut self.transcript,
                // The handoff turn runs without hooks: only sessions are checked.
                check_wiring: control.is_some(),
                log,
            },
            &mut self.progress,
        );
        if self.cli.names_its_sessions && outcome.session_id.is_some() {
            self.session_id.clone_from(&outcome.session_id);
        }
        if outcome.reported_window.is_some() {
            self.window.reported = outcome.reported_window;
        }
        Ok(outcome.end)
    }

    /// A fresh session's end, a failure to start included.
    pub fn run(&mut self, command: Command, control: &SessionControl) -> SessionEnd {
        self.invoke(command, Some(control))
            .unwrap_or_else(|e| SessionEnd::Failed(e.to_string()))
    }

    /// The handoff turn: `Ok` unless the agent failed.
    pub fn handoff(&mut self, command: Command) -> Result<(), DriverError> {
        match self.invoke(command, None) {
            Ok(SessionEnd::Failed(why)) => Err(DriverError::new(why)),
            Ok(_) => Ok(()),
            Err(e) => Err(DriverError::with_source(
                format!(
                    "the {} handoff turn could not run: {e}",
                    self.cli.display_name
                ),
                e,
            )),
        }
    }
}

/// `prompt` as one argument: one starting with `-` would be read as an option.
pub fn prompt_argument(prompt: &str) -> String {
    if prompt.starts_with('-') {
        format!(" {prompt}")
    } else {
        prompt.to_owned()
    }
}

/// The prompt of a fresh session that continues a conversation it cannot resume.
fn continued_prompt(transcript: &Transcript, prompt: &str) -> String {
    format!(
        "# The conversation so far\n\nThis continues an earlier conversation with you in this \
         project, which cannot be resumed directly. Here it is as Context Pilot recorded it \
         (prompts, your replies, your tool calls and their results). Take it as your own \
         memory: do not redo what it shows done, and re-read a file before changing it.\n\n\
         {}\n---\n\n# The new message\n\n{prompt}",
        transcript.to_markdown()
    )
}
