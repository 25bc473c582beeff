//! Where a person answers: the [`ApprovalPrompter`] trait (the TUI shows a modal dialog; the
//! headless front-end prompts on the terminal or reads an answers file), and the progress
//! events a front-end shows.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::proof::{BranchVerdict, QueueCost, TreeVerdict};
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
    /// The merge queue tests the run's branch with this phase merged (and the phases queued
    /// before it, when it is tested ahead of its turn).
    MergeTesting {
        /// The phase.
        phase: String,
        /// The phases queued before it whose merges are in the tree too (not landed yet).
        ahead_of: Vec<String>,
    },
    /// A combined tree's test ended (or, for a phase that worked in the project's tree, the
    /// test of that tree after it).
    MergeTested {
        /// The phase whose merge it was.
        phase: String,
        /// The run's branch with the phase merged in (else the project's tree after it).
        #[serde(default = "yes")]
        combined: bool,
        /// What the test said.
        outcome: TreeVerdict,
        /// Each command with its exit and counts.
        summary: String,
        /// How long it took, in milliseconds.
        elapsed_ms: u64,
    },
    /// A phase's merge was red: the phase works again on its branch brought up to date, with
    /// the failure.
    SentBack {
        /// The phase.
        phase: String,
        /// It works in a worktree of its own (its merge was red); else in the project's tree
        /// (the tree it left was red).
        #[serde(default = "yes")]
        own_tree: bool,
        /// The try that failed (1 for the first).
        attempt: u32,
        /// The tries allowed.
        allowed: u32,
        /// The failing tests (or commands).
        failing: Vec<String>,
    },
    /// Tests of merges queued behind a red one were thrown away: their trees held it.
    MergesRequeued {
        /// The phases whose merges are tested again.
        phases: Vec<String>,
    },
    /// A phase's merge stayed red after its last try; the person decides.
    MergeRed {
        /// The phase.
        phase: String,
        /// Its tries.
        attempts: u32,
        /// The failing tests (or commands).
        failing: Vec<String>,
    },
    /// The person kept a phase aside: its branch is kept, its work not merged.
    KeptAside {
        /// The phase.
        phase: String,
        /// Its branch.
        branch: String,
    },
    /// The run's last word on its branch: green or not, and how that was established; with
    /// what the merge queue cost.
    BranchVerdict {
        /// The verdict.
        verdict: BranchVerdict,
        /// The merge queue's cost.
        cost: QueueCost,
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
            Self::MergeTesting { .. }
            | Self::MergeTested { .. }
            | Self::SentBack { .. }
            | Self::MergesRequeued { .. }
            | Self::MergeRed { .. }
            | Self::KeptAside { .. }
            | Self::BranchVerdict { .. } => self.fmt_queue(f),
            Self::RunFinished { run_id, status } => {
                write!(f, "run {run_id} {}", status.as_str())
            }
        }
    }
}

/// Serde's default for flags that were always true before they were recorded.
fn yes() -> bool {
    true
}

impl WorkflowEvent {
    /// The merge queue's events and the run's last word, in words.
    fn fmt_queue(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MergeTesting { phase, ahead_of } => {
                if ahead_of.is_empty() {
                    write!(f, "phase {phase}: testing the combined tree")
                } else {
                    write!(
                        f,
                        "phase {phase}: testing the combined tree ahead of its turn (on {})",
                        ahead_of.join(", ")
                    )
                }
            }
            Self::MergeTested {
                phase,
                combined,
                outcome,
                summary,
                elapsed_ms,
            } => {
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "milliseconds shown as seconds with one decimal"
                )]
                let seconds = *elapsed_ms as f64 / 1000.0;
                write!(
                    f,
                    "phase {phase}: {} {} in {seconds:.1} s ({summary})",
                    if *combined {
                        "combined tree"
                    } else {
                        "the tree it left"
                    },
                    outcome.word()
                )
            }
            Self::SentBack {
                phase,
                own_tree,
                attempt,
                allowed,
                failing,
            } => write!(
                f,
                "phase {phase}: sent back (try {attempt} of {allowed}): {}: {}",
                if *own_tree {
                    "it passes alone but fails merged with the run's branch"
                } else {
                    "the tests fail on the run's branch after it"
                },
                failing.join(", ")
            ),
            Self::MergesRequeued { phases } => write!(
                f,
                "phases {}: their tests ahead of their turn were thrown away (a merge under \
                 them failed); they are tested again",
                phases.join(", ")
            ),
            Self::MergeRed {
                phase,
                attempts,
                failing,
            } => write!(
                f,
                "phase {phase}: still red merged after {attempts} tr{} ({}); the person decides",
                if *attempts == 1 { "y" } else { "ies" },
                failing.join(", ")
            ),
            Self::KeptAside { phase, branch } => write!(
                f,
                "phase {phase}: kept aside; its work is on {branch}, not merged"
            ),
            Self::BranchVerdict { verdict, cost } => {
                write!(f, "{verdict}")?;
                if !cost.is_empty() {
                    write!(f, "; {cost}")?;
                }
                Ok(())
            }
            _ => Ok(()),
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
