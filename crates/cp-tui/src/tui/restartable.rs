//! An interactive turn under the smart-restart loop: when the context fills up, the turn
//! stops after its batch, the agent hands off, the work is committed, and a fresh session
//! continues with the handoff and the person's message.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use cp_orchestrate::{RestartConfig, RestartEvent, RestartLoop};

use super::events::AppEvent;
use super::running_turn::RunningTurn;
use crate::host::Host;
use cp_agent::{AgentEvent, AgentRunner, EventSink, StopGateMode, TurnEnd};
use cp_llm::{ContentBlock, Message, Provider, Role};

/// The phase name interactive turns use in handoffs, commits and logs.
const PHASE: &str = "chat";

/// Starts the turn on a worker thread; events arrive as `AppEvent::Agent`.
pub fn spawn(
    host: &Host,
    provider: Arc<dyn Provider>,
    config: RestartConfig,
    history: Vec<Message>,
    turn: &RunningTurn,
    tx: Sender<AppEvent>,
) -> std::io::Result<()> {
    let prompt = last_user_text(&history);
    let sink_tx = tx.clone();
    let sink: EventSink = Arc::new(move |event| {
        let _ = sink_tx.send(AppEvent::Agent(event));
    });
    let cancel = turn.cancel.clone();
    let mut runner = AgentRunner::new(
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
    std::thread::Builder::new()
        .name("cp-agent-turn".into())
        .spawn(move || {
            let mut observer = restart_observer(tx.clone());
            let result = restart_loop.run_phase(PHASE, &prompt, &mut runner, &mut observer);
            let paused = runner.paused_for_reload();
            let _ = tx.send(AppEvent::Agent(AgentEvent::Messages(
                runner.into_messages(),
            )));
            let end = match result {
                Ok(_) => TurnEnd::Done,
                Err(_) if paused => TurnEnd::Stopped(cp_agent::StopReason::Reload),
                Err(_) if cancel.is_cancelled() => TurnEnd::Cancelled,
                Err(e) => TurnEnd::Failed(e.to_string()),
            };
            let _ = tx.send(AppEvent::Agent(AgentEvent::Finished(end)));
        })?;
    Ok(())
}

/// The person's latest message: what a fresh session after a restart must still do.
pub(super) fn last_user_text(history: &[Message]) -> String {
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
pub(super) fn restart_observer(tx: Sender<AppEvent>) -> impl FnMut(&RestartEvent) {
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
