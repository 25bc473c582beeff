//! The controls of a turn running on its worker thread (the agent's, or a workflow phase's).

use cp_llm::CancelToken;
use cp_orchestrate::StopHandle;

/// A turn that is running on its worker thread.
#[derive(Debug, Clone)]
pub struct RunningTurn {
    /// Esc: cancel at once.
    pub cancel: CancelToken,
    /// A live reload: stop at the next batch boundary.
    pub stop: StopHandle,
}
