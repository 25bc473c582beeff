//! The agents of workflow phases that run side by side (`context-pilot run` on a workflow with
//! `depends_on`): one fresh host and driver per phase, rooted in the phase's worktree and
//! acting as the phase's worker, with progress lines prefixed by the phase id.

use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use cp_agent::{AgentEvent, BuiltinDriver, EventSink};
use cp_agent_cli::{
    AgentConfig, AgentKind, CliDriver, CliRunner as _, Progress, ProgressEvent, WiringSpec,
};
use cp_base::{CancelToken, Grant, Project, TrustState};
use cp_llm::Provider;
use cp_mod_console::ConsoleClient;
use cp_orchestrate::{DriverFactory, PhaseAgent, SessionDriver, Workflow};

use crate::host::Host;
use crate::init::program;
use crate::run::short;

/// Makes each phase's driver: `builtin` over `provider`, or the named agent CLI.
pub(crate) struct PhaseDrivers {
    /// The run's agent, for phases without their own `agent:`.
    pub(crate) default: AgentKind,
    /// The built-in agent's provider, when one is configured.
    pub(crate) provider: Option<Arc<dyn Provider>>,
    /// The project the run started in (whose trust a phase's worktree may share).
    pub(crate) project: Project,
    /// Set by Ctrl-C / SIGTERM ([`interrupt_on_signals`]): every phase's driver shares it, so
    /// the built-in agent stops its request and the agent CLIs get SIGINT (their process
    /// group after `agent.stop_grace_secs`).
    pub(crate) cancel: CancelToken,
}

impl PhaseDrivers {
    /// Checks every phase's `agent:` of the workflow at `path` names a known agent, before
    /// anything runs.
    pub(crate) fn check(workflow: &Workflow) -> anyhow::Result<()> {
        for phase in &workflow.phases {
            if let Some(name) = &phase.agent {
                name.parse::<AgentKind>().map_err(|e| {
                    anyhow::anyhow!("workflow phase '{}': agent {name:?}: {e}", phase.id)
                })?;
            }
        }
        Ok(())
    }
}

impl DriverFactory for PhaseDrivers {
    fn driver(&self, spec: &PhaseAgent<'_>) -> Result<Box<dyn SessionDriver + Send>, String> {
        let kind = match spec.agent {
            Some(name) => name.parse::<AgentKind>().map_err(|e| e.to_string())?,
            None => self.default,
        };
        let tree = Project::at(spec.root);
        share_trust(&self.project, &tree);
        let host = Host::new(tree, spec.worker.clone())
            .map_err(|e| format!("{}: {e}", spec.root.display()))?;
        if kind == AgentKind::Builtin {
            let provider = self.provider.clone().ok_or_else(|| {
                "the built-in agent needs an LLM provider: set ANTHROPIC_API_KEY, or \
                 OPENAI_API_KEY / OPENAI_BASE_URL"
                    .to_owned()
            })?;
            return Ok(Box::new(
                BuiltinDriver::new(
                    provider,
                    host.registry().clone(),
                    host.env().clone(),
                    builtin_progress(spec.phase),
                    host.stop_gate(),
                )
                .with_cancel(self.cancel.clone()),
            ));
        }
        let config = AgentConfig::load(host.project()).map_err(|e| e.to_string())?;
        let wiring = WiringSpec {
            program: program(),
            root: spec.root.to_path_buf(),
            worker: spec.worker.clone(),
        };
        let mut driver = CliDriver::new(kind, config, wiring, cli_progress(spec.phase))
            .map_err(|e| e.to_string())?;
        driver.set_cancel(Some(self.cancel.clone()));
        Ok(Box::new(driver))
    }

    fn interrupted(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn release(&self, root: &Path) {
        // The phase's consoles belong to its worktree: they end with it.
        let stopped = ConsoleClient::for_project(root).and_then(|c| c.shutdown_server());
        if let Err(e) = stopped {
            tracing::warn!(tree = %root.display(), "cannot stop the phase's consoles: {e}");
        }
    }
}

/// A phase's worktree holds the project's own configuration. When the project is trusted and
/// the worktree allows exactly the same (callbacks, test command, LLM server: the same grant),
/// the worktree is trusted too, so the phase's tests and callbacks run as they would in the
/// project. A worktree whose configuration differs stays untrusted.
fn share_trust(project: &Project, tree: &Project) {
    if project.root() == tree.root()
        || tree.trust_state().allows()
        || !matches!(project.trust_state(), TrustState::Trusted)
    {
        return;
    }
    let (Ok(ours), Ok(theirs)) = (Grant::of(project), Grant::of(tree)) else {
        return;
    };
    if ours.hash() == theirs.hash()
        && let Err(e) = tree.grant_trust()
    {
        tracing::warn!(tree = %tree.root().display(), "cannot share the project's trust: {e}");
    }
}

/// Prints whole lines prefixed with `[phase]`; text that streams in pieces is held until its
/// line ends, so phases running at once never split each other's lines.
struct Lines {
    prefix: String,
    partial: Mutex<String>,
}

impl Lines {
    fn new(phase: &str) -> Self {
        Self {
            prefix: format!("[{phase}]"),
            partial: Mutex::new(String::new()),
        }
    }

    fn text(&self, text: &str) {
        let mut partial = self.partial.lock().unwrap_or_else(PoisonError::into_inner);
        partial.push_str(text);
        while let Some(end) = partial.find('\n') {
            let line: String = partial.drain(..=end).collect();
            self.line(line.trim_end());
        }
    }

    fn flush(&self) {
        let rest =
            std::mem::take(&mut *self.partial.lock().unwrap_or_else(PoisonError::into_inner));
        if !rest.trim().is_empty() {
            self.line(rest.trim_end());
        }
    }

    fn line(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{} {line}", self.prefix);
        let _ = out.flush();
    }
}

fn builtin_progress(phase: &str) -> EventSink {
    let lines = Lines::new(phase);
    Arc::new(move |event: AgentEvent| match event {
        AgentEvent::Text(text) => lines.text(&text),
        AgentEvent::ToolCalls(calls) => {
            lines.flush();
            for (_, name, args) in &calls {
                lines.line(&format!("  → {name} {}", short(args, 100)));
            }
        }
        AgentEvent::ToolResults(results) => {
            for (_, r) in &results {
                let mark = if r.is_error { "✗" } else { "✓" };
                lines.line(&format!(
                    "    {mark} {}",
                    short(r.text.lines().next().unwrap_or(""), 100)
                ));
            }
        }
        AgentEvent::StopGateBlocked(reason) => {
            lines.flush();
            lines.line(&format!(
                "  checkpoint: {}",
                short(reason.lines().next().unwrap_or(""), 100)
            ));
        }
        AgentEvent::StopGateGaveUp(notice) => {
            eprintln!(
                "[{phase}] {}",
                notice.trim_end().replace('\n', " "),
                phase = lines.prefix.trim_matches(['[', ']'])
            );
        }
        AgentEvent::Status(status) => lines.line(&format!("  … {status}")),
        AgentEvent::Restart(text) => lines.line(&format!("  ↻ {text}")),
        AgentEvent::Usage(_) | AgentEvent::Finished(_) => lines.flush(),
        AgentEvent::Messages { .. } => {}
    })
}

fn cli_progress(phase: &str) -> Progress {
    let lines = Lines::new(phase);
    Box::new(move |event: &ProgressEvent| match event {
        ProgressEvent::Text(text) => lines.text(text),
        ProgressEvent::ToolCall { .. } => {
            lines.flush();
            lines.line(&format!("  {event}"));
        }
        ProgressEvent::ToolResult { .. } => lines.line(&format!("    {event}")),
        _ => {
            lines.flush();
            lines.line(&format!("  … {event}"));
        }
    })
}

/// A headless run of a workflow with `depends_on` stops gracefully on Ctrl-C or SIGTERM:
/// the first signal cancels `cancel` (every phase's agent stops, the phases are recorded as
/// interrupted, and the run exits with 130 for `--resume`); a second one ends the process at
/// once, with the same code.
pub(crate) fn interrupt_on_signals(cancel: &CancelToken) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        // The exit is registered first, so it sees the flag only from a second signal.
        signal_hook::flag::register_conditional_shutdown(
            signal,
            cp_orchestrate::EXIT_INTERRUPTED,
            cancel.shared_flag(),
        )?;
        signal_hook::flag::register(signal, cancel.shared_flag())?;
    }
    Ok(())
}
