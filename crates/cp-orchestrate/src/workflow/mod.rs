//! Workflows with approval gates: YAML phases run one after another through the
//! restart loop, with approval or custom approval gates between them.
//!
//! - [`Workflow`] parses and validates the file (errors name the file and the phase).
//! - [`run_workflow`] / [`resume_workflow`] drive a run: each phase goes through
//!   [`RestartLoop`](crate::RestartLoop) with a [`SessionDriver`](crate::SessionDriver); each
//!   approval gate asks an [`ApprovalPrompter`]; every step is saved to
//!   `.context-pilot/runs/<id>/context.json` ([`RunState`]).
//! - Conditions are JavaScript ([`evaluate_condition`]); a failing one skips its approval gate.
//! - A workflow with `depends_on` runs as a graph: phases ready together run at once, each in
//!   its own git worktree with its own agent (from a [`DriverFactory`]), and their branches are
//!   merged back in file order (`waves`); each phase's [`PhaseRecord`] is saved in the run.
//! - Every merge goes through a merge queue (`queue.rs`): the combined tree is tested with a
//!   [`TreeTester`] before the run's branch moves, a red merge goes back to its phase
//!   (`sent_back.rs`), and each merge keeps its [`MergeProof`] in `context.json` and as a git
//!   note; the run ends with its [`BranchVerdict`] (`verdict.rs`).
//! - [`run_or_resume`] runs what a front-end's [`RunArgs`] ask for; the terminal front-end and
//!   its prompters are `cp-run`'s.

mod agents;
mod alert;
mod alone;
mod args;
mod condition;
mod context;
mod engine;
mod error;
mod exit;
mod gate;
mod graph;
mod graph_gate;
mod landing;
mod merge;
mod phase_record;
mod phase_tree;
mod prompter;
mod prompts;
mod proof;
mod queue;
mod queue_state;
mod run;
mod schema;
mod sent_back;
mod side_by_side;
mod store;
mod supersede;
mod template;
mod tester;
mod verdict;
mod waves;

pub use agents::{DriverFactory, PhaseAgent};
pub use alert::{Alert, Alerter};
pub use args::{RunArgs, phase_summaries, run_or_resume};
pub use condition::{
    CONDITION_MEMORY_LIMIT, CONDITION_TIMEOUT, ConditionError, evaluate_condition,
};
pub use context::{ApprovalRecord, PhaseCounters, RunContext};
pub use error::{ApprovalProblem, MergeConflict, OptionProblem, RedMerge, WorkflowError};
pub use exit::{EXIT_ABORTED, EXIT_CONFLICT, EXIT_FAILED, EXIT_INTERRUPTED};
pub use gate::APPROVAL_PROMPT;
pub use phase_record::{PhaseRecord, PhaseStatus, SentBack, SupersededRun};
pub use prompter::{
    ApprovalAnswer, ApprovalPrompter, ApprovalRequest, Choice, PromptError, WorkflowEvent,
};
pub use proof::{BranchVerdict, MergeProof, QueueCost, TreeVerdict, machine_name};
pub use run::{RunOptions, WorkflowOutcome, resume_workflow, run_workflow};
pub use schema::{
    Action, Approval, ApprovalOption, CURRENT_PHASE, DEFAULT_MAX_MERGE_ATTEMPTS,
    DEFAULT_MAX_PARALLEL, MAX_SPECULATIVE_MERGES, OnSelect, Phase, RESERVED_CONTEXT_KEYS, Workflow,
};
pub use store::{
    PendingFeedback, Position, RUN_FILE, RunLock, RunState, RunStatus, RunStore, Stage,
};
pub use template::UnknownPlaceholder;
pub use tester::{CommandRun, HostRun, TreeTest, TreeTester, TreeUnderTest};
