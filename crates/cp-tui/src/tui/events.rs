//! Everything the event loop reacts to arrives as an [`AppEvent`] on one channel.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::thread;

use cp_base::ToolResult;
use cp_mod_checkpoint::{
    ApprovalAnswer, ApprovalRequest, PromptError, WorkflowError, WorkflowEvent,
};

/// A message for the event loop.
#[derive(Debug)]
pub enum AppEvent {
    /// Keyboard, mouse, paste or resize, from the terminal.
    Term(crossterm::event::Event),
    /// Something was posted to the notifier.
    Notice,
    Signal(SignalKind),
    /// A tool batch started from the UI finished.
    BatchDone {
        job: u64,
        results: Vec<ToolResult>,
    },
    /// Progress of the agent's turn.
    Agent(cp_agent::AgentEvent),
    /// A workflow run's checkpoints, events and end.
    Workflow(WorkflowMsg),
    /// The provider's model list was read at start (issue 19).
    ModelCheck(cp_llm::ModelCheck),
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
    /// A checkpoint waits for the person; answer on the channel.
    Ask(
        Box<ApprovalRequest>,
        Sender<Result<ApprovalAnswer, PromptError>>,
    ),
    Event(WorkflowEvent),
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

/// Reads terminal events on their own thread, so the loop never blocks on input.
pub fn spawn_input_thread(tx: Sender<AppEvent>) {
    let spawned = thread::Builder::new()
        .name("cp-input".into())
        .spawn(move || {
            loop {
                match crossterm::event::read() {
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
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the input thread: {e}");
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
