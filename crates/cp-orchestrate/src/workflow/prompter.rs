//! Where a person answers: the [`ApprovalPrompter`] trait (the TUI shows a modal dialog; the
//! headless front-end prompts on the terminal or reads an answers file), and the progress
//! events a front-end shows.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::schema::Action;
use super::store::RunStatus;
use crate::restart::RestartEvent;

/// One choice as the person sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The label.
    pub label: String,
    /// Whether choosing it asks for feedback text.
    pub with_feedback: bool,
    /// What it does.
    pub action: Action,
}

/// An approval gate waiting for an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The run.
    pub run_id: String,
    /// The phase that just finished.
    pub phase_id: String,
    /// How many times that phase has run.
    pub iteration: u32,
    /// A simple approval (Continue / Abort) rather than custom options.
    pub approval: bool,
    /// The question.
    pub prompt: String,
    /// Files to review (`show_files`, placeholders filled in), relative to the project root.
    pub files: Vec<String>,
    /// The choices, in order.
    pub choices: Vec<Choice>,
    /// The phase's own worktree (absolute), when it ran beside others: its work is there,
    /// on its branch, not in the project's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<std::path::PathBuf>,
    /// The commit the phase's work started from, the base of its diff (with `worktree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// Index into [`ApprovalRequest::choices`] (0-based).
    pub choice: usize,
    /// Feedback text, for choices `with_feedback` (ignored for others).
    pub feedback: Option<String>,
}

/// A prompter could not get an answer (input closed, answers file exhausted, no match…).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PromptError(pub String);

/// Progress of a run, for the status bar, conversation markers or terminal lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WorkflowEvent {
    /// The run starts or resumes.
    RunStarted {
        /// The run.
        run_id: String,
        /// The workflow's name.
        workflow: String,
        /// True for `--resume`.
        resumed: bool,
        /// Where its context is saved.
        run_dir: PathBuf,
    },
    /// A phase is skipped (it is in `context.skip_phases`).
    PhaseSkipped {
        /// The phase.
        phase: String,
    },
    /// A phase starts.
    PhaseStarted {
        /// The phase.
        phase: String,
        /// Its iteration (1 for the first run).
        iteration: u32,
    },
    /// A step of the restart loop inside the phase.
    Restart(RestartEvent),
    /// A phase's agent work is done.
    PhaseCompleted {
        /// The phase.
        phase: String,
        /// Restarts it used.
        restarts: u32,
    },
    /// An approval gate's condition was false.
    ApprovalSkipped {
        /// The phase.
        phase: String,
    },
    /// An approval gate's condition threw or hit a limit; the approval gate was skipped.
    ConditionFailed {
        /// The phase.
        phase: String,
        /// The error.
        error: String,
    },
    /// A decision was made and recorded.
    Decision {
        /// The phase.
        phase: String,
        /// The option chosen.
        label: String,
        /// Its action.
        action: Action,
    },
    /// A phase failed (its agent failed, or it left failing tests or uncommitted work); its
    /// branch is kept and the phases that depend on it do not run.
    PhaseFailed {
        /// The phase.
        phase: String,
        /// Why.
        error: String,
    },
    /// A phase's work was set aside because a phase it depends on runs again: its agent was
    /// stopped (when it was running), its branch kept under a new name; it runs again from
    /// the new base once that phase is merged.
    PhaseSuperseded {
        /// The phase.
        phase: String,
        /// The branch that keeps its work, `cp/<run id>/<phase id>@<iteration>`.
        branch: String,
        /// Why, e.g. `phase plan runs again`.
        reason: String,
    },
    /// A phase's branch was merged into the run's branch.
    Merged {
        /// The phase.
        phase: String,
        /// Its branch.
        branch: String,
        /// The merge commit; `None` when the branch had nothing new.
        commit: Option<String>,
    },
    /// A phase's branch conflicts with the run's branch; the merge was aborted.
    MergeConflict {
        /// The phase.
        phase: String,
        /// What it conflicts with: `phase 'x'` or the run's branch.
        other: String,
        /// The conflicting files.
        files: Vec<String>,
    },
    /// The run ended.
    RunFinished {
        /// The run.
        run_id: String,
        /// How.
        status: RunStatus,
    },
}

impl fmt::Display for WorkflowEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RunStarted {
                run_id,
                workflow,
                resumed,
                run_dir,
            } => write!(
                f,
                "{} workflow {workflow} (run {run_id}, context in {})",
                if *resumed { "resuming" } else { "starting" },
                run_dir.display()
            ),
            Self::PhaseSkipped { phase } => write!(f, "phase {phase}: skipped"),
            Self::PhaseStarted { phase, iteration } => {
                write!(f, "phase {phase}: started (iteration {iteration})")
            }
            Self::Restart(event) => event.fmt(f),
            Self::PhaseCompleted { phase, restarts } => {
                write!(f, "phase {phase}: completed ({restarts} restarts)")
            }
            Self::ApprovalSkipped { phase } => {
                write!(
                    f,
                    "phase {phase}: approval gate condition is false, skipped"
                )
            }
            Self::ConditionFailed { phase, error } => {
                write!(f, "phase {phase}: approval gate skipped, {error}")
            }
            Self::Decision {
                phase,
                label,
                action,
            } => write!(f, "phase {phase}: chose \"{label}\" ({})", action.as_str()),
            Self::PhaseFailed { phase, error } => write!(f, "phase {phase}: failed, {error}"),
            Self::PhaseSuperseded {
                phase,
                branch,
                reason,
            } => write!(
                f,
                "phase {phase}: superseded ({reason}); its work is kept on {branch}, and it runs \
                 again from the new base"
            ),
            Self::Merged {
                phase,
                branch,
                commit,
            } => match commit {
                Some(commit) => write!(
                    f,
                    "phase {phase}: merged {branch} ({})",
                    commit.get(..12).unwrap_or(commit)
                ),
                None => write!(f, "phase {phase}: {branch} had nothing new to merge"),
            },
            Self::MergeConflict {
                phase,
                other,
                files,
            } => write!(
                f,
                "phase {phase}: merge conflict with {other} in {}",
                files.join(", ")
            ),
            Self::RunFinished { run_id, status } => {
                write!(f, "run {run_id} {}", status.as_str())
            }
        }
    }
}

/// Asks a person at approval gates and shows progress.
///
/// The TUI implements it with a modal dialog: the prompt, the files (openable), the choices,
/// and a text field when the selected choice has `with_feedback`.
pub trait ApprovalPrompter {
    /// Shows `request` and returns the answer. An error stops the run; it can be resumed.
    fn ask(&mut self, request: &ApprovalRequest) -> Result<ApprovalAnswer, PromptError>;

    /// Shows a progress event; the default ignores it.
    fn on_event(&mut self, event: &WorkflowEvent) {
        let _ = event;
    }
}
