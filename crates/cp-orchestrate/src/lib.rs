//! Orchestration: running an agent's work across sessions and phases. This crate holds the
//! contract every agent driver implements ([`SessionDriver`]: Context Pilot's own loop in
//! `cp-agent`, Claude Code and Gemini CLI in `cp-agent-cli`), and what is built on it:
//!
//! - **Handoffs**: the structured summary an agent leaves for the session that continues its
//!   work — [`Handoff`], [`HandoffBuilder`], [`validate_size`], and [`HandoffStore`] under
//!   `.context-pilot/handoffs/`. (The `Checkpoint_handoff` tool that records one is the
//!   checkpoint module's.)
//! - **Smart restart**: [`RestartLoop::run_phase`] runs a phase in sessions of a
//!   [`SessionDriver`]; past the [`RestartConfig`] thresholds, measured by a
//!   [`ContextEstimator`], the session stops after its tool batch, hands off, the work is
//!   auto-committed, and a fresh session continues with the handoff before the original prompt.
//! - **Workflows with approval gates**: [`run_workflow`] / [`resume_workflow`] run the phases
//!   of a YAML [`Workflow`] through the restart loop. A phase's [`Approval`] (its `approval:`
//!   block) is answered by an [`ApprovalPrompter`] (the TUI dialog, or the terminal's in
//!   `cp-run`), may hold a JavaScript condition, and is recorded in the run context saved
//!   under `.context-pilot/runs/<id>/`. [`run_or_resume`] runs what a front-end's
//!   [`RunArgs`] ask for.
//! - **Parallel phases**: a workflow with `depends_on` runs the phases that are ready together
//!   at once, each in its own git worktree with its own agent from a [`DriverFactory`]; their
//!   branches are merged back in the file's order, a conflict is aborted and named
//!   ([`EXIT_CONFLICT`] when no one answers), each phase's [`PhaseRecord`] is saved with the
//!   run, and an [`Alerter`] is told when the run needs the person.
//! - **The merge queue**: before the run's branch moves, the combined tree is tested by the
//!   front-end's [`TreeTester`] (the stop gate's planning); a red merge goes back to its phase,
//!   after `max_merge_attempts` to the person ([`RedMerge`], exit code 3 unanswered); every
//!   merge keeps its [`MergeProof`], and the run ends with a [`BranchVerdict`].
//! - **The stop-gate contract**: an agent loop asks a [`StopCheck`] whether the agent may
//!   end its turn; the stop gate in the checkpoint module answers.
//!
//! A handoff, built, checked for size, saved and read back:
//!
//! ```
//! use cp_orchestrate::{HandoffBuilder, HandoffReason, HandoffStore, RemainingItem, validate_size};
//!
//! let project = tempfile::tempdir()?;
//! let handoff = HandoffBuilder::new("worker-1", HandoffReason::ThresholdCritical)
//!     .add_remaining(RemainingItem {
//!         file: "src/writer.rs".into(),
//!         description: "write the encoder".into(),
//!         reference_pattern: Some("src/reader.rs:10-40".into()),
//!         priority: None,
//!     })
//!     .add_file_modified("src/reader.rs")
//!     .build();
//! assert!(validate_size(&handoff).valid);
//!
//! let store = HandoffStore::new(&cp_base::Project::at(project.path()));
//! store.save(&handoff)?;
//! let (_, latest) = store.latest()?.expect("just saved");
//! assert!(latest.to_markdown().contains("write the encoder"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A workflow run with a stand-in driver (the host's agent loop in real use) and answers given
//! in advance:
//!
//! ```
//! use cp_base::Project;
//! use cp_orchestrate::{
//!     ApprovalAnswer, ApprovalPrompter, ApprovalRequest, DriverError, Handoff, PromptError,
//!     RestartOverrides, RunOptions, RunStatus, SessionControl, SessionEnd, SessionDriver,
//!     WorkflowEvent, run_workflow,
//! };
//!
//! struct Agent;
//! impl SessionDriver for Agent {
//!     fn run(&mut self, prompt: &str, control: &SessionControl) -> SessionEnd {
//!         // A real driver sends `prompt`, reports usage and tool calls, and stops when asked.
//!         control.record_usage(12_000, 200_000);
//!         SessionEnd::Completed
//!     }
//!     fn request_handoff(&mut self, _: &str, _: &SessionControl) -> Result<Option<Handoff>, DriverError> {
//!         Ok(None)
//!     }
//! }
//!
//! let dir = tempfile::tempdir()?;
//! let project = Project::at(dir.path());
//! let file = dir.path().join("flow.yaml");
//! std::fs::write(&file, "name: flow\nphases:\n  - id: plan\n    prompt: Plan it.\n    \
//!     approval: {approval_required: true}\n  - id: build\n    prompt: Build it.\n")?;
//! // The person answers "Abort" at the approval gate after `plan`.
//! struct Person;
//! impl ApprovalPrompter for Person {
//!     fn ask(&mut self, request: &ApprovalRequest) -> Result<ApprovalAnswer, PromptError> {
//!         let choice = request.choices.iter().position(|c| c.label == "Abort");
//!         let choice = choice.ok_or_else(|| PromptError("no Abort option".into()))?;
//!         Ok(ApprovalAnswer { choice, feedback: None })
//!     }
//!     fn on_event(&mut self, _: &WorkflowEvent) {}
//! }
//! let mut prompter = Person;
//! // Not a git repository here, so no auto-commit.
//! let options = RunOptions {
//!     overrides: RestartOverrides { no_auto_commit: true, ..RestartOverrides::default() },
//!     ..RunOptions::default()
//! };
//! let outcome = run_workflow(&project, &file, &mut Agent, &mut prompter, &options)?;
//! assert_eq!(outcome.status, RunStatus::Aborted);
//! assert_eq!(outcome.exit_code(), 2);
//! assert_eq!(outcome.context.phases.iteration_counts["plan"], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod handoff;
mod restart;
mod stop_check;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod workflow;

pub use handoff::{
    CompletedItem, CompletionStatus, HANDOFF_SIZE_WARNING, Handoff, HandoffBuilder, HandoffContext,
    HandoffError, HandoffReason, HandoffStore, HandoffSummary, Priority, RemainingItem, SizeReport,
    TestStatus, validate_size,
};
pub use restart::{
    ContextEstimator, DriverError, HANDOFF_REQUEST, HandoffSource, PROGRESS_LINES, PhaseReport,
    RESTART_CONFIG_KEY, RESTART_HELP, RestartConfig, RestartContext, RestartError, RestartEvent,
    RestartLoop, RestartObserver, RestartOverrides, RestartTrigger, SessionControl, SessionDriver,
    SessionEnd, StopHandle, StopReason, ToolRecord, restart_prompt,
};
pub use stop_check::{
    Decision, MAX_MAX_BLOCKS, SESSION_BASE_ENV, StopAnswer, StopCheck, StopCheckError, StopInput,
};
pub use workflow::{
    APPROVAL_PROMPT, Action, Alert, Alerter, Approval, ApprovalAnswer, ApprovalOption,
    ApprovalProblem, ApprovalPrompter, ApprovalRecord, ApprovalRequest, BranchVerdict,
    CONDITION_MEMORY_LIMIT, CONDITION_TIMEOUT, CURRENT_PHASE, Choice, CommandRun, ConditionError,
    DEFAULT_MAX_MERGE_ATTEMPTS, DEFAULT_MAX_PARALLEL, DriverFactory, EXIT_ABORTED, EXIT_CONFLICT,
    EXIT_FAILED, EXIT_INTERRUPTED, HostRun, MAX_SPECULATIVE_MERGES, MergeConflict, MergeProof,
    OnSelect, OptionProblem, PendingFeedback, Phase, PhaseAgent, PhaseCounters, PhaseRecord,
    PhaseStatus, Position, PromptError, QueueCost, RESERVED_CONTEXT_KEYS, RUN_FILE, RedMerge,
    RunArgs, RunContext, RunLock, RunOptions, RunState, RunStatus, RunStore, SentBack, Stage,
    SupersededRun, TreeTest, TreeTester, TreeUnderTest, TreeVerdict, UnknownPlaceholder, Workflow,
    WorkflowError, WorkflowEvent, WorkflowOutcome, evaluate_condition, machine_name,
    phase_summaries, resume_workflow, run_or_resume, run_workflow,
};
