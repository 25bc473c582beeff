//! Why a workflow could not be loaded, run or resumed.

use std::path::PathBuf;

use crate::restart::RestartError;
use crate::workflow::template::UnknownPlaceholder;

/// Errors of workflows; each names the file, phase or run involved and what to do.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// The workflow file could not be read.
    #[error("workflow {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid YAML for a workflow.
    #[error("workflow {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The workflow parses but does not make sense.
    #[error("workflow {path}{}: {message}", phase.as_ref().map(|p| format!(", phase '{p}'")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The phase at fault, if one is.
        phase: Option<String>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A phase's approval gate (its `approval:` block) does not make sense.
    #[error("workflow {path}, phase '{phase}': {source}")]
    InvalidApproval {
        /// The file.
        path: PathBuf,
        /// The phase the gate belongs to.
        phase: String,
        /// What is wrong and how to fix it (boxed: it is large and rare).
        source: Box<ApprovalProblem>,
    },
    /// A `{{name}}` in a phase's prompt or `show_files` has no value.
    #[error("workflow {path}, phase '{phase}': {source}")]
    Placeholder {
        /// The file.
        path: PathBuf,
        /// The phase whose text holds it.
        phase: String,
        /// The name without a value.
        source: UnknownPlaceholder,
    },
    /// The restart policy or the git checks before the run failed.
    #[error(transparent)]
    Restart(#[from] RestartError),
    /// A phase failed in the restart loop; the run can be resumed after fixing the cause.
    #[error("run {run_id}: {source}; resume with --resume {run_id}")]
    Phase {
        /// The run.
        run_id: String,
        /// The failure.
        source: RestartError,
    },
    /// The person's answer could not be obtained or did not fit the approval gate.
    #[error("run {run_id}, approval gate after phase '{phase}': {message}")]
    Prompt {
        /// The run.
        run_id: String,
        /// The phase whose approval gate asked.
        phase: String,
        /// What went wrong.
        message: String,
    },
    /// A `repeat_phase` would run a phase more often than its `max_iterations` allows.
    #[error(
        "run {run_id}: phase '{phase}' already ran {runs} times, its limit (max_iterations {cap}); it is not repeated again. Answer the approval gate differently after --resume {run_id}, or raise 'max_iterations' on the phase or the workflow"
    )]
    IterationCap {
        /// The run.
        run_id: String,
        /// The phase that would have been repeated.
        phase: String,
        /// How many times it ran.
        runs: u32,
        /// Its limit.
        cap: u32,
    },
    /// Merging a finished phase's branch into the run's branch conflicts; the merge was
    /// aborted, the tree is as before, and the branch is kept for a merge by hand.
    #[error("{0}")]
    MergeConflict(Box<MergeConflict>),
    /// A phase's merge stayed red after every try and no one said what to do; its branch is
    /// kept, and the run's branch holds only what passed.
    #[error("{0}")]
    RedMerge(Box<RedMerge>),
    /// Git failed while making, merging or removing a phase's worktree.
    #[error("run {run_id}, phase '{phase}': {source}")]
    Worktree {
        /// The run.
        run_id: String,
        /// The phase.
        phase: String,
        /// What git said.
        source: Box<cp_git::WorktreeError>,
    },
    /// The agent for a phase could not be started.
    #[error("run {run_id}, phase '{phase}': cannot start its agent: {message}")]
    Agent {
        /// The run.
        run_id: String,
        /// The phase.
        phase: String,
        /// Why.
        message: String,
    },
    /// `.context-pilot/` could not be written.
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    /// A run file exists but does not parse; it is left untouched.
    #[error("{path} is not a valid run file: {source}; fix or move it, it was not changed")]
    CorruptRun {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No run with this id.
    #[error("no workflow run '{run_id}' in {dir}; list the directory to see the runs")]
    RunNotFound {
        /// The id asked for.
        run_id: String,
        /// Where runs live.
        dir: PathBuf,
    },
    /// The run already ended.
    #[error("run '{run_id}' already {status}; start a new run instead of resuming it")]
    RunFinished {
        /// The run.
        run_id: String,
        /// How it ended.
        status: String,
    },
    /// Another process drives the run right now.
    #[error(
        "run '{run_id}' is being driven by another process (lock {lock}); wait for it or stop it"
    )]
    RunLocked {
        /// The run.
        run_id: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// A run id that could name a path outside the runs directory.
    #[error(
        "invalid run id '{0}': use the id printed when the run started (letters, digits, '_', '-')"
    )]
    InvalidRunId(String),
    /// The run was started from another workflow file than the one given.
    #[error(
        "run '{run_id}' runs {stored}, not {given}; drop the file argument or pass the same file"
    )]
    WorkflowMismatch {
        /// The run.
        run_id: String,
        /// The file the run was started with.
        stored: PathBuf,
        /// The file given now.
        given: PathBuf,
    },
}

/// Why a phase's approval gate (its `approval:` block) is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApprovalProblem {
    #[error("approval has both approval_required and options; use one of them")]
    BothApprovalAndOptions,
    #[error("approval 'options' is empty; add options or use approval_required: true")]
    NoOptions,
    #[error(
        "approval 'condition' is empty; remove it or write an expression such as \
         \"context.phases.iteration_counts[phase.id] > 1\""
    )]
    EmptyCondition,
    #[error("option '{label}': {source}")]
    Option {
        /// The option's label.
        label: String,
        /// What is wrong with it.
        source: OptionProblem,
    },
    #[error("two options are labelled '{0}'; labels must differ")]
    DuplicateLabel(String),
}

/// Why one option of an approval gate is invalid. `phases` lists the workflow's phase ids.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionProblem {
    #[error("'label' is empty")]
    EmptyLabel,
    #[error("repeat_phase needs a 'target': \"current\" or one of {phases}")]
    RepeatWithoutTarget { phases: String },
    #[error(
        "repeat_phase target '{target}' is not a phase of this workflow; use \
         \"current\" or one of {phases}"
    )]
    UnknownRepeatTarget { target: String, phases: String },
    #[error("skip_phases needs 'phases': a list of {phases}")]
    SkipWithoutPhases { phases: String },
    #[error(
        "skip_phases names '{missing}', which is not a phase of this workflow (phases: \
         {phases})"
    )]
    UnknownSkipPhase { missing: String, phases: String },
    #[error("'target' only applies to repeat_phase, not {0}")]
    TargetNotApplicable(&'static str),
    #[error("'phases' only applies to skip_phases, not {0}")]
    PhasesNotApplicable(&'static str),
}

impl WorkflowError {
    /// The exit code of `context-pilot run` for this error: 3 for a merge conflict or a red
    /// merge no one answered ([`EXIT_CONFLICT`](super::EXIT_CONFLICT)), else 1.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::MergeConflict(_) | Self::RedMerge(_) => super::exit::EXIT_CONFLICT,
            _ => super::exit::EXIT_FAILED,
        }
    }
}

/// The facts of a merge conflict between parallel phases, as the person needs them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "run {run_id}: merging phase '{phase}' (branch {branch}) conflicts with {other} in {}; the merge was aborted and the tree is as it was. Merge {branch} by hand, or --resume {run_id} and let an agent resolve it",
    files.join(", ")
)]
pub struct MergeConflict {
    /// The run.
    pub run_id: String,
    /// The phase whose branch did not merge.
    pub phase: String,
    /// Its branch, kept.
    pub branch: String,
    /// What it conflicts with: `phase 'x'` or the run's branch.
    pub other: String,
    /// The conflicting files, repository-relative.
    pub files: Vec<String>,
}

/// The facts of a merge that stayed red, as the person needs them: the phase, its branch, the
/// failing tests, and what landed under it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "run {run_id}: phase '{phase}' passes its tests alone but fails them merged with {target} \
     after {attempts} tr{}: {}; merged under it: {}. The run's branch holds only what passed; \
     the phase's work is kept on {branch}. --resume {run_id} to send it back again, keep it \
     aside or abort",
    if *attempts == 1 { "y" } else { "ies" },
    failing.join(", "),
    if under.is_empty() { "nothing".to_owned() } else { under.join(", ") }
)]
pub struct RedMerge {
    /// The run.
    pub run_id: String,
    /// The phase whose merge is red.
    pub phase: String,
    /// Where its work is: its branch, or the run's branch for a phase that worked in the
    /// project's tree.
    pub branch: String,
    /// The run's branch.
    pub target: String,
    /// Its tries.
    pub attempts: u32,
    /// The failing tests (or commands).
    pub failing: Vec<String>,
    /// What landed on the run's branch since the phase's branch parted from it: the phases
    /// merged, else the commits.
    pub under: Vec<String>,
}
