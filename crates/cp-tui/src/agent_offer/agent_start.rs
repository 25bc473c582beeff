//! The no-model screen's background work: looking for the agent CLIs on `PATH`
//! ([`LookForAgents`]) and starting the one the person picked ([`StartAgent`]), each off the
//! UI thread.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cp_agent_cli::AgentKind;
use cp_base::{Project, WorkerId};

use crate::agent::cli_agent::CliAgent;
use crate::agent_offer::remembered_agent;
use crate::background::{Job, Reporter};
use crate::events::AppEvent;

/// Looks for the agent CLIs (each one's `--version` runs); ends with
/// [`AppEvent::AgentsFound`].
pub struct LookForAgents;

impl Job for LookForAgents {
    fn thread_name(&self) -> String {
        "cp-agent-look".into()
    }

    fn what(&self) -> &'static str {
        "the look for installed agent CLIs"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        Some(AppEvent::AgentsFound(cp_agent_cli::look_for_agents()))
    }
}

/// Starts the agent the person picked (F5, F6): finds and checks its binary and writes its
/// wiring, and with `remember` records the choice; ends with [`AppEvent::AgentStarted`].
pub struct StartAgent {
    pub project: Project,
    pub worker: WorkerId,
    pub kind: AgentKind,
    pub remember: bool,
    /// Where the started agent is left for the UI thread, which [`AppEvent::AgentStarted`]
    /// tells to take it (the event itself carries no agent, so the events do not depend on
    /// the agent CLI's code, which sends them).
    pub slot: StartedSlot,
}

/// What [`StartAgent`] leaves for the UI thread.
pub type StartedSlot = Arc<Mutex<Option<StartedAgent>>>;

/// What [`StartAgent`] did.
pub struct StartedAgent {
    pub kind: AgentKind,
    /// The agent, or why it cannot start.
    pub cli: Result<CliAgent, cp_agent_cli::AgentError>,
    /// With F6: the file the choice was written to, or why it was not.
    pub remembered: Option<Result<PathBuf, remembered_agent::RememberError>>,
}

impl std::fmt::Debug for StartedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartedAgent")
            .field("kind", &self.kind)
            .field("cli", &self.cli.as_ref().map(CliAgent::label))
            .field("remembered", &self.remembered)
            .finish()
    }
}

impl Job for StartAgent {
    fn thread_name(&self) -> String {
        "cp-agent-start".into()
    }

    fn what(&self) -> &'static str {
        "the agent CLI"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let cli = CliAgent::start(&self.project, &self.worker, self.kind);
        let remembered =
            (self.remember && cli.is_ok()).then(|| remembered_agent::remember(self.kind));
        *self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(StartedAgent {
            kind: self.kind,
            cli,
            remembered,
        });
        Some(AppEvent::AgentStarted)
    }
}
