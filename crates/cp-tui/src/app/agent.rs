//! The agent's turns as the UI sees them: starting, cancelling, applying their events.

use cp_base::Level;

use cp_agent::{AgentEvent, AgentInbox, StopGateMode, TurnContext, TurnEnd, run_turn};
use cp_llm::{CancelToken, Message};
use cp_orchestrate::{StopHandle, StopReason};

use cp_orchestrate::RestartConfig;

use crate::agent::running_turn::RunningTurn;
use crate::background::{self, Job, Reporter};
use crate::conversation::Entry;
use crate::events::AppEvent;

use super::App;
use crate::conversation::entry_lines::shorten_args;

impl App {
    /// Starts an agent turn on the current history (which ends with a user message).
    pub(crate) fn start_turn(&mut self) {
        if self.agent.cli.is_some() {
            self.start_cli_turn();
            return;
        }
        let Some(provider) = self.agent.provider.clone() else {
            return;
        };
        let turn = RunningTurn {
            cancel: CancelToken::new(),
            stop: StopHandle::default(),
        };
        self.agent.usage.start_turn();
        self.agent.streaming_entry = None;
        self.agent.work_left = None;
        let restart = self.restart_config();
        let started = if restart.restarts_enabled() {
            crate::agent::restartable::spawn(
                &self.host,
                provider,
                restart,
                self.agent.messages.clone(),
                &turn,
                &self.tx,
            )
        } else {
            let ctx = TurnContext {
                provider,
                registry: self.host.registry().clone(),
                env: self.host.env().clone(),
                inbox: self.agent.inbox.clone(),
                cancel: turn.cancel.clone(),
                stop: turn.stop.clone(),
                stop_gate: StopGateMode::Full(self.host.stop_gate()),
                // The turn is the session: it reads HEAD when it starts.
                base: None,
            };
            let job = PlainTurnJob {
                ctx,
                messages: self.agent.messages.clone(),
            };
            background::spawn(job, &self.tx)
        };
        // A turn that cannot start was reported by `spawn` (`AppEvent::NotStarted`).
        if started.is_ok() {
            self.agent.turn = Some(turn);
        }
    }

    /// The project's smart-restart policy for the next turn; a config that cannot be read
    /// is told in the conversation and restarts are off for that turn.
    pub(super) fn restart_config(&mut self) -> RestartConfig {
        match RestartConfig::load(self.host.project()) {
            Ok(config) => config,
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Warning,
                    text: format!("smart restart is off: {e}"),
                });
                RestartConfig {
                    max_restarts: 0,
                    ..RestartConfig::default()
                }
            }
        }
    }

    /// Esc while the agent works: the agent's own turn, or the turn of the workflow phase
    /// that runs, is cancelled (its blocking work is killed and every call answered). A
    /// cancelled phase ends the run; `context-pilot run --resume` continues it.
    pub(super) fn cancel_turn(&mut self) {
        if let Some(turn) = &self.agent.turn {
            turn.cancel.cancel();
            self.agent.status = Some("cancelling…".into());
            self.agent.status_since = None;
        } else if let Some(turn) = self.workflow_turn() {
            turn.cancel.cancel();
            self.ui.flash = Some("cancelling the workflow phase's turn…".into());
        }
    }

    /// The turn controls of the workflow phase running now, if any. Not while the run waits
    /// for an approval (hidden or shown): nothing runs then, and a cancel would end the next
    /// phase before it starts.
    pub(super) fn workflow_turn(&self) -> Option<&RunningTurn> {
        if self.modal.dialog.is_some() {
            return None;
        }
        self.workflow
            .as_ref()
            .filter(|run| run.exit.is_none() && !run.paused_for_reload)
            .and_then(|run| run.turn.as_ref())
    }

    pub(super) fn apply_agent(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::Text(text) => match self.agent.streaming_entry {
                Some(index) => {
                    if let Some(Entry::Assistant(existing)) = self.conversation.entry_mut(index) {
                        existing.push_str(&text);
                    }
                }
                None => {
                    self.agent.streaming_entry =
                        Some(self.conversation.push(Entry::Assistant(text)));
                }
            },
            AgentEvent::ToolCalls(calls) => {
                self.agent.streaming_entry = None;
                self.agent.usage.tool_calls += calls.len() as u64;
                for (id, name, args) in calls {
                    let index = self.conversation.push(Entry::Tool {
                        name,
                        args: shorten_args(&args),
                        result: None,
                        expanded: false,
                    });
                    self.agent.tool_entries.insert(id, index);
                }
            }
            AgentEvent::ToolResults(results) => {
                for (id, result) in results {
                    if let Some(index) = self.agent.tool_entries.remove(&id)
                        && let Some(Entry::Tool { result: slot, .. }) =
                            self.conversation.entry_mut(index)
                    {
                        *slot = Some(result);
                    }
                }
            }
            AgentEvent::Usage(usage) => {
                self.agent.streaming_entry = None;
                self.agent.usage.record(&usage);
                // A workflow phase this agent runs (alone, in the project's tree) shows it.
                if let Some(run) = self.workflow.as_mut() {
                    let context = usage.context_tokens();
                    let tokens = context.saturating_add(usage.output_tokens);
                    let window = self.agent.usage.context_window;
                    run.phases.main_usage(context, window, tokens);
                }
            }
            AgentEvent::Status(status) => {
                self.agent.status = Some(status);
                self.agent.status_since = Some(std::time::Instant::now());
            }
            AgentEvent::StopGateRunning => {
                self.agent.status = Some(cp_agent::STOP_GATE_RUNNING.to_owned());
                self.agent.status_since = Some(std::time::Instant::now());
            }
            AgentEvent::Restart(text) => {
                self.conversation.push_system(format!("↻ {text}"));
                self.agent.status = Some(text);
                self.agent.status_since = None;
            }
            AgentEvent::StopGateBlocked(reason) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Warning,
                    text: format!("Stop gate:\n{reason}"),
                });
            }
            AgentEvent::StopGateGaveUp(notice) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: notice,
                });
                self.agent.work_left = Some("stop gate ✗ work left".into());
            }
            AgentEvent::Messages { from, tail } => self.change_messages(from, tail),
            AgentEvent::Finished(end) => {
                self.agent.turn = None;
                self.agent.status = None;
                self.agent.status_since = None;
                self.agent.streaming_entry = None;
                match end {
                    TurnEnd::Stopped(StopReason::Reload) => self.life.stopped_for_reload = true,
                    TurnEnd::Done | TurnEnd::Stopped(_) => {}
                    TurnEnd::Cancelled => {
                        self.conversation.push_system("Turn cancelled.");
                    }
                    TurnEnd::Failed(e) => {
                        self.conversation.push(Entry::Notice {
                            level: Level::Error,
                            text: e,
                        });
                    }
                }
                self.save_state();
                // Notifications that arrived while the turn ran may need to wake the agent.
                self.maybe_wake();
            }
        }
    }

    /// Starts a turn for waiting notifications when one of them asks to wake an idle agent.
    pub(super) fn maybe_wake(&mut self) {
        if self.agent.running() || !self.agent.has_agent() || self.busy() {
            return;
        }
        if self.agent.inbox.snapshot().iter().any(|n| n.wake_agent) {
            let notes = self.agent.inbox.take();
            self.push_user_text(AgentInbox::render(&notes));
            self.start_turn();
        }
    }
}

/// The built-in agent's turn without smart restart; ends with `AgentEvent::Finished`.
struct PlainTurnJob {
    ctx: TurnContext,
    messages: Vec<Message>,
}

impl Job for PlainTurnJob {
    fn thread_name(&self) -> String {
        "cp-agent-turn".into()
    }

    fn what(&self) -> &'static str {
        "the agent's turn"
    }

    fn run(self, progress: &Reporter) -> Option<AppEvent> {
        let sink = |event| {
            progress.send(AppEvent::Agent(event));
        };
        let (_, end) = run_turn(&self.ctx, self.messages, &sink);
        Some(AppEvent::Agent(AgentEvent::Finished(end)))
    }
}

#[cfg(test)]
mod tests {
    use cp_llm::CancelToken;
    use cp_orchestrate::StopHandle;

    use crate::agent::running_turn::RunningTurn;
    use crate::workflow::WorkflowRun;

    #[test]
    fn esc_cancels_the_running_workflow_phase_too() {
        let mut app = crate::tests::app(false);
        let cancel = CancelToken::new();
        app.workflow = Some(WorkflowRun {
            turn: Some(RunningTurn {
                cancel: cancel.clone(),
                stop: StopHandle::default(),
            }),
            ..WorkflowRun::default()
        });
        app.apply(crate::keymap::Action::Back);
        assert!(cancel.is_cancelled());
        // While the run waits for an approval nothing runs: Esc cancels nothing.
        let waiting = CancelToken::new();
        if let Some(run) = app.workflow.as_mut() {
            run.turn = Some(RunningTurn {
                cancel: waiting.clone(),
                stop: StopHandle::default(),
            });
        }
        app.modal.dialog = Some(crate::workflow::dialog::ApprovalDialog::new(
            crate::tests::approval_request(),
            std::sync::mpsc::channel().0,
        ));
        if let Some(dialog) = app.modal.dialog.as_mut() {
            dialog.hidden = true;
        }
        app.apply(crate::keymap::Action::Back);
        assert!(!waiting.is_cancelled());
        assert!(
            app.ui
                .flash
                .as_deref()
                .is_some_and(|f| f.contains("cancelling"))
        );
    }
}
