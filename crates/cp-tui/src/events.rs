//! Everything the event loop reacts to arrives as an [`AppEvent`] on one channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use cp_base::ToolResult;
use cp_orchestrate::{ApprovalAnswer, ApprovalRequest, PromptError, WorkflowError, WorkflowEvent};

/// A message for the event loop.
#[derive(Debug)]
pub enum AppEvent {
    /// Keyboard, mouse, paste or resize, from the terminal.
    Term(crossterm::event::Event),
    /// Something was posted to the notifier.
    Notice,
    /// A long code block shown plain was coloured in the background: draw again.
    Highlighted,
    Signal(SignalKind),
    /// A tool batch started from the UI finished.
    BatchDone {
        job: u64,
        results: Vec<ToolResult>,
    },
    /// Progress of the agent's turn.
    Agent(cp_agent::AgentEvent),
    /// A workflow run's approval gates, events and end.
    Workflow(WorkflowMsg),
    /// The provider's model list was read at start (issue 19).
    ModelCheck(cp_llm::ModelCheck),
    /// A notice from the agent CLI's turn (a hook's verdict): for the person only, since the
    /// agent has it already.
    AgentNotice(cp_base::Level, String),
    /// What the agent CLI's hooks left for it while it was idle (background results).
    Waiting(Vec<cp_base::Notification>),
    /// The agent CLIs on `PATH`, looked for at start when no provider is configured.
    AgentsFound(Vec<cp_agent_cli::Presence>),
    /// The agent picked on the no-model screen started (or could not).
    /// It is waiting in the slot the job was given (`agent_start::StartedSlot`).
    AgentStarted,
    /// Background work whose thread could not start (see `background::spawn`).
    NotStarted(NotStarted),
    /// The Changes panel's reading of the diff, or its git action, ended.
    Changes(crate::changes::msg::ChangesMsg),
}

/// A job whose thread could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot start {what}: {reason}")]
pub struct NotStarted {
    pub what: &'static str,
    /// The operating system's reason (kept as text, so the event stays cloneable).
    pub reason: String,
}

/// Why a workflow run driven from the TUI failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WorkflowFailure {
    #[error("no workflow file given")]
    NoFile,
    /// Shared so the run's record (and the message carrying it) stays cloneable.
    #[error(transparent)]
    Run(Arc<WorkflowError>),
}

/// Messages from the workflow thread to the UI.
#[derive(Debug)]
pub enum WorkflowMsg {
    /// An approval gate waits for the person; answer on the channel.
    Ask(
        Box<ApprovalRequest>,
        Sender<Result<ApprovalAnswer, PromptError>>,
    ),
    Event(WorkflowEvent),
    /// News of a phase that runs in its own worktree, beside others.
    Phase {
        phase: String,
        news: cp_run::PhaseNews,
    },
    /// The run waits for the person or a phase failed: the title says so until answered.
    Alert(String),
    /// The run ended: its exit code (0 done, 2 aborted), or why it failed.
    Finished(Result<i32, WorkflowFailure>),
    /// The running session stopped for a live reload; the run resumes in the new binary.
    PausedForReload,
}

/// Process signals the host handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// SIGTERM, SIGINT: save and exit.
    Terminate,
    /// SIGHUP: the terminal went away; save and exit.
    Hangup,
    /// SIGUSR2: reload the binary.
    Reload,
}

/// How long the input thread waits for an event before it looks whether it should pause.
const INPUT_POLL: Duration = Duration::from_millis(50);

/// Lets the event loop stop the input thread from reading the terminal while a child (the
/// person's `$EDITOR`) owns it; otherwise the thread would take the child's keys.
#[derive(Debug, Default)]
pub struct InputGate {
    paused: AtomicBool,
    /// Held by the input thread while it polls or reads; held by [`InputGate::pause`]'s
    /// guard while paused.
    reading: Mutex<()>,
}

/// While alive, the input thread reads nothing.
pub struct InputPause<'a> {
    gate: &'a InputGate,
    _reading: MutexGuard<'a, ()>,
}

impl InputGate {
    /// Stops the input thread once its current poll ends (at most [`INPUT_POLL`]); reading
    /// resumes when the returned guard drops.
    pub fn pause(&self) -> InputPause<'_> {
        self.paused.store(true, Ordering::SeqCst);
        let reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
        InputPause {
            gate: self,
            _reading: reading,
        }
    }
}

impl Drop for InputPause<'_> {
    fn drop(&mut self) {
        self.gate.paused.store(false, Ordering::SeqCst);
    }
}

/// Reads terminal events on their own thread, so the loop never blocks on input. The
/// returned gate pauses the reading (see [`InputGate`]).
pub fn spawn_input_thread(tx: Sender<AppEvent>) -> Arc<InputGate> {
    let gate = Arc::new(InputGate::default());
    let for_thread = Arc::clone(&gate);
    let spawned = thread::Builder::new()
        .name("cp-input".into())
        .spawn(move || read_input(&for_thread, &tx));
    if let Err(e) = spawned {
        tracing::error!("cannot start the input thread: {e}");
    }
    gate
}

/// The input thread's loop: poll briefly (so a pause takes effect soon), read, send.
fn read_input(gate: &InputGate, tx: &Sender<AppEvent>) {
    loop {
        if gate.paused.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        let _reading = gate.reading.lock().unwrap_or_else(PoisonError::into_inner);
        if gate.paused.load(Ordering::SeqCst) {
            continue;
        }
        let event = match crossterm::event::poll(INPUT_POLL) {
            Ok(false) => continue,
            Ok(true) => crossterm::event::read(),
            Err(e) => Err(e),
        };
        match event {
            Ok(event) => {
                if tx.send(AppEvent::Term(event)).is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!("terminal input ended: {e}");
                return;
            }
        }
    }
}

/// Turns SIGTERM, SIGINT, SIGHUP and SIGUSR2 into events.
pub fn spawn_signal_thread(tx: Sender<AppEvent>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR2};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGUSR2])?;
    thread::Builder::new()
        .name("cp-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let kind = match signal {
                    SIGHUP => SignalKind::Hangup,
                    SIGUSR2 => SignalKind::Reload,
                    _ => SignalKind::Terminate,
                };
                if tx.send(AppEvent::Signal(kind)).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}
