//! One agent turn, from a user message to the model's final answer, on a worker thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cp_base::{Registry, ToolEnv, ToolResult};
use cp_git::{Git, Head};
use cp_orchestrate::{
    Decision, MAX_MAX_BLOCKS, StopAnswer, StopCheck, StopHandle, StopInput, StopReason,
};

use super::inbox::AgentInbox;
use super::prompt::{panel_context, system_prompt};
use cp_llm::{
    CancelToken, ContentBlock, LlmError, Message, Provider, Role, StreamEvent, ToolDefinition,
    ToolInput, ToolUse, Usage,
};

/// What a running turn reports to the UI.
#[derive(Debug, Clone)]
pub enum AgentEvent {
    /// More streamed assistant text.
    Text(String),
    /// The model's reply asked for these tool calls: `(id, name, arguments as text)`.
    ToolCalls(Vec<(String, String, String)>),
    /// Results of the batch, by call id.
    ToolResults(Vec<(String, ToolResult)>),
    Usage(Usage),
    /// A short status line (retrying, …), for the person.
    Status(String),
    /// The stop gate started checking the end of the turn (its tests may run now).
    StopGateRunning,
    /// The stop gate blocked the end of the turn with this message.
    StopGateBlocked(String),
    /// The stop gate's block limit let the agent stop with work left; for the person.
    StopGateGaveUp(String),
    /// The message history changed: from index `from` on it is now `tail`, and the messages
    /// before `from` are as the receiver holds them. A turn assumes its receiver holds the
    /// history the turn started with, and reports only what it appended or changed, so a
    /// report costs what changed, not the history's length. `from: 0` replaces it all.
    Messages {
        from: usize,
        tail: Vec<Message>,
    },
    /// The restart loop reports (restarting, handoff received, …): for the status bar and a
    /// marker in the conversation.
    Restart(String),
    /// The turn is over.
    Finished(TurnEnd),
}

/// How [`AgentEvent::StopGateRunning`] reads in a status line.
pub const STOP_GATE_RUNNING: &str = "running the stop gate…";

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model ended its turn and the stop gate let it stop.
    Done,
    /// The user pressed Esc.
    Cancelled,
    /// The request failed; the history is as it was before the failed request.
    Failed(String),
    /// A graceful stop was requested; the current batch finished first.
    Stopped(StopReason),
}

/// Everything a turn needs.
pub struct TurnContext {
    pub provider: Arc<dyn Provider>,
    pub registry: Registry,
    pub env: ToolEnv,
    pub inbox: AgentInbox,
    pub cancel: CancelToken,
    pub stop: StopHandle,
    /// What the stop gate does when the model ends its turn.
    pub stop_gate: StopGateMode,
    /// Where HEAD was when the session began (a workflow phase: before its first session);
    /// `None`: the turn is the session, and HEAD is read when it starts. The stop gate checks
    /// what was committed since as well as what is not.
    pub base: Option<Head>,
}

/// How the stop gate takes part in a turn, and which stop gate it is (the host gives the
/// checkpoint module's).
#[derive(Clone)]
pub enum StopGateMode {
    Off,
    /// The verification message and red tests, without the commit gate. Workflow phases use
    /// this: the restart loop commits each phase itself, so the gate would only cost turns.
    VerifyOnly(Arc<dyn StopCheck>),
    /// Verification, then the commit gate on the following stops.
    Full(Arc<dyn StopCheck>),
}

impl StopGateMode {
    /// The stop gate to ask, unless it is off.
    fn check(&self) -> Option<&dyn StopCheck> {
        match self {
            Self::Off => None,
            Self::VerifyOnly(check) | Self::Full(check) => Some(check.as_ref()),
        }
    }
}

impl std::fmt::Debug for StopGateMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Off => "Off",
            Self::VerifyOnly(_) => "VerifyOnly",
            Self::Full(_) => "Full",
        })
    }
}

/// Starts a turn on a worker thread. `messages` must end with the new user message.
pub fn spawn_turn(
    ctx: TurnContext,
    messages: Vec<Message>,
    sink: impl Fn(AgentEvent) + Send + 'static,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("cp-agent-turn".into())
        .spawn(move || {
            let (_, end) = run_turn(&ctx, messages, &sink);
            sink(AgentEvent::Finished(end));
        })?;
    Ok(())
}

/// Runs a turn on the calling thread; returns the final history and why the turn ended.
/// `sink` is told every change of the history ([`AgentEvent::Messages`]) relative to
/// `messages`, which its receiver is assumed to hold.
pub fn run_turn(
    ctx: &TurnContext,
    messages: Vec<Message>,
    sink: &dyn Fn(AgentEvent),
) -> (Vec<Message>, TurnEnd) {
    let mut history = History::new(messages);
    let end = turn_loop(ctx, &mut history, sink);
    // A change not reported yet (an inbox message before a failed request).
    history.report(sink);
    (history.messages, end)
}

/// The turn's message history, and how much of it the sink's receiver holds as it is.
struct History {
    messages: Vec<Message>,
    /// The receiver holds `messages[..held]` unchanged.
    held: usize,
}

impl History {
    fn new(messages: Vec<Message>) -> Self {
        let held = messages.len();
        Self { messages, held }
    }

    fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Adds a user text (it may join the last message, see [`Message::push_user_text`]).
    fn push_user_text(&mut self, text: String) {
        self.held = self.held.min(self.messages.len().saturating_sub(1));
        Message::push_user_text(&mut self.messages, text);
    }

    /// Tells the receiver what changed since the last report, if anything.
    fn report(&mut self, sink: &dyn Fn(AgentEvent)) {
        if self.held == self.messages.len() {
            return;
        }
        sink(AgentEvent::Messages {
            from: self.held,
            tail: self.messages[self.held..].to_vec(),
        });
        self.held = self.messages.len();
    }
}

fn turn_loop(ctx: &TurnContext, history: &mut History, sink: &dyn Fn(AgentEvent)) -> TurnEnd {
    let tools: Vec<ToolDefinition> = ctx
        .registry
        .tool_defs()
        .into_iter()
        .map(|d| ToolDefinition {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
        })
        .collect();
    let system = system_prompt(&ctx.env.project.root().display().to_string());
    // One request for the whole turn: the history moves into it for each call and back out,
    // so no request copies the history, however long it is.
    let mut request = ctx.provider.config().request(system, Vec::new(), tools);
    let mut gate_blocks = 0;
    // Each turn is one agent session for the stop gate's block count.
    let session = turn_session_id();
    let base = match (&ctx.base, ctx.stop_gate.check()) {
        (Some(base), _) => Some(base.clone()),
        (None, Some(_)) => head_now(&ctx.env.project),
        (None, None) => None,
    };
    loop {
        deliver_inbox(&ctx.inbox, history);
        request.messages = std::mem::take(&mut history.messages);
        request.context = panel_context(&ctx.registry);
        let response = ctx
            .provider
            .stream(&request, &ctx.cancel, &mut |event| match event {
                StreamEvent::TextDelta(text) => sink(AgentEvent::Text(text)),
                StreamEvent::Retrying {
                    attempt,
                    delay,
                    reason,
                } => sink(AgentEvent::Status(format!(
                    "retrying ({reason}), attempt {attempt} in {:.1}s",
                    delay.as_secs_f64()
                ))),
                _ => {}
            });
        history.messages = std::mem::take(&mut request.messages);
        let response = match response {
            Ok(response) => response,
            Err(LlmError::Cancelled) => return TurnEnd::Cancelled,
            Err(e) => return TurnEnd::Failed(e.to_string()),
        };
        sink(AgentEvent::Usage(response.usage));
        let calls: Vec<ToolUse> = response.tool_calls().cloned().collect();
        history.push(response.into_message());
        history.report(sink);

        if calls.is_empty() {
            let Some(check) = ctx.stop_gate.check() else {
                return TurnEnd::Done;
            };
            // The limit is the stop gate's (`checkpoint.max_blocks`, counted in its state
            // file); this bound only matters if that file cannot be written.
            if gate_blocks > MAX_MAX_BLOCKS {
                return TurnEnd::Done;
            }
            let Some(outcome) = run_stop_gate(ctx, check, &session, base.as_ref(), sink) else {
                return TurnEnd::Done;
            };
            // Esc during the stop gate's test run killed it: its verdict means nothing.
            if ctx.cancel.is_cancelled() {
                return TurnEnd::Cancelled;
            }
            match outcome.decision {
                Decision::Block { reason } => {
                    gate_blocks += 1;
                    sink(AgentEvent::StopGateBlocked(reason.clone()));
                    history
                        .push_user_text(format!("<system-reminder>\n{reason}\n</system-reminder>"));
                    history.report(sink);
                    continue;
                }
                Decision::Pass => {
                    if let Some(notice) = outcome.notice {
                        sink(AgentEvent::StopGateGaveUp(notice));
                    }
                    return TurnEnd::Done;
                }
            }
        }

        answer_calls(ctx, &calls, history, sink);
        if let Some(reason) = ctx.stop.requested() {
            return TurnEnd::Stopped(reason);
        }
        if ctx.cancel.is_cancelled() {
            return TurnEnd::Cancelled;
        }
    }
}

/// Runs the batch and adds its results to the history: one tool result for every call, even
/// when Esc cut the batch short, so the next request is valid.
fn answer_calls(
    ctx: &TurnContext,
    calls: &[ToolUse],
    history: &mut History,
    sink: &dyn Fn(AgentEvent),
) {
    sink(AgentEvent::ToolCalls(
        calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), args_text(&c.input)))
            .collect(),
    ));
    let results = run_calls(ctx, calls);
    sink(AgentEvent::ToolResults(results.clone()));
    history.push(Message {
        role: Role::User,
        content: results
            .into_iter()
            .map(|(id, r)| ContentBlock::ToolResult {
                tool_use_id: id,
                text: r.text,
                is_error: r.is_error,
            })
            .collect(),
    });
    history.report(sink);
}

/// Runs the valid calls as one batch; invalid ones get an error result without running.
fn run_calls(ctx: &TurnContext, calls: &[ToolUse]) -> Vec<(String, ToolResult)> {
    let mut batch = Vec::new();
    let mut slots: Vec<(String, Option<ToolResult>)> = Vec::new();
    for call in calls {
        match &call.input {
            ToolInput::Valid(args) => {
                batch.push(cp_base::ToolCall::new(
                    call.id.clone(),
                    call.name.clone(),
                    args.clone(),
                ));
                slots.push((call.id.clone(), None));
            }
            ToolInput::Invalid { raw, error } => slots.push((
                call.id.clone(),
                Some(ToolResult::error(format!(
                    "{}: the arguments are not valid JSON ({error}); you sent: {raw}\n\
                     Call the tool again with a JSON object.",
                    call.name
                ))),
            )),
        }
    }
    // Esc reaches the batch's blocking work (callback runs) through the environment.
    let env = ctx.env.clone().with_cancel(ctx.cancel.clone());
    let mut results = cp_base::run_batch(&ctx.registry, &batch, &env).into_iter();
    slots
        .into_iter()
        .map(|(id, ready)| {
            let result = ready
                .or_else(|| results.next())
                .unwrap_or_else(|| ToolResult::error("no result"));
            (id, result)
        })
        .collect()
}

/// Runs the stop gate; `None` when it could not be set up (a broken config).
fn run_stop_gate(
    ctx: &TurnContext,
    check: &dyn StopCheck,
    session: &str,
    base: Option<&Head>,
    sink: &dyn Fn(AgentEvent),
) -> Option<StopAnswer> {
    sink(AgentEvent::StopGateRunning);
    let input = StopInput {
        project: ctx.env.project.clone(),
        worker: ctx.env.worker.clone(),
        session: session.to_owned(),
        gate_commits: matches!(ctx.stop_gate, StopGateMode::Full(_)),
        base: base.cloned(),
    };
    match check.check(&input, &ctx.cancel) {
        Ok(verdict) => Some(verdict),
        Err(e) => {
            tracing::warn!("stop gate skipped: {e}");
            sink(AgentEvent::Status(format!("stop gate skipped: {e}")));
            None
        }
    }
}

/// Where HEAD of the project's repository is now; `None` without git or a repository (the
/// stop gate then says why it was skipped).
fn head_now(project: &cp_base::Project) -> Option<Head> {
    let git = Git { path_env: None };
    git.repo_root(project.root())
        .and_then(|repo| git.head_state(&repo))
        .map_err(|e| tracing::debug!("where HEAD is, unknown: {e}"))
        .ok()
}

/// A session id for one TUI turn, unique across turns and processes.
fn turn_session_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "tui-{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn deliver_inbox(inbox: &AgentInbox, history: &mut History) {
    let pending = inbox.take();
    if pending.is_empty() {
        return;
    }
    history.push_user_text(AgentInbox::render(&pending));
}

fn args_text(input: &ToolInput) -> String {
    match input {
        ToolInput::Valid(v) => v.to_string(),
        ToolInput::Invalid { raw, .. } => raw.clone(),
    }
}
