//! The checkpoint module: where Context Pilot checks an agent's work before it goes on. When
//! the agent stops, the **stop gate** tells it what to verify and holds it to commit; the
//! `Checkpoint_handoff` tool records the **handoff** a fresh session continues from; the
//! Checkpoint panel shows the last verdict. (Smart restart and workflows, which use both, are
//! in `cp-orchestrate`.)
//!
//! The stop gate of a project, asked whether the agent may end its turn:
//!
//! ```
//! use cp_base::{Project, WorkerId};
//! use cp_mod_checkpoint::StopGate;
//! use cp_orchestrate::{Decision, StopInput};
//!
//! let dir = tempfile::tempdir()?;
//! let project = Project::at(dir.path());
//! // No "checkpoint" section in config.json: built-in rules and a detected test command.
//! let gate = StopGate::for_project(&project)?;
//! let outcome = gate.evaluate(&StopInput {
//!     project,
//!     worker: WorkerId::default(),
//!     session: "claude-session-1".into(),
//!     gate_commits: true,
//!     // Where HEAD was when the session began (`SessionStarts` records it for hooks).
//!     base: None,
//! });
//! // Not a git repository: the stop gate fails open and says why.
//! assert_eq!(outcome.decision, Decision::Pass);
//! assert!(outcome.report.skipped.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - **Stop gate**: when the agent ends its turn, [`StopGate::evaluate`] lists the session's
//!   work (what it committed since it began, and what is uncommitted), sorts it by the
//!   configured [`StopRule`]s, runs the tests when a triggering file is in it, and blocks the
//!   stop with a message saying exactly what to verify; on the following stops it insists
//!   that gated files are committed and the tests pass, up to `max_blocks` blocks in a row per
//!   agent session. [`SessionStarts`] records where each agent session began, for the hooks. The [`StopReport`] carries the same
//!   facts for the [`StopGatePanel`] (titled "Checkpoint" in the sidebar).
//!   [`ProjectStopGate`] is the stop gate as an agent loop asks it
//!   ([`cp_orchestrate::StopCheck`]).
//! - **Warm runs**: once the agent's edits settle, the same tests run in the background
//!   ([`WarmLauncher`], [`warm_run`]), niced, one at a time per project, through the console
//!   server; a stop on the very same tree (same fingerprint, commands and environment) takes
//!   their verdict without waiting, and never one of another tree.
//! - **Handoff tool**: `Checkpoint_handoff` of [`CheckpointModule`] validates the agent's
//!   summary and saves it as a [`cp_orchestrate::Handoff`] in the project's handoff store.
//!
//! The user-visible names stay as they were: the `Checkpoint_handoff` tool and the
//! `"checkpoint"` config section.

mod error;
mod module;
mod panel;
mod stop;

pub use error::CheckpointError;
pub use module::{CheckpointModule, HANDOFF_TOOL};
pub use panel::StopGatePanel;
pub use stop::{
    CONFIG_KEY, CategorizedFile, CategoryFiles, ConsoleTestRunner, DEFAULT_MAX_BLOCKS,
    DEFAULT_TEST_TIMEOUT_SECS, DEFAULT_WARM_QUIET_MS, ExistingFailures, MAX_LEARNED_TIMEOUT_SECS,
    MissingTool, NoPlannedTests, PlannedTests, ProcessGroupRunner, ProjectStopGate, RunnerCounts,
    SESSIONS_FILE, STATE_FILE, SessionStarts, StopGate, StopGateConfig, StopOutcome, StopPhase,
    StopReport, StopRule, TEST_SESSION_LABEL, TEST_TAIL_LINES, TestConfig, TestExit, TestFramework,
    TestOutcome, TestRun, TestRunner, TestSpec, TestSummary, TestVerdict, TreeTests, WARM_LABEL,
    WARM_SUBCOMMAND, WarmConfig, WarmLauncher, WarmNews, WarmPhase, WarmRun, WarmUse, base_run,
    cancel_warm_run, current_warm_run, parse_test_output, suggest_commit_message, warm_record_path,
    warm_run,
};
