//! How a host says the person cancelled the running turn.

use std::sync::Arc;

/// Says whether the person cancelled the running turn; polled while the agent runs.
pub type CancelCheck = Arc<dyn Fn() -> bool + Send + Sync>;
