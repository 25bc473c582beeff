//! Everything the event loop reacts to arrives as an [`AppEvent`] on one channel.

use std::sync::mpsc::Sender;
use std::thread;

use cp_base::ToolResult;

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
    Workflow(super::workflow::WorkflowMsg),
    /// The provider's model list was read at start (issue 19).
    ModelCheck(cp_llm::ModelCheck),
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
