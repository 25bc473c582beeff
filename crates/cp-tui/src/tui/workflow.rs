//! Running a workflow inside the TUI: the engine runs on a worker thread, its checkpoints
//! become a modal dialog, and its events show in the status bar and the conversation.

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};

use cp_mod_checkpoint::{
    CheckpointAnswer, CheckpointPrompter, CheckpointRequest, PromptError, RunArgs, WorkflowError,
    WorkflowEvent, resume_workflow, run_workflow,
};

use super::agent_state::RunningTurn;
use super::events::AppEvent;
use crate::agent::{AgentRunner, EventSink};
use crate::host::Host;
use crate::llm::Provider;

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
        Box<CheckpointRequest>,
        Sender<Result<CheckpointAnswer, PromptError>>,
    ),
    Event(WorkflowEvent),
    /// The run ended: its exit code (0 done, 2 aborted), or why it failed.
    Finished(Result<i32, WorkflowFailure>),
    /// The running session stopped for a live reload; the run resumes in the new binary.
    PausedForReload,
}

/// Asks the UI and waits for the answer. If the UI goes away, the run stops, resumable.
struct TuiPrompter {
    tx: Sender<AppEvent>,
}

impl CheckpointPrompter for TuiPrompter {
    fn ask(&mut self, request: &CheckpointRequest) -> Result<CheckpointAnswer, PromptError> {
        let (reply, answer) = mpsc::channel();
        self.tx
            .send(AppEvent::Workflow(WorkflowMsg::Ask(
                Box::new(request.clone()),
                reply,
            )))
            .map_err(|_| PromptError("the TUI closed".into()))?;
        answer
            .recv()
            .map_err(|_| PromptError("the TUI closed before the checkpoint was answered".into()))?
    }

    fn on_event(&mut self, event: &WorkflowEvent) {
        let _ = self
            .tx
            .send(AppEvent::Workflow(WorkflowMsg::Event(event.clone())));
    }
}

/// Starts the run on a worker thread. The agent's turns stream into the conversation.
pub fn start(
    host: &Host,
    provider: Arc<dyn Provider>,
    args: RunArgs,
    turn: &RunningTurn,
    tx: Sender<AppEvent>,
) -> std::io::Result<()> {
    let agent_tx = tx.clone();
    let sink: EventSink = Arc::new(move |event| {
        let _ = agent_tx.send(AppEvent::Agent(event));
    });
    let mut runner = AgentRunner::new(provider, host.registry().clone(), host.env().clone(), sink)
        .with_controls(turn.cancel.clone(), turn.stop.clone());
    let project = host.project().clone();
    std::thread::Builder::new()
        .name("cp-workflow".into())
        .spawn(move || {
            let mut prompter = TuiPrompter { tx: tx.clone() };
            let result = match (&args.resume, &args.workflow) {
                (Some(run_id), path) => resume_workflow(
                    &project,
                    run_id,
                    path.as_deref(),
                    &mut runner,
                    &mut prompter,
                    &args.options,
                ),
                (None, Some(path)) => {
                    run_workflow(&project, path, &mut runner, &mut prompter, &args.options)
                }
                (None, None) => {
                    let _ = tx.send(AppEvent::Workflow(WorkflowMsg::Finished(Err(
                        WorkflowFailure::NoFile,
                    ))));
                    return;
                }
            };
            let msg = if result.is_err() && runner.paused_for_reload() {
                WorkflowMsg::PausedForReload
            } else {
                WorkflowMsg::Finished(
                    result
                        .map(|outcome| outcome.exit_code())
                        .map_err(|e| WorkflowFailure::Run(Arc::new(e))),
                )
            };
            let _ = tx.send(AppEvent::Workflow(msg));
        })?;
    Ok(())
}
