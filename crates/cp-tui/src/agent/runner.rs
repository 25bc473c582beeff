//! The agent loop as a [`SessionRunner`], so the restart loop and workflows can drive it.
//!
//! Usage and tool calls feed the restart loop's estimator. When a threshold is crossed the
//! loop asks for a stop; the turn then stops after its current tool batch (a graceful stop).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cp_base::{Registry, ToolEnv};
use cp_mod_checkpoint::{Handoff, SessionControl, SessionEnd, SessionRunner, ToolRecord};
use serde_json::Value;

use super::AgentInbox;
use super::turn::{
    AgentEvent, CheckpointMode, StopControl, StopReason, TurnContext, TurnEnd, run_turn,
};
use crate::llm::{CancelToken, Message, Provider};

/// Where a runner's turn events go: the TUI's channel, or progress lines on a terminal.
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// Runs workflow phases (and restarts) with the real agent loop.
pub struct AgentRunner {
    provider: Arc<dyn Provider>,
    registry: Registry,
    env: ToolEnv,
    sink: EventSink,
    cancel: CancelToken,
    checkpoint: CheckpointMode,
    messages: Vec<Message>,
}

impl AgentRunner {
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Registry,
        env: ToolEnv,
        sink: EventSink,
    ) -> Self {
        Self {
            provider,
            registry,
            env,
            sink,
            cancel: CancelToken::new(),
            checkpoint: CheckpointMode::VerifyOnly,
            messages: Vec::new(),
        }
    }

    /// Cancels the running session (Esc in the TUI).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Runs the current history as one turn, feeding `control`.
    fn drive(
        &mut self,
        control: &SessionControl,
        mode: CheckpointMode,
        honour_stop: bool,
    ) -> SessionEnd {
        let stop = StopControl::default();
        let window = self.provider.config().context_window;
        let ctx = TurnContext {
            provider: self.provider.clone(),
            registry: self.registry.clone(),
            env: self.env.clone(),
            inbox: AgentInbox::default(),
            cancel: self.cancel.clone(),
            stop: stop.clone(),
            checkpoint: mode,
        };
        // Calls of the batch in flight, by id, to pair them with their results.
        let pending: Mutex<HashMap<String, (String, String)>> = Mutex::new(HashMap::new());
        let outer = self.sink.clone();
        let sink = |event: AgentEvent| {
            match &event {
                AgentEvent::Usage(usage) => control.record_usage(usage.context_tokens(), window),
                AgentEvent::ToolCalls(calls) => {
                    let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
                    for (id, name, args) in calls {
                        pending.insert(id.clone(), (name.clone(), args.clone()));
                    }
                }
                AgentEvent::ToolResults(results) => {
                    let mut pending = pending.lock().unwrap_or_else(PoisonError::into_inner);
                    for (id, result) in results {
                        let (name, args) = pending.remove(id).unwrap_or_default();
                        let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
                        let call = cp_base::ToolCall::new(id.clone(), name, args);
                        control.record_tool_call(ToolRecord::from_call(&call, result));
                    }
                }
                _ => {}
            }
            if honour_stop && control.stop_requested() {
                stop.request(StopReason::Restart);
            }
            outer(event);
        };
        let (messages, end) = run_turn(&ctx, std::mem::take(&mut self.messages), &sink);
        self.messages = messages;
        match end {
            TurnEnd::Done => SessionEnd::Completed,
            TurnEnd::Stopped(_) => SessionEnd::Stopped,
            TurnEnd::Cancelled => SessionEnd::Failed("cancelled by the user".into()),
            TurnEnd::Failed(e) => SessionEnd::Failed(e),
        }
    }
}

impl SessionRunner for AgentRunner {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        self.messages = vec![Message::user_text(prompt)];
        self.drive(control, self.checkpoint, true)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, String> {
        Message::push_user_text(&mut self.messages, request);
        // This turn only records the handoff: no checkpoint, and it must not be stopped.
        match self.drive(control, CheckpointMode::Off, false) {
            SessionEnd::Failed(e) => Err(e),
            SessionEnd::Completed | SessionEnd::Stopped => Ok(None),
        }
    }
}
