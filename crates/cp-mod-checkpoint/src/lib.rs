//! Context Pilot checkpoints.
//!
//! - **Stop checkpoint** (seed 000): when the agent ends its turn, [`StopCheckpoint::evaluate`]
//!   lists the uncommitted changes, sorts them by the configured [`CheckpointRule`]s, runs the
//!   tests when a triggering file changed, and blocks the stop with a message saying exactly
//!   what to verify; on the second stop it insists that gated files are committed. The
//!   [`CheckpointReport`] carries the same facts for the Checkpoint panel.
//! - **Handoff** (seed 002): the structured summary an agent leaves for the session that
//!   continues its work — [`Handoff`], [`HandoffBuilder`], [`validate_size`], [`HandoffStore`],
//!   and the `Checkpoint_handoff` tool of [`CheckpointModule`].
//!
//! ```
//! use cp_base::{Project, WorkerId};
//! use cp_mod_checkpoint::{Decision, StopCheckpoint, StopInput};
//!
//! let dir = tempfile::tempdir()?;
//! let project = Project::at(dir.path());
//! // No "checkpoint" section in config.json: built-in rules and a detected test command.
//! let checkpoint = StopCheckpoint::for_project(&project)?;
//! let outcome = checkpoint.evaluate(&StopInput {
//!     project,
//!     worker: WorkerId::default(),
//!     stop_hook_active: false,
//! });
//! // Not a git repository: the checkpoint fails open and says why.
//! assert_eq!(outcome.decision, Decision::Pass);
//! assert!(outcome.report.skipped.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ```
//! use cp_mod_checkpoint::{HandoffBuilder, HandoffReason, HandoffStore, RemainingItem, validate_size};
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

mod error;
mod handoff;
mod module;
mod panel;
mod stop;

pub use error::CheckpointError;
pub use handoff::{
    CompletedItem, CompletionStatus, HANDOFF_SIZE_WARNING, Handoff, HandoffBuilder, HandoffContext,
    HandoffReason, HandoffStore, Priority, RemainingItem, SizeReport, TestStatus, validate_size,
};
pub use module::{CheckpointModule, HANDOFF_TOOL};
pub use panel::CheckpointPanel;
pub use stop::{
    CONFIG_KEY, CategorizedFile, CategoryFiles, ChangedFile, CheckpointConfig, CheckpointReport,
    CheckpointRule, ConsoleTestRunner, DEFAULT_TEST_TIMEOUT_SECS, Decision, FileStatus,
    ProcessGroupRunner, STATE_FILE, StopCheckpoint, StopInput, StopOutcome, StopPhase,
    TEST_SESSION_LABEL, TEST_TAIL_LINES, TestConfig, TestExit, TestFramework, TestOutcome, TestRun,
    TestRunner, TestSpec, TestSummary, parse_test_output,
};
