//! A workflow run inside the TUI: its events, and the approval dialog's keys.

use cp_base::Level;

use cp_llm::CancelToken;
use cp_orchestrate::StopHandle;

use std::sync::Arc;
use std::time::Instant;

use cp_orchestrate::{RunArgs, RunOptions, WorkflowEvent};

use crate::agent::AgentState;
use crate::events::AppEvent;
use crate::phases::{self, Phases};
use cp_run::TerminalAlerts;
use cp_run::{PhaseDrivers, PhaseOutput};

use crate::agent::running_turn::RunningTurn;
use crate::conversation::{Entry, NO_PROVIDER_HELP};
use crate::events::WorkflowMsg;
use crate::keymap::Action;
use crate::workflow::dialog::{ApprovalDialog, DialogStep};

use super::App;
use crate::workflow::{self, WorkflowAgent, WorkflowRun, builtin_agent};

impl App {
    /// Starts a workflow run; its sessions (the built-in agent's, or the agent CLI's) stream
    /// into the conversation.
    pub fn start_workflow(&mut self, mut args: RunArgs) {
        let turn = RunningTurn {
            cancel: CancelToken::new(),
            stop: StopHandle::default(),
        };
        let driver: Box<dyn WorkflowAgent> = if let Some(provider) = self.agent.provider.clone() {
            Box::new(builtin_agent(&self.host, provider, &turn, self.tx.clone()))
        } else if let Some(cli) = &self.agent.cli {
            match cli.lend(&turn.cancel, self.tx.clone()) {
                Ok(driver) => Box::new(driver),
                Err(e) => {
                    self.workflow_not_started(&e);
                    return;
                }
            }
        } else {
            self.conversation.push_system(NO_PROVIDER_HELP);
            return;
        };
        let workflow = args.workflow.clone();
        if let Err(e) = self.phase_agents(&mut args.options, workflow.as_deref(), &turn.cancel) {
            self.workflow_not_started(&e);
            return;
        }
        let phases = args
            .workflow
            .as_deref()
            .and_then(|path| cp_orchestrate::Workflow::load(path).ok())
            .map(|workflow| {
                Phases::of(
                    &workflow,
                    args.options.agent.as_deref().unwrap_or("builtin"),
                )
            })
            .unwrap_or_default();
        // A run that cannot start was reported by `spawn` (`AppEvent::NotStarted`).
        if workflow::start(&self.host, driver, args, &self.tx).is_ok() {
            self.workflow = Some(WorkflowRun {
                turn: Some(turn),
                phases,
                ..WorkflowRun::default()
            });
        }
    }

    /// Phases that run side by side get their own agents (as headless), whose news comes
    /// here under the phase; Esc (`cancel`) stops them all with the run's turn. Gates and
    /// failures ring the bell and set the title. A malformed `notify` section in the user's
    /// config is an error: the run does not start without the alerts the person asked for.
    /// Phases in worktrees of their own may go to the hosts of the `hosts` configuration, as
    /// headless; a host that refuses one hands it back here.
    fn phase_agents(
        &self,
        options: &mut RunOptions,
        workflow: Option<&std::path::Path>,
        cancel: &CancelToken,
    ) -> anyhow::Result<()> {
        let default = options
            .agent
            .as_deref()
            .and_then(|name| name.parse().ok())
            .unwrap_or_default();
        let provider = self
            .agent
            .provider
            .clone()
            .or_else(|| AgentState::from_config(self.host.project()).provider);
        let tx = self.tx.clone();
        let drivers = Arc::new(PhaseDrivers {
            default,
            provider,
            project: self.host.project().clone(),
            cancel: cancel.clone(),
            output: PhaseOutput::News(Arc::new(move |phase: &str, news| {
                let _ = tx.send(AppEvent::Workflow(WorkflowMsg::Phase {
                    phase: phase.to_owned(),
                    news,
                }));
            })),
            remote: cp_run::phases_on_hosts(self.host.project(), workflow, &options.overrides)?,
        });
        options.drivers = Some(drivers.clone());
        // The merge queue tests with the stop gate, as the phases' agents are tested.
        options.tester = Some(drivers);
        let tx = self.tx.clone();
        let alerts = TerminalAlerts::from_user_config()?.with_tui(move |alert| {
            let _ = tx.send(AppEvent::Workflow(WorkflowMsg::Alert(
                alert.message.clone(),
            )));
        });
        options.alerter = Some(Arc::new(alerts));
        Ok(())
    }

    /// `[` / `]`: shows the Phases panel, on the previous or next phase.
    pub(super) fn select_phase(&mut self, down: bool) {
        match self.workflow.as_mut().filter(|run| !run.phases.is_empty()) {
            Some(run) => {
                let shown = self.ui.nav.selected() == phases::ID;
                if shown {
                    run.phases.move_selection(down);
                }
                self.select(phases::ID);
                if shown {
                    // Another phase's conversation: from its newest entry.
                    self.scroll_to_end();
                }
            }
            None => self.ui.flash = Some("No workflow run: no phases to show.".into()),
        }
    }

    fn workflow_not_started(&mut self, why: &dyn std::fmt::Display) {
        self.conversation.push(Entry::Notice {
            level: Level::Error,
            text: format!("cannot start the workflow: {why}"),
        });
    }

    pub(super) fn dialog_visible(&self) -> bool {
        self.modal.dialog.as_ref().is_some_and(|d| !d.hidden)
    }

    pub(super) fn apply_workflow(&mut self, msg: WorkflowMsg) {
        let run = self.workflow.get_or_insert_with(WorkflowRun::default);
        match msg {
            WorkflowMsg::Ask(request, reply) => {
                run.phases.asked(&request.phase_id, Instant::now());
                self.modal.dialog = Some(ApprovalDialog::new(*request, reply));
            }
            WorkflowMsg::Event(event) => {
                if let WorkflowEvent::RunStarted { run_id, .. } = &event {
                    run.run_id = Some(run_id.clone());
                }
                let phase_started = matches!(event, WorkflowEvent::PhaseStarted { .. });
                let marker = match &event {
                    WorkflowEvent::Restart(_) => "↻",
                    WorkflowEvent::PhaseStarted { .. } => "▶",
                    _ => "·",
                };
                run.phases.event(&event, Instant::now());
                run.status = event.to_string();
                self.conversation
                    .push_system(format!("{marker} workflow: {event}"));
                if phase_started {
                    self.phase_started();
                }
            }
            WorkflowMsg::Phase { phase, news } => {
                run.phases.news(&phase, news, Instant::now());
            }
            WorkflowMsg::Alert(message) => {
                set_title(&format!("Context Pilot: {message}"));
                run.titled = true;
                self.conversation.push(Entry::Notice {
                    level: Level::Warning,
                    text: message,
                });
            }
            WorkflowMsg::PausedForReload => {
                run.paused_for_reload = true;
                self.conversation
                    .push_system("· workflow: paused for the reload; it resumes in the new binary");
            }
            WorkflowMsg::Finished(result) => {
                let text = match &result {
                    Ok(0) => "Workflow finished. Ctrl-C quits.".to_owned(),
                    Ok(code @ cp_orchestrate::EXIT_ABORTED) => {
                        format!("Workflow aborted (exit code {code}). Ctrl-C quits.")
                    }
                    Ok(code @ cp_orchestrate::EXIT_INTERRUPTED) => format!(
                        "Workflow interrupted (exit code {code}); --resume continues it. Ctrl-C \
                         quits."
                    ),
                    Ok(code) => format!(
                        "Workflow ended unfinished (exit code {code}); the run's last line says \
                         why. Ctrl-C quits."
                    ),
                    Err(e) => format!("Workflow failed: {e}"),
                };
                let level = if matches!(result, Ok(0)) {
                    Level::Success
                } else {
                    Level::Warning
                };
                run.phases.ended = Some(text.clone());
                if std::mem::take(&mut run.titled) {
                    crate::terminal::restore_title();
                }
                run.exit = Some(result);
                // Nothing waits any more: no dialog (hidden or not) outlives the run.
                self.modal.dialog = None;
                self.conversation.push(Entry::Notice { level, text });
            }
        }
    }

    pub(super) fn apply_dialog(&mut self, action: Action) {
        let Some(dialog) = self.modal.dialog.as_mut() else {
            return;
        };
        match dialog.apply(action) {
            DialogStep::Stay => {}
            DialogStep::Quit => self.request_quit(),
            DialogStep::Answer => {
                if let Some(dialog) = self.modal.dialog.take() {
                    dialog.answer();
                }
                if let Some(run) = self.workflow.as_mut().filter(|r| r.titled) {
                    run.titled = false;
                    crate::terminal::restore_title();
                }
            }
            DialogStep::ReviewChanges => self.review_changes(),
            DialogStep::OpenFile(file) => {
                match self.host.viewer().open(self.host.project().root(), &file) {
                    Ok(id) => {
                        dialog.hidden = true;
                        self.tick();
                        self.select(&id);
                        // The status bar says "approval waiting: F2" for as long as it
                        // waits; a flash would repeat it and outlive the approval gate.
                        self.ui.flash = None;
                    }
                    Err(e) => self.ui.flash = Some(e.to_string()),
                }
            }
        }
    }

    /// The run to resume after a reload, when a workflow paused for it.
    pub fn paused_workflow(&self) -> Option<&str> {
        self.workflow
            .as_ref()
            .filter(|w| w.paused_for_reload)
            .and_then(|w| w.run_id.as_deref())
    }
}

/// Sets the terminal's title (on the UI thread, between frames, so it never splits one).
fn set_title(title: &str) {
    let _ = crossterm::execute!(std::io::stdout(), crossterm::terminal::SetTitle(title));
}
