//! Context Pilot checkpoints.
//!
//! - **Handoff** (seed 002): the structured summary an agent leaves for the session that
//!   continues its work — [`Handoff`], [`HandoffBuilder`], [`validate_size`], [`HandoffStore`].
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
mod stop;

pub use error::CheckpointError;
pub use handoff::{
    CompletedItem, CompletionStatus, HANDOFF_SIZE_WARNING, Handoff, HandoffBuilder, HandoffContext,
    HandoffReason, HandoffStore, Priority, RemainingItem, SizeReport, TestStatus, validate_size,
};
pub use stop::{
    CONFIG_KEY, CategorizedFile, CategoryFiles, ChangedFile, CheckpointConfig, CheckpointReport,
    CheckpointRule, DEFAULT_TEST_TIMEOUT_SECS, Decision, FileStatus, GitError, ProcessGroupRunner,
    STATE_FILE, StopCheckpoint, StopInput, StopOutcome, StopPhase, TEST_TAIL_LINES, TestConfig,
    TestExit, TestFramework, TestOutcome, TestRun, TestRunner, TestSpec, TestSummary,
    parse_test_output,
};
