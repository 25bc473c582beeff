//! The structured handoff an agent leaves for the session that continues its work (in the
//! original design it is called `CheckpointReturn`).
//!
//! The types serialize to JSON with `snake_case` names, which is also the shape the
//! `Checkpoint_handoff` tool accepts. camelCase aliases are accepted on input because models
//! trained on the original TypeScript shape sometimes send them.

mod builder;
mod error;
mod markdown;
mod model;
mod store;
mod summary;

pub use builder::{HANDOFF_SIZE_WARNING, HandoffBuilder, SizeReport, validate_size};
pub use error::HandoffError;
pub use model::{
    CompletedItem, CompletionStatus, Handoff, HandoffContext, HandoffReason, Priority,
    RemainingItem, TestStatus,
};
pub use store::HandoffStore;
pub use summary::HandoffSummary;
