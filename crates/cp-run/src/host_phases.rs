//! The host's side of `context-pilot phase --json` (`cp_remote::serve_phase`): the phase's
//! agent, made as the run's machine makes a phase's agent ([`PhaseDrivers`]), with this
//! host's own agent configuration and credentials, never the run's; its news goes back over
//! the connection.

use std::path::Path;
use std::sync::Arc;

use cp_agent_cli::{AgentConfig, AgentKind};
use cp_base::{CancelToken, Project};
use cp_orchestrate::{DriverError, DriverFactory as _, PhaseAgent, SessionDriver};

use crate::phase_news::{PhaseNews, PhaseOutput};
use crate::phases::PhaseDrivers;

/// The host's side of `context-pilot phase --json`: the phase's agent, made as on the run's
/// machine, with this host's own agent configuration and credentials (never the run's).
pub struct HostPhases;

impl cp_remote::PhaseBench for HostPhases {
    fn driver(
        &self,
        spec: &PhaseAgent<'_>,
        news: cp_remote::NewsSink,
    ) -> Result<Box<dyn SessionDriver + Send>, DriverError> {
        let project = Project::at(spec.root);
        let default = AgentConfig::load(&project)
            .ok()
            .and_then(|c| c.kind)
            .unwrap_or(AgentKind::Builtin);
        let drivers = PhaseDrivers {
            default,
            provider: cp_llm::configured_provider(&project).ok().flatten(),
            project,
            cancel: CancelToken::new(),
            output: PhaseOutput::News(Arc::new(move |_: &str, item: PhaseNews| {
                if let Ok(value) = serde_json::to_value(&item) {
                    news(value);
                }
            })),
            remote: None,
        };
        drivers.driver(spec)
    }

    fn end(&self, root: &Path) {
        crate::merge_tests::end_consoles(root);
    }
}
