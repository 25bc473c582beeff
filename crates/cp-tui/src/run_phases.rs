//! The agents of workflow phases that run side by side (`context-pilot run` on a workflow with
//! `depends_on`): one fresh host and driver per phase, rooted in the phase's worktree and
//! acting as the phase's worker, with progress lines prefixed by the phase id (headless) or
//! handed to the TUI, which files them under the phase.

use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use cp_agent::{AgentEvent, BuiltinDriver, EventSink};
use cp_agent_cli::{
    AgentConfig, AgentKind, CliDriver, CliRunner as _, Progress, ProgressEvent, WiringSpec,
};
use cp_base::{CancelToken, Project};
use cp_llm::Provider;
use cp_mod_console::ConsoleClient;
use cp_orchestrate::{DriverFactory, PhaseAgent, SessionDriver, Workflow};

use crate::headless_out::short;
use crate::host::Host;
use crate::init::program;
use crate::phase_trust::LentTrust;

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
    /// Where the phases' progress lines go.
    pub(crate) output: PhaseOutput,
    /// The project's trust, lent to the phases' worktrees while they run.
    pub(crate) trust: LentTrust,
}

/// Where the progress lines of the phases' agents go.
#[derive(Clone)]
pub(crate) enum PhaseOutput {
    /// Printed on stdout, each line prefixed with `[phase]` (headless).
    Stdout,
    /// Handed, as [`PhaseNews`], to a receiver with the phase's id (the TUI).
    News(Arc<PhaseNewsSink>),
}

/// Receives the news of a phase: its id, the news.
pub(crate) type PhaseNewsSink = dyn Fn(&str, PhaseNews) + Send + Sync;

/// What a phase's agent reports, for the TUI's Phases panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseNews {
    /// One whole progress line.
    Line(String),
    /// A request's usage: the prompt's size against the window (0: not known), and its
    /// tokens.
    Usage {
        context: u64,
        window: u64,
        tokens: u64,
    },
    /// The stop gate runs the tests.
    Testing,
    /// The stop gate sent the agent back to work.
    Blocked,
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
        self.trust.lend(&self.project, &tree);
        let host = Host::new(tree, spec.worker.clone())
            .map_err(|e| format!("{}: {e}", spec.root.display()))?;
        if kind == AgentKind::Builtin {
            let provider = self.provider.clone().ok_or_else(|| {
                "the built-in agent needs an LLM provider: set ANTHROPIC_API_KEY, or \
                 OPENAI_API_KEY / OPENAI_BASE_URL"
                    .to_owned()
            })?;
            let window = provider.config().context_window;
            return Ok(Box::new(
                BuiltinDriver::new(
                    provider,
                    host.registry().clone(),
                    host.env().clone(),
                    builtin_progress(spec.phase, self.output.clone(), window),
                    host.stop_gate(),
                )
                .with_cancel(self.cancel.clone()),
            ));
        }
        // The `agent` section is for the run's agent (or its `kind`): a phase with another
        // agent is not handed that one's model, binary or permission mode.
        let config = AgentConfig::load(host.project())
            .map_err(|e| e.to_string())?
            .for_agent(kind, self.default);
        let wiring = WiringSpec {
            program: program(),
            root: spec.root.to_path_buf(),
            worker: spec.worker.clone(),
        };
        let mut driver = CliDriver::new(
            kind,
            config,
            wiring,
            cli_progress(spec.phase, self.output.clone()),
        )
        .map_err(|e| e.to_string())?;
        driver.set_cancel(Some(self.cancel.clone()));
        Ok(Box::new(driver))
    }

    fn interrupted(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn release(&self, root: &Path) {
        self.trust.take_back(root);
        // The phase's consoles belong to its worktree: they end with it.
        let stopped = ConsoleClient::for_project(root).and_then(|c| c.shutdown_server());
        if let Err(e) = stopped {
            tracing::warn!(tree = %root.display(), "cannot stop the phase's consoles: {e}");
        }
    }
}

/// Prints whole lines prefixed with `[phase]`; text that streams in pieces is held until its
/// line ends, so phases running at once never split each other's lines.
struct Lines {
    phase: String,
    output: PhaseOutput,
    partial: Mutex<String>,
}

impl Lines {
    fn new(phase: &str, output: PhaseOutput) -> Self {
        Self {
            phase: phase.to_owned(),
            output,
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
        match &self.output {
            PhaseOutput::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "[{}] {line}", self.phase);
                let _ = out.flush();
            }
            PhaseOutput::News(receive) => receive(&self.phase, PhaseNews::Line(line.to_owned())),
        }
    }

    /// News other than a line; headless prints none.
    fn news(&self, news: PhaseNews) {
        if let PhaseOutput::News(receive) = &self.output {
            receive(&self.phase, news);
        }
    }

    /// A line for the person's attention: stderr when headless.
    fn warning(&self, line: &str) {
        match &self.output {
            PhaseOutput::Stdout => eprintln!("[{}] {line}", self.phase),
            PhaseOutput::News(receive) => receive(&self.phase, PhaseNews::Line(line.to_owned())),
        }
    }
}

fn builtin_progress(phase: &str, output: PhaseOutput, window: u64) -> EventSink {
    let lines = Lines::new(phase, output);
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
            lines.news(PhaseNews::Blocked);
            lines.line(&format!(
                "  checkpoint: {}",
                short(reason.lines().next().unwrap_or(""), 100)
            ));
        }
        AgentEvent::StopGateGaveUp(notice) => {
            lines.flush();
            lines.warning(&notice.trim_end().replace('\n', " "));
        }
        AgentEvent::Status(status) => {
            if status.starts_with("running the stop gate") {
                lines.news(PhaseNews::Testing);
            }
            lines.line(&format!("  … {status}"));
        }
        AgentEvent::Restart(text) => lines.line(&format!("  ↻ {text}")),
        AgentEvent::Usage(usage) => {
            lines.flush();
            lines.news(PhaseNews::Usage {
                context: usage.context_tokens(),
                window,
                tokens: usage.context_tokens() + usage.output_tokens,
            });
        }
        AgentEvent::Finished(_) => lines.flush(),
        AgentEvent::Messages { .. } => {}
    })
}

fn cli_progress(phase: &str, output: PhaseOutput) -> Progress {
    let lines = Lines::new(phase, output);
    Box::new(move |event: &ProgressEvent| match event {
        ProgressEvent::Text(text) => lines.text(text),
        ProgressEvent::ToolCall { .. } => {
            lines.flush();
            lines.line(&format!("  {event}"));
        }
        ProgressEvent::ToolResult { .. } => lines.line(&format!("    {event}")),
        ProgressEvent::Usage {
            prompt_tokens,
            window,
        } => {
            lines.news(PhaseNews::Usage {
                context: *prompt_tokens,
                window: window.unwrap_or(0),
                tokens: *prompt_tokens,
            });
            lines.flush();
            lines.line(&format!("  … {event}"));
        }
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
