//! A scripted [`SessionDriver`]: plays back sessions of model turns against a real project
//! directory, the way the host's agent loop would, without an LLM.
//!
//! Each turn reports usage, then runs its tool batch (real file writes, and a handoff saved
//! as the `Checkpoint_handoff` tool saves it), then checks for a stop request, exactly in
//! the order the [`SessionDriver`] contract asks of a real driver.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cp_base::{Project, WorkerId};
use cp_orchestrate::{
    DriverError, Handoff, HandoffStore, HandoffSummary, SessionControl, SessionDriver, SessionEnd,
    ToolRecord,
};
use serde::Deserialize;
use serde_json::Value;

/// The handoff tool's name, as the checkpoint module registers it.
const HANDOFF_TOOL: &str = "Checkpoint_handoff";

/// What the checkpoint module's `Checkpoint_handoff` tool does with its arguments: build the
/// record and save it in the project's handoff store, where the restart loop looks for it.
/// (The tool's own parsing and validation are tested in the checkpoint module.)
fn save_like_the_handoff_tool(args: Value, project: &Project, worker: &WorkerId) {
    let handoff = HandoffSummary::deserialize(args)
        .unwrap()
        .into_handoff(worker.as_str());
    HandoffStore::new(project).save(&handoff).unwrap();
}

/// One tool call of a scripted batch.
#[derive(Debug, Clone)]
pub enum Action {
    /// `File_write`: writes `content` to `path` under the project root.
    Write(&'static str, String),
    /// `File_read` of `path`.
    Read(&'static str),
    /// Something outside asks for a stop while the batch runs (a key press, a reload).
    RequestStop,
}

/// One step of a scripted session.
#[derive(Debug, Clone)]
pub enum Step {
    /// A model response with `input_tokens` of `window` used, whose tool batch is `batch`.
    Turn {
        input_tokens: u64,
        window: u64,
        batch: Vec<Action>,
    },
    /// The model ends its turn: the task is done.
    Finish,
    /// The provider fails.
    Fail(&'static str),
}

/// What the session does when asked for its handoff.
#[derive(Debug, Clone)]
pub enum HandoffReply {
    /// Calls `Checkpoint_handoff` with these arguments (see `save_like_the_handoff_tool`).
    Tool(Value),
    /// Returns the handoff directly (a driver that intercepts the tool).
    Return(Handoff),
    /// Ignores the request.
    Nothing,
}

/// A scripted session.
#[derive(Debug, Clone)]
pub struct Session {
    pub steps: Vec<Step>,
    pub handoff: HandoffReply,
}

impl Session {
    pub fn new(steps: Vec<Step>) -> Self {
        Self {
            steps,
            handoff: HandoffReply::Nothing,
        }
    }

    #[must_use]
    pub fn handoff(mut self, reply: HandoffReply) -> Self {
        self.handoff = reply;
        self
    }
}

pub fn turn(input_tokens: u64, window: u64, batch: Vec<Action>) -> Step {
    Step::Turn {
        input_tokens,
        window,
        batch,
    }
}

pub fn write(path: &'static str, content: &str) -> Action {
    Action::Write(path, content.to_owned())
}

/// What the driver saw and did, shared so a test can read it after handing the driver out.
#[derive(Debug, Default)]
pub struct Journal {
    /// The prompt of every session, in order.
    pub prompts: Vec<String>,
    /// `attempt` of each session's control.
    pub attempts: Vec<u32>,
    /// Handoff requests received.
    pub handoff_requests: Vec<String>,
    /// `s<session>t<turn>` for every turn whose batch ran to the end.
    pub batches_done: Vec<String>,
}

pub struct ScriptedDriver {
    project: Project,
    worker: WorkerId,
    sessions: VecDeque<Session>,
    repeat_last: bool,
    current: Option<Session>,
    count: usize,
    pub journal: Arc<Mutex<Journal>>,
}

impl ScriptedDriver {
    pub fn new(project: &Project, sessions: Vec<Session>) -> Self {
        Self {
            project: project.clone(),
            worker: WorkerId::default(),
            sessions: sessions.into(),
            repeat_last: false,
            current: None,
            count: 0,
            journal: Arc::default(),
        }
    }

    /// Plays the last session again whenever the script runs out.
    #[must_use]
    pub fn repeating(mut self) -> Self {
        self.repeat_last = true;
        self
    }

    pub fn journal(&self) -> Arc<Mutex<Journal>> {
        self.journal.clone()
    }

    pub fn sessions_run(&self) -> usize {
        self.count
    }

    fn next_session(&mut self) -> Option<Session> {
        if self.repeat_last && self.sessions.len() == 1 {
            return self.sessions.front().cloned();
        }
        self.sessions.pop_front()
    }
}

impl SessionDriver for ScriptedDriver {
    fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
        {
            let mut journal = self.journal.lock().unwrap();
            journal.prompts.push(prompt.to_owned());
            journal.attempts.push(control.attempt());
        }
        let index = self.count;
        self.count += 1;
        let Some(session) = self.next_session() else {
            return SessionEnd::Failed(format!("script has no session {index}"));
        };
        self.current = Some(session.clone());
        for (t, step) in session.steps.iter().enumerate() {
            match step {
                Step::Finish => return SessionEnd::Completed,
                Step::Fail(message) => return SessionEnd::Failed((*message).to_owned()),
                Step::Turn {
                    input_tokens,
                    window,
                    batch,
                } => {
                    control.record_usage(*input_tokens, *window);
                    for action in batch {
                        match action {
                            Action::Write(path, content) => {
                                let full = self.project.root().join(path);
                                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                                std::fs::write(full, content).unwrap();
                                control.record_tool_call(ToolRecord::new("File_write", [*path]));
                            }
                            Action::Read(path) => {
                                control.record_tool_call(ToolRecord::new("File_read", [*path]));
                            }
                            Action::RequestStop => control.request_stop(),
                        }
                    }
                    self.journal
                        .lock()
                        .unwrap()
                        .batches_done
                        .push(format!("s{index}t{t}"));
                    if control.stop_requested() {
                        return SessionEnd::Stopped;
                    }
                }
            }
        }
        SessionEnd::Completed
    }

    fn request_handoff(
        &mut self,
        request: &str,
        control: &SessionControl,
    ) -> Result<Option<Handoff>, DriverError> {
        self.journal
            .lock()
            .unwrap()
            .handoff_requests
            .push(request.to_owned());
        match self.current.as_ref().map(|s| s.handoff.clone()) {
            Some(HandoffReply::Tool(args)) => {
                save_like_the_handoff_tool(args, &self.project, &self.worker);
                control.record_tool_call(ToolRecord::new(HANDOFF_TOOL, Vec::<String>::new()));
                Ok(None)
            }
            Some(HandoffReply::Return(handoff)) => Ok(Some(handoff)),
            Some(HandoffReply::Nothing) | None => Ok(None),
        }
    }
}

pub use cp_orchestrate::test_support::EchoDriver;

/// A prompter that answers from a list (by label) and records what it was asked and told.
#[derive(Default)]
pub struct ListPrompter {
    /// `(label, feedback)` answers, consumed in order.
    pub answers: VecDeque<(String, Option<String>)>,
    pub requests: Vec<cp_orchestrate::ApprovalRequest>,
    pub events: Vec<cp_orchestrate::WorkflowEvent>,
}

impl ListPrompter {
    pub fn new(answers: &[(&str, Option<&str>)]) -> Self {
        Self {
            answers: answers
                .iter()
                .map(|(l, f)| ((*l).to_owned(), f.map(str::to_owned)))
                .collect(),
            ..Self::default()
        }
    }

    /// The progress lines as a front-end would show them.
    pub fn lines(&self) -> Vec<String> {
        self.events.iter().map(ToString::to_string).collect()
    }
}

impl cp_orchestrate::ApprovalPrompter for ListPrompter {
    fn ask(
        &mut self,
        request: &cp_orchestrate::ApprovalRequest,
    ) -> Result<cp_orchestrate::ApprovalAnswer, cp_orchestrate::PromptError> {
        self.requests.push(request.clone());
        let Some((label, feedback)) = self.answers.pop_front() else {
            return Err(cp_orchestrate::PromptError(format!(
                "test script has no answer for the checkpoint after {}",
                request.phase_id
            )));
        };
        let choice = request
            .choices
            .iter()
            .position(|c| c.label == label)
            .unwrap_or_else(|| panic!("no choice '{label}' in {:?}", request.choices));
        Ok(cp_orchestrate::ApprovalAnswer { choice, feedback })
    }

    fn on_event(&mut self, event: &cp_orchestrate::WorkflowEvent) {
        self.events.push(event.clone());
    }
}

/// Runs what `args` ask for, the person answering through `prompter`, and returns what a
/// front-end ends with: the exit code, and the run's progress lines, then each phase's
/// summary or the error, one a line (`cp-run` prints them so on the terminal).
pub fn run_to_end(
    project: &Project,
    args: &cp_orchestrate::RunArgs,
    driver: &mut dyn SessionDriver,
    prompter: &mut ListPrompter,
) -> (i32, String) {
    let result = cp_orchestrate::run_or_resume(project, args, driver, prompter);
    let mut lines = prompter.lines();
    lines.extend(cp_orchestrate::phase_summaries(project, &result));
    let code = match result {
        Ok(outcome) => outcome.exit_code(),
        Err(e) => {
            lines.push(format!("error: {e}"));
            e.exit_code()
        }
    };
    (code, lines.join("\n"))
}
