//! The agents of workflow phases that run side by side (`context-pilot run` on a workflow with
//! `depends_on`): one fresh host and driver per phase, rooted in the phase's worktree and
//! acting as the phase's worker, with progress lines prefixed by the phase id (headless) or
//! handed to the TUI as [`PhaseNews`] (the answer's text, tool calls and their results,
//! notices, usage), which files them in the phase's own conversation.

use std::path::Path;
use std::sync::Arc;

use cp_agent::{AgentEvent, BuiltinDriver, EventSink, TurnEnd};
use cp_agent_cli::{
    AgentConfig, AgentKind, CliDriver, InteractiveDriver as _, Progress, ProgressEvent, WiringSpec,
};
use cp_base::{CancelToken, Level, Project, ToolResult};
use cp_llm::Provider;
use cp_orchestrate::{
    DriverError, DriverFactory, PhaseAgent, SessionDriver, TreeTest, TreeTester, TreeUnderTest,
    Workflow,
};

use cp_base::text::fit_end;
use cp_host::Host;
use cp_host::program::program;

use crate::phase_news::Lines;
pub use crate::phase_news::{PhaseNews, PhaseNewsSink, PhaseOutput};
use crate::remote_phases::{RemoteDriver, RemotePhases};

/// Makes each phase's driver: `builtin` over `provider`, or the named agent CLI.
pub struct PhaseDrivers {
    /// The run's agent, for phases without their own `agent:`.
    pub default: AgentKind,
    /// The built-in agent's provider, when one is configured.
    pub provider: Option<Arc<dyn Provider>>,
    /// The project the run started in (a phase's worktree, a linked worktree of it, is
    /// trusted as it is while its configuration is the same: `cp_base::TrustState`).
    pub project: Project,
    /// Set by Ctrl-C / SIGTERM ([`interrupt_on_signals`](crate::interrupt::interrupt_on_signals)):
    /// every phase's driver shares it, so the built-in agent stops its request and the agent
    /// CLIs get SIGINT (their process group after `agent.stop_grace_secs`).
    pub cancel: CancelToken,
    /// Where the phases' progress lines go.
    pub output: PhaseOutput,
    /// The hosts phases in worktrees of their own may run on (`hosts` in config.json);
    /// `None`: every phase runs here.
    pub remote: Option<Arc<RemotePhases>>,
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

/// A merge's tree is tested by the stop gate ([`crate::merge_tests`]), stopped by the run's
/// Ctrl-C as well as the queue's own stop.
impl TreeTester for PhaseDrivers {
    fn test_tree(&self, tree: &TreeUnderTest<'_>) -> TreeTest {
        crate::merge_tests::test_with_gate(tree, &self.cancel.joined(tree.cancel))
    }
}

impl DriverFactory for PhaseDrivers {
    fn driver(&self, spec: &PhaseAgent<'_>) -> Result<Box<dyn SessionDriver + Send>, DriverError> {
        let kind = match spec.agent {
            Some(name) => name
                .parse::<AgentKind>()
                .map_err(DriverError::from_source)?,
            None => self.default,
        };
        let worktree = spec.root != self.project.root();
        if let PhaseOutput::News(receive) = &self.output {
            receive(spec.phase, PhaseNews::Started { worktree });
        }
        let local = self.local_driver(spec, kind)?;
        // A phase in a worktree of its own may go to a host; one in the project's tree
        // works where the person's files are.
        if let Some(remote) = self.remote.as_ref().filter(|_| worktree)
            && let Some(at) = RemoteDriver::slot(remote, spec)
        {
            return Ok(Box::new(RemoteDriver::new(
                Arc::clone(remote),
                at,
                spec,
                (self.output.clone(), self.cancel.joined(spec.stop)),
                local,
            )));
        }
        Ok(local)
    }

    fn interrupted(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn release(&self, root: &Path) {
        // The phase's consoles belong to its worktree: they end with it.
        crate::merge_tests::end_consoles(root);
    }
}

impl PhaseDrivers {
    /// The agent of `spec` on this machine.
    fn local_driver(
        &self,
        spec: &PhaseAgent<'_>,
        kind: AgentKind,
    ) -> Result<Box<dyn SessionDriver + Send>, DriverError> {
        // The run's Ctrl-C stops every phase; the phase's own stop, this one alone.
        let cancel = self.cancel.joined(spec.stop);
        let tree = Project::at(spec.root);
        let host = Host::new(tree, spec.worker.clone())
            .map_err(|e| DriverError::new(format!("{}: {e}", spec.root.display())))?;
        if kind == AgentKind::Builtin {
            let provider = self.provider.clone().ok_or_else(|| {
                DriverError::new(
                    "the built-in agent needs an LLM provider: set ANTHROPIC_API_KEY, or \
                     OPENAI_API_KEY / OPENAI_BASE_URL",
                )
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
                .with_cancel(cancel),
            ));
        }
        // The `agent` section is for the run's agent (or its `kind`): a phase with another
        // agent is not handed that one's model, binary or permission mode.
        let config = AgentConfig::load(host.project())
            .map_err(DriverError::from_source)?
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
        .map_err(DriverError::from_source)?;
        driver.set_cancel(Some(cancel));
        Ok(Box::new(driver))
    }
}

/// The built-in agent's events of `phase`: printed (headless) or handed on as news.
fn builtin_progress(phase: &str, output: PhaseOutput, window: u64) -> EventSink {
    match output {
        PhaseOutput::Stdout => builtin_lines(Lines::new(phase)),
        PhaseOutput::News(receive) => {
            let phase = phase.to_owned();
            Arc::new(move |event: AgentEvent| {
                for news in builtin_news(event, window) {
                    receive(&phase, news);
                }
            })
        }
    }
}

fn builtin_lines(lines: Lines) -> EventSink {
    Arc::new(move |event: AgentEvent| match event {
        AgentEvent::Text(text) => lines.text(&text),
        AgentEvent::ToolCalls(calls) => {
            lines.flush();
            for (_, name, args) in &calls {
                lines.line(&format!("  → {name} {}", fit_end(args, 100)));
            }
        }
        AgentEvent::ToolResults(results) => {
            for (_, r) in &results {
                let mark = if r.is_error { "✗" } else { "✓" };
                lines.line(&format!(
                    "    {mark} {}",
                    fit_end(r.text.lines().next().unwrap_or(""), 100)
                ));
            }
        }
        AgentEvent::StopGateBlocked(reason) => {
            lines.flush();
            lines.line(&format!(
                "  {}",
                fit_end(reason.lines().next().unwrap_or(""), 100)
            ));
        }
        AgentEvent::StopGateGaveUp(notice) => {
            lines.flush();
            lines.warning(&notice.trim_end().replace('\n', " "));
        }
        AgentEvent::Status(status) => lines.line(&format!("  … {status}")),
        AgentEvent::StopGateRunning => {
            lines.line(&format!("  … {}", cp_agent::STOP_GATE_RUNNING));
        }
        AgentEvent::Restart(text) => lines.line(&format!("  ↻ {text}")),
        AgentEvent::Usage(_) | AgentEvent::Finished(_) => lines.flush(),
        AgentEvent::Messages { .. } => {}
    })
}

/// What the Phases panel files from one of the built-in agent's events (`window`: its
/// context window).
fn builtin_news(event: AgentEvent, window: u64) -> Vec<PhaseNews> {
    match event {
        AgentEvent::Text(text) => vec![PhaseNews::Text(text)],
        AgentEvent::ToolCalls(calls) => calls
            .into_iter()
            .map(|(id, name, args)| PhaseNews::ToolCall { id, name, args })
            .collect(),
        AgentEvent::ToolResults(results) => results
            .into_iter()
            .map(|(id, result)| PhaseNews::ToolResult { id, result })
            .collect(),
        AgentEvent::StopGateBlocked(reason) => vec![
            PhaseNews::Blocked,
            PhaseNews::Notice {
                level: Level::Warning,
                text: format!("Stop gate:\n{reason}"),
            },
        ],
        AgentEvent::StopGateGaveUp(text) | AgentEvent::Finished(TurnEnd::Failed(text)) => {
            vec![PhaseNews::Notice {
                level: Level::Error,
                text,
            }]
        }
        AgentEvent::StopGateRunning => vec![PhaseNews::Testing],
        AgentEvent::Restart(text) => vec![PhaseNews::Notice {
            level: Level::Info,
            text: format!("↻ {text}"),
        }],
        AgentEvent::Usage(usage) => vec![PhaseNews::Usage {
            context: usage.context_tokens(),
            window,
            tokens: usage.context_tokens() + usage.output_tokens,
        }],
        AgentEvent::Finished(TurnEnd::Cancelled) => vec![PhaseNews::Notice {
            level: Level::Info,
            text: "Turn cancelled.".to_owned(),
        }],
        AgentEvent::Status(_) | AgentEvent::Finished(_) | AgentEvent::Messages { .. } => Vec::new(),
    }
}

/// An agent CLI's events of `phase`: printed (headless) or handed on as news.
fn cli_progress(phase: &str, output: PhaseOutput) -> Progress {
    match output {
        PhaseOutput::Stdout => cli_lines(Lines::new(phase)),
        PhaseOutput::News(receive) => {
            let phase = phase.to_owned();
            Box::new(move |event: &ProgressEvent| {
                for news in cli_news(event) {
                    receive(&phase, news);
                }
            })
        }
    }
}

fn cli_lines(lines: Lines) -> Progress {
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

/// What the Phases panel files from one of an agent CLI's events: what the TUI's own
/// conversation shows of it (see `tui/cli_events.rs`).
fn cli_news(event: &ProgressEvent) -> Vec<PhaseNews> {
    match event {
        ProgressEvent::Text(text) => vec![PhaseNews::Text(text.clone())],
        ProgressEvent::ToolCall { id, name, summary } => vec![PhaseNews::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args: summary.clone(),
        }],
        ProgressEvent::ToolResult {
            id, is_error, text, ..
        } => {
            let result = ToolResult::new(text.clone(), *is_error);
            vec![PhaseNews::ToolResult {
                id: id.clone(),
                result,
            }]
        }
        ProgressEvent::Usage {
            prompt_tokens,
            window,
        } => vec![PhaseNews::Usage {
            context: *prompt_tokens,
            window: window.unwrap_or(0),
            tokens: *prompt_tokens,
        }],
        ProgressEvent::Compacted => vec![PhaseNews::Notice {
            level: Level::Warning,
            text: event.to_string(),
        }],
        ProgressEvent::Hook { event, summary, .. } if event == "Stop" && summary == "passed" => {
            Vec::new()
        }
        ProgressEvent::Hook { event, detail, .. } => {
            let blocked = detail.starts_with("blocked");
            let notice = PhaseNews::Notice {
                level: if blocked { Level::Warning } else { Level::Info },
                text: format!("{event} hook: {detail}"),
            };
            if blocked && event == "Stop" {
                vec![PhaseNews::Blocked, notice]
            } else {
                vec![notice]
            }
        }
        ProgressEvent::SessionStarted { .. } | ProgressEvent::Stopping => Vec::new(),
    }
}
