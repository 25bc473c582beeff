//! The seam between the restart loop and an agent loop: [`SessionDriver`] runs sessions,
//! [`SessionControl`] is what the driver reports to and checks for a stop request.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cp_base::{ToolCall, ToolResult};
use cp_git::Head;
use serde::{Deserialize, Serialize};

use super::error::DriverError;
use super::estimator::{ContextEstimator, RestartTrigger};
use crate::handoff::Handoff;

/// The turn a stopped session gets to write its handoff.
pub const HANDOFF_REQUEST: &str = "Your context window is nearly full, so this session ends \
now and a fresh session will continue your work. Do not start anything new. Submit your \
handoff now via Checkpoint_handoff with reason \"threshold_critical\": list what you completed \
(file, done or partial, test state), what remains (file, what to do, an existing code pattern \
to follow, priority), the decisions and patterns the next session must keep, any issues, and \
every file you modified. One line per entry; stay under 4000 characters.";

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEnd {
    /// The agent finished the task (ended its turn with no stop requested).
    Completed,
    /// The session stopped because [`SessionControl::stop_requested`] was set; the last tool
    /// batch had finished.
    Stopped,
    /// The session could not go on (provider error, cancelled by the user, …).
    Failed(String),
}

/// One tool call of a session, as the fallback handoff and the restart prompt use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// Tool name, e.g. `File_edit`.
    pub name: String,
    /// Files the call touched or read, relative to the project root.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Whether the call failed.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolRecord {
    /// The record as a list item for a prompt: `- File_edit `src/a.rs` (failed)`.
    pub fn list_item(&self) -> String {
        let mut line = format!("- {}", self.name);
        for path in &self.paths {
            line.push_str(" `");
            line.push_str(path);
            line.push('`');
        }
        if self.is_error {
            line.push_str(" (failed)");
        }
        line
    }

    /// A record of `name` touching `paths`.
    pub fn new(
        name: impl Into<String>,
        paths: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            paths: paths.into_iter().map(Into::into).collect(),
            is_error: false,
        }
    }

    /// The record of a finished call: the files its result reports as changed, else a string
    /// `path` argument (as `File_read` takes).
    pub fn from_call(call: &ToolCall, result: &ToolResult) -> Self {
        let mut paths: Vec<String> = result.changes.iter().map(|c| c.path.clone()).collect();
        if paths.is_empty()
            && let Some(path) = call.arguments.get("path").and_then(|p| p.as_str())
        {
            paths.push(path.to_owned());
        }
        Self {
            name: call.name.clone(),
            paths,
            is_error: result.is_error,
        }
    }
}

/// Why a graceful stop was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A fresh session continues the work (a threshold, a key press, a workflow's restart).
    Restart = 1,
    /// The host reloads itself and resumes the work afterwards.
    Reload = 2,
}

/// A cloneable, thread-safe handle that asks a session (or one turn of the built-in agent) to
/// stop after its current tool batch, and says why: for a key press in the TUI, a reload, or
/// the estimator. The one stop request of the code base.
#[derive(Debug, Clone, Default)]
pub struct StopHandle {
    reason: Arc<AtomicU8>,
}

impl StopHandle {
    /// Requests a graceful stop: the driver finishes the tool batch in progress, then returns
    /// [`SessionEnd::Stopped`]. A later request replaces the reason.
    pub fn request(&self, reason: StopReason) {
        self.reason.store(reason as u8, Ordering::SeqCst);
    }

    /// The reason of the stop requested, if one was.
    pub fn requested(&self) -> Option<StopReason> {
        match self.reason.load(Ordering::SeqCst) {
            1 => Some(StopReason::Restart),
            2 => Some(StopReason::Reload),
            _ => None,
        }
    }

    /// Whether a stop was requested.
    pub fn stop_requested(&self) -> bool {
        self.requested().is_some()
    }

    /// Forgets the request (a new turn begins).
    pub fn clear(&self) {
        self.reason.store(0, Ordering::SeqCst);
    }
}

#[derive(Debug)]
struct Tracked {
    estimator: ContextEstimator,
    trigger: Option<RestartTrigger>,
    history: Vec<ToolRecord>,
    /// Input tokens of every request so far, summed.
    tokens: u64,
}

/// What a running session reports to, and checks, while it runs. One per session attempt;
/// the restart loop makes a fresh one (with a fresh estimator) for every restart.
///
/// The driver calls [`record_usage`](Self::record_usage) after each model response and
/// [`record_tool_call`](Self::record_tool_call) for each executed call. When a threshold is
/// crossed the control requests a stop by itself; the driver checks
/// [`stop_requested`](Self::stop_requested) after each complete tool batch.
#[derive(Debug)]
pub struct SessionControl {
    phase_id: String,
    attempt: u32,
    stop: StopHandle,
    tracked: Mutex<Tracked>,
    /// HEAD when the phase began (before its first session).
    base: Option<Head>,
}

impl SessionControl {
    /// A control for attempt `attempt` (0 = first session) of `phase_id`.
    pub fn new(phase_id: impl Into<String>, attempt: u32, estimator: ContextEstimator) -> Self {
        Self {
            phase_id: phase_id.into(),
            attempt,
            stop: StopHandle::default(),
            tracked: Mutex::new(Tracked {
                estimator,
                trigger: None,
                history: Vec::new(),
                tokens: 0,
            }),
            base: None,
        }
    }

    /// The same control, knowing where HEAD was when the phase began.
    #[must_use]
    pub fn with_base(mut self, base: Option<Head>) -> Self {
        self.base = base;
        self
    }

    /// Where HEAD was when the phase began, before its first session: the stop gate checks
    /// what was committed since (a restart's auto-commit included) as well as what is not.
    /// `None` when it is not known (no git, or a control made without it).
    pub fn base(&self) -> Option<&Head> {
        self.base.as_ref()
    }

    /// The phase being run.
    pub fn phase_id(&self) -> &str {
        &self.phase_id
    }

    /// 0 for the first session of the phase, N for the session after restart N.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Reports the provider's usage for the latest request (`input_tokens` includes cached
    /// tokens) against the model's `context_window`.
    pub fn record_usage(&self, input_tokens: u64, context_window: u64) {
        let mut tracked = self.lock();
        tracked.tokens = tracked.tokens.saturating_add(input_tokens);
        tracked.estimator.record_usage(input_tokens, context_window);
        self.check(&mut tracked);
    }

    /// Reports one executed tool call.
    pub fn record_tool_call(&self, record: ToolRecord) {
        let mut tracked = self.lock();
        tracked.estimator.record_tool_calls(1);
        tracked.history.push(record);
        self.check(&mut tracked);
    }

    /// Requests a graceful stop after the current tool batch.
    pub fn request_stop(&self) {
        self.stop.request(StopReason::Restart);
    }

    /// Whether the driver should stop once its current tool batch is done.
    pub fn stop_requested(&self) -> bool {
        self.stop.stop_requested()
    }

    /// A handle another thread can use to request the stop.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// The threshold that requested the stop, if one did.
    pub fn trigger(&self) -> Option<RestartTrigger> {
        self.lock().trigger
    }

    /// Every tool call reported so far, in order.
    pub fn tool_history(&self) -> Vec<ToolRecord> {
        self.lock().history.clone()
    }

    /// The input tokens of every request reported so far, summed (what the session cost).
    pub fn tokens_used(&self) -> u64 {
        self.lock().tokens
    }

    /// Context use of the latest request in percent (if known) and the tool calls so far.
    pub fn usage(&self) -> (Option<f64>, u64) {
        let tracked = self.lock();
        (
            tracked.estimator.context_percent(),
            tracked.estimator.tool_calls(),
        )
    }

    fn check(&self, tracked: &mut Tracked) {
        if tracked.trigger.is_some() {
            return;
        }
        if let Some(trigger) = tracked.estimator.trigger() {
            tracing::warn!(
                phase = %self.phase_id,
                attempt = self.attempt,
                "restart threshold reached: {trigger}; stopping after the current tool batch"
            );
            tracked.trigger = Some(trigger);
            self.stop.request(StopReason::Restart);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tracked> {
        // Counters stay meaningful even if a driver thread panicked while holding the lock.
        self.tracked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs agent sessions for the restart loop. The host's agent loop implements it; tests use a
/// scripted one.
///
/// Contract:
/// - [`run`](Self::run) sends `prompt` as the first user message of a **fresh** conversation
///   and drives the agent until it ends its turn ([`SessionEnd::Completed`]) or fails. After
///   each model response it calls [`SessionControl::record_usage`]; for each executed tool
///   call, [`SessionControl::record_tool_call`]. After each *complete* tool batch it checks
///   [`SessionControl::stop_requested`] and, if set, returns [`SessionEnd::Stopped`] without
///   another model request.
/// - [`request_handoff`](Self::request_handoff) is called on a stopped session: it sends
///   `request` ([`HANDOFF_REQUEST`]) as one more user turn in the *same* conversation, runs
///   that turn (tools allowed, so the model can call `Checkpoint_handoff`), and returns.
///   Runners that intercept the tool may return the handoff; otherwise return `Ok(None)` and
///   the loop reads the record `Checkpoint_handoff` saved in the project's handoff store.
pub trait SessionDriver {
    /// Runs a fresh session with `prompt`.
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd;

    /// Gives the stopped session one turn to submit its handoff.
    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restart::RestartConfig;

    fn control(calls: u64) -> SessionControl {
        let config = RestartConfig {
            tool_call_threshold: calls,
            ..RestartConfig::default()
        };
        SessionControl::new("p", 0, ContextEstimator::new(&config))
    }

    #[test]
    fn crossing_a_threshold_requests_the_stop_once_and_remembers_why() {
        let c = control(2);
        c.record_tool_call(ToolRecord::new("File_edit", ["a.rs"]));
        assert!(!c.stop_requested());
        c.record_tool_call(ToolRecord::new("File_write", ["b.rs"]));
        assert!(c.stop_requested());
        assert!(matches!(
            c.trigger(),
            Some(RestartTrigger::ToolCalls { calls: 2, .. })
        ));
        c.record_usage(95, 100);
        // The first trigger is kept.
        assert!(matches!(
            c.trigger(),
            Some(RestartTrigger::ToolCalls { .. })
        ));
        assert_eq!(c.tool_history().len(), 2);
    }

    #[test]
    fn a_stop_handle_from_another_thread_reaches_the_session() {
        let c = control(0);
        let handle = c.stop_handle();
        std::thread::spawn(move || handle.request(StopReason::Restart))
            .join()
            .unwrap();
        assert!(c.stop_requested());
        assert_eq!(c.trigger(), None);
    }

    #[test]
    fn tool_record_from_a_call_prefers_reported_changes() {
        let call = ToolCall::new("1", "File_edit", serde_json::json!({"path": "x.rs"}));
        let result = ToolResult::ok("ok").with_change(cp_base::FileChange::new(
            "src/x.rs",
            cp_base::ChangeKind::Modified,
        ));
        assert_eq!(ToolRecord::from_call(&call, &result).paths, ["src/x.rs"]);
        let read = ToolRecord::from_call(
            &ToolCall::new("2", "File_read", serde_json::json!({"path": "y.rs"})),
            &ToolResult::error("missing"),
        );
        assert_eq!(read.paths, ["y.rs"]);
        assert!(read.is_error);
    }
}
