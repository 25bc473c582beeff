//! The agent loop as a [`SessionDriver`], so the restart loop and workflows can drive it.
//!
//! Usage and tool calls feed the restart loop's estimator. When a threshold is crossed the
//! loop asks for a stop; the turn then stops after its current tool batch (a graceful stop).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cp_base::{Registry, ToolEnv};
use cp_orchestrate::{
    DriverError, Handoff, SessionControl, SessionDriver, SessionEnd, StopCheck, StopHandle,
    StopReason, ToolRecord,
};
use serde_json::Value;

use super::inbox::AgentInbox;
use super::turn::{AgentEvent, StopGateMode, TurnContext, TurnEnd, run_turn};
use cp_llm::{CancelToken, Message, Provider};

/// Where a driver's turn events go: the TUI's channel, or progress lines on a terminal.
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// Runs workflow phases (and restarts) with the real agent loop.
pub struct BuiltinDriver {
    provider: Arc<dyn Provider>,
    registry: Registry,
    env: ToolEnv,
    sink: EventSink,
    cancel: CancelToken,
    stop: StopHandle,
    stop_gate: StopGateMode,
    messages: Vec<Message>,
    /// The first session continues `messages` instead of starting from the prompt.
    continuing: bool,
    /// The last session was paused for a live reload (not a restart).
    paused_for_reload: bool,
}

impl BuiltinDriver {
    /// A driver whose turns end through `stop_gate` without the commit gate
    /// ([`StopGateMode::VerifyOnly`]); [`BuiltinDriver::with_stop_gate`] sets another mode.
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Registry,
        env: ToolEnv,
        sink: EventSink,
        stop_gate: Arc<dyn StopCheck>,
    ) -> Self {
        Self {
            provider,
            registry,
            env,
            sink,
            cancel: CancelToken::new(),
            stop: StopHandle::default(),
            stop_gate: StopGateMode::VerifyOnly(stop_gate),
            messages: Vec::new(),
            continuing: false,
            paused_for_reload: false,
        }
    }

    /// An interactive turn: the first session continues `history` (which ends with the
    /// person's message); sessions after a restart start fresh from the restart prompt.
    #[must_use]
    pub fn continuing(mut self, history: Vec<Message>) -> Self {
        self.messages = history;
        self.continuing = true;
        self
    }

    /// How the stop gate takes part in this driver's turns.
    #[must_use]
    pub fn with_stop_gate(mut self, mode: StopGateMode) -> Self {
        self.stop_gate = mode;
        self
    }

    /// Shares a cancel token (a headless run's Ctrl-C): the session stops promptly and ends
    /// as cancelled.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Shares the UI's cancel token (Esc) and stop control (reload).
    #[must_use]
    pub fn with_controls(mut self, cancel: CancelToken, stop: StopHandle) -> Self {
        self.cancel = cancel;
        self.stop = stop;
        self
    }

    /// The conversation so far, as the model saw it.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// Whether the last session ended because a live reload was requested.
    pub fn paused_for_reload(&self) -> bool {
        self.paused_for_reload
    }

    /// Cancels the running session (Esc in the TUI).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Runs the current history as one turn, feeding `control`.
    fn drive(
        &mut self,
        control: &SessionControl,
        mode: StopGateMode,
        honour_stop: bool,
    ) -> SessionEnd {
        let stop = self.stop.clone();
        stop.clear();
        let window = self.provider.config().context_window;
        let ctx = TurnContext {
            provider: self.provider.clone(),
            registry: self.registry.clone(),
            env: self.env.clone(),
            inbox: AgentInbox::default(),
            cancel: self.cancel.clone(),
            stop: stop.clone(),
            stop_gate: mode,
            base: control.base().cloned(),
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
            // A reload already asked for keeps its reason.
            if honour_stop && control.stop_requested() && stop.requested().is_none() {
                stop.request(StopReason::Restart);
            }
            outer(event);
        };
        let (messages, end) = run_turn(&ctx, std::mem::take(&mut self.messages), &sink);
        self.messages = messages;
        self.paused_for_reload = end == TurnEnd::Stopped(StopReason::Reload);
        match end {
            TurnEnd::Done => SessionEnd::Completed,
            // Not a restart: the turn goes on in the reloaded binary.
            TurnEnd::Stopped(StopReason::Reload) => {
                SessionEnd::Failed("paused for a reload".into())
            }
            TurnEnd::Stopped(StopReason::Restart) => SessionEnd::Stopped,
            TurnEnd::Cancelled => SessionEnd::Failed("cancelled by the user".into()),
            TurnEnd::Failed(e) => SessionEnd::Failed(e),
        }
    }
}

impl SessionDriver for BuiltinDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        if !std::mem::take(&mut self.continuing) {
            self.messages = vec![Message::user_text(prompt)];
            // A new history: the sink's receiver holds none of it (a turn reports only what
            // it changes of the history it starts with).
            (self.sink)(AgentEvent::Messages {
                from: 0,
                tail: self.messages.clone(),
            });
        }
        self.drive(control, self.stop_gate.clone(), true)
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        // The request may join the last message: that one is reported again.
        let from = self.messages.len().saturating_sub(1);
        Message::push_user_text(&mut self.messages, request);
        (self.sink)(AgentEvent::Messages {
            from,
            tail: self.messages[from..].to_vec(),
        });
        // This turn only records the handoff: no checkpoint, and it must not be stopped.
        match self.drive(control, StopGateMode::Off, false) {
            SessionEnd::Failed(e) => Err(DriverError::new(e)),
            SessionEnd::Completed | SessionEnd::Stopped => Ok(None),
        }
    }
}
