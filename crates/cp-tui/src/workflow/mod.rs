//! Running a workflow inside the TUI: the engine runs as a background job, its approval gates
//! become a modal dialog, and its events show in the status bar and the conversation. The
//! sessions run in the built-in agent loop or in the person's agent CLI
//! (`context-pilot run WF --agent claude|gemini|codex`); either streams into the conversation.

pub(crate) mod dialog;
pub(crate) mod dialog_view;

use std::sync::Arc;
use std::sync::mpsc::{self, Sender};

use cp_orchestrate::{
    ApprovalAnswer, ApprovalPrompter, ApprovalRequest, PromptError, RunArgs, SessionDriver,
    WorkflowEvent, resume_workflow, run_workflow,
};

use crate::agent::cli_agent::LentDriver;
use crate::agent::running_turn::RunningTurn;
use crate::background::{self, Job, Reporter};
use crate::events::{AppEvent, NotStarted, WorkflowFailure, WorkflowMsg};
use cp_agent::{BuiltinDriver, EventSink};
use cp_base::Project;
use cp_host::Host;
use cp_llm::Provider;

/// A workflow run started from this TUI.
#[derive(Debug, Clone, Default)]
pub struct WorkflowRun {
    pub run_id: Option<String>,
    /// The latest event, for the status bar.
    pub status: String,
    /// Set when the run ended: its exit code, or why it failed.
    pub exit: Option<Result<i32, crate::events::WorkflowFailure>>,
    /// Cancel and stop controls of the session the run is in.
    pub turn: Option<RunningTurn>,
    /// The run paused at a batch boundary for a live reload.
    pub paused_for_reload: bool,
    /// The terminal's title says the run waits for the person (reset once answered).
    pub titled: bool,
    /// The Phases panel: each phase's status and conversation.
    pub phases: crate::phases::Phases,
}

impl WorkflowRun {
    /// Running and not paused: a reload has to wait for it.
    pub fn active(&self) -> bool {
        self.exit.is_none() && !self.paused_for_reload
    }
}

/// Asks the UI and waits for the answer. If the UI goes away, the run stops, resumable.
struct TuiPrompter {
    tx: Sender<AppEvent>,
}

impl ApprovalPrompter for TuiPrompter {
    fn ask(&mut self, request: &ApprovalRequest) -> Result<ApprovalAnswer, PromptError> {
        let (reply, answer) = mpsc::channel();
        self.tx
            .send(AppEvent::Workflow(WorkflowMsg::Ask(
                Box::new(request.clone()),
                reply,
            )))
            .map_err(|_| PromptError("the TUI closed".into()))?;
        answer.recv().map_err(|_| {
            PromptError("the TUI closed before the approval gate was answered".into())
        })?
    }

    fn on_event(&mut self, event: &WorkflowEvent) {
        let _ = self
            .tx
            .send(AppEvent::Workflow(WorkflowMsg::Event(event.clone())));
    }
}

/// What runs a workflow's sessions in the TUI.
pub trait WorkflowAgent: SessionDriver + Send {
    /// Whether the last session stopped because a live reload was requested (the run then
    /// pauses, to resume in the new binary).
    fn paused_for_reload(&self) -> bool {
        false
    }
}

impl WorkflowAgent for BuiltinDriver {
    fn paused_for_reload(&self) -> bool {
        BuiltinDriver::paused_for_reload(self)
    }
}

/// An agent CLI's session is not paused for a reload: the reload waits for the run.
impl WorkflowAgent for LentDriver {}

/// The built-in agent loop over `provider`, streaming into the conversation; `turn` cancels
/// (Esc) and stops (reload) it.
pub fn builtin_agent(
    host: &Host,
    provider: Arc<dyn Provider>,
    turn: &RunningTurn,
    tx: Sender<AppEvent>,
) -> BuiltinDriver {
    let sink: EventSink = Arc::new(move |event| {
        let _ = tx.send(AppEvent::Agent(event));
    });
    BuiltinDriver::new(
        provider,
        host.registry().clone(),
        host.env().clone(),
        sink,
        host.stop_gate(),
    )
    .with_controls(turn.cancel.clone(), turn.stop.clone())
}

/// Starts the run in the background, its sessions run by `driver`.
pub fn start(
    host: &Host,
    driver: Box<dyn WorkflowAgent>,
    args: RunArgs,
    tx: &Sender<AppEvent>,
) -> Result<(), NotStarted> {
    let job = WorkflowJob {
        project: host.project().clone(),
        driver,
        args,
    };
    background::spawn(job, tx)
}

/// A workflow run: its approvals and events go to the UI as they come; it ends with
/// `WorkflowMsg::Finished` (or `PausedForReload`).
struct WorkflowJob {
    project: Project,
    driver: Box<dyn WorkflowAgent>,
    args: RunArgs,
}

impl Job for WorkflowJob {
    fn thread_name(&self) -> String {
        "cp-workflow".into()
    }

    fn what(&self) -> &'static str {
        "the workflow"
    }

    fn run(mut self, progress: &Reporter) -> Option<AppEvent> {
        let mut prompter = TuiPrompter {
            tx: progress.sender(),
        };
        let (project, args) = (&self.project, &self.args);
        let result = match (&args.resume, &args.workflow) {
            (Some(run_id), path) => resume_workflow(
                project,
                run_id,
                path.as_deref(),
                self.driver.as_mut(),
                &mut prompter,
                &args.options,
            ),
            (None, Some(path)) => run_workflow(
                project,
                path,
                self.driver.as_mut(),
                &mut prompter,
                &args.options,
            ),
            (None, None) => {
                return Some(AppEvent::Workflow(WorkflowMsg::Finished(Err(
                    WorkflowFailure::NoFile,
                ))));
            }
        };
        let msg = if result.is_err() && self.driver.paused_for_reload() {
            WorkflowMsg::PausedForReload
        } else {
            WorkflowMsg::Finished(
                result
                    .map(|outcome| outcome.exit_code())
                    .map_err(|e| WorkflowFailure::Run(Arc::new(e))),
            )
        };
        Some(AppEvent::Workflow(msg))
    }
}
