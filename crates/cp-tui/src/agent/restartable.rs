//! An interactive turn under the smart-restart loop: when the context fills up, the turn
//! stops after its batch, the agent hands off, the work is committed, and a fresh session
//! continues with the handoff and the person's message.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use cp_orchestrate::{RestartConfig, RestartEvent, RestartLoop};

use crate::agent::running_turn::RunningTurn;
use crate::background::{self, Job, Reporter};
use crate::events::{AppEvent, NotStarted};
use cp_agent::{AgentEvent, BuiltinDriver, EventSink, StopGateMode, TurnEnd};
use cp_host::Host;
use cp_llm::{CancelToken, ContentBlock, Message, Provider, Role};

/// The phase name interactive turns use in handoffs, commits and logs.
const PHASE: &str = "chat";

/// Starts the turn in the background; events arrive as `AppEvent::Agent`.
pub fn spawn(
    host: &Host,
    provider: Arc<dyn Provider>,
    config: RestartConfig,
    history: Vec<Message>,
    turn: &RunningTurn,
    tx: &Sender<AppEvent>,
) -> Result<(), NotStarted> {
    let prompt = last_user_text(&history);
    let sink_tx = tx.clone();
    let sink: EventSink = Arc::new(move |event| {
        let _ = sink_tx.send(AppEvent::Agent(event));
    });
    let driver = BuiltinDriver::new(
        provider,
        host.registry().clone(),
        host.env().clone(),
        sink,
        host.stop_gate(),
    )
    .continuing(history)
    .with_stop_gate(StopGateMode::Full(host.stop_gate()))
    .with_controls(turn.cancel.clone(), turn.stop.clone());
    let restart_loop = RestartLoop::new(host.project().clone(), config)
        .with_worker(host.worker().clone())
        .without_completion_commit();
    let job = RestartTurnJob {
        prompt,
        driver,
        restart_loop,
        cancel: turn.cancel.clone(),
    };
    background::spawn(job, tx)
}

/// The built-in agent's turn under the restart loop; ends with `AgentEvent::Finished`.
struct RestartTurnJob {
    prompt: String,
    driver: BuiltinDriver,
    restart_loop: RestartLoop,
    cancel: CancelToken,
}

impl Job for RestartTurnJob {
    fn thread_name(&self) -> String {
        "cp-agent-turn".into()
    }

    fn what(&self) -> &'static str {
        "the agent's turn"
    }

    fn run(mut self, progress: &Reporter) -> Option<AppEvent> {
        let mut observer = restart_observer(progress.sender());
        let result =
            self.restart_loop
                .run_phase(PHASE, &self.prompt, &mut self.driver, &mut observer);
        // The driver's turns reported every change of the history as it happened.
        let paused = self.driver.paused_for_reload();
        let end = match result {
            Ok(_) => TurnEnd::Done,
            Err(_) if paused => TurnEnd::Stopped(cp_orchestrate::StopReason::Reload),
            Err(_) if self.cancel.is_cancelled() => TurnEnd::Cancelled,
            Err(e) => TurnEnd::Failed(e.to_string()),
        };
        Some(AppEvent::Agent(AgentEvent::Finished(end)))
    }
}

/// The person's latest message: what a fresh session after a restart must still do.
pub(crate) fn last_user_text(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .find_map(|m| {
            let text: Vec<&str> = m
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } if !text.starts_with("<system-reminder>") => {
                        Some(text.as_str())
                    }
                    _ => None,
                })
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        })
        .unwrap_or_default()
}

/// Shows a turn's restart events in the conversation; a turn that never restarts says
/// nothing about restarts.
pub(crate) fn restart_observer(tx: Sender<AppEvent>) -> impl FnMut(&RestartEvent) {
    move |event: &RestartEvent| {
        let routine = matches!(
            event,
            RestartEvent::SessionStarted { attempt: 0, .. }
                | RestartEvent::PhaseCompleted { restarts: 0, .. }
        );
        if !routine {
            let _ = tx.send(AppEvent::Agent(AgentEvent::Restart(event.to_string())));
        }
    }
}
