//! What an interactive host (the TUI) needs beyond the restart loop's `SessionDriver`: each
//! message the person sends continues the same agent session, and Esc cancels a turn at once.

use cp_orchestrate::SessionDriver;

use cp_base::CancelToken;

/// An agent CLI driver driven turn by turn.
pub trait InteractiveDriver: SessionDriver + Send {
    /// The next [`SessionDriver::run`] resumes the latest session (`--resume`) instead of
    /// starting a fresh one; later runs of the same turn (after a smart restart) are fresh.
    fn continue_session(&mut self);

    /// Polled while the agent runs: once it is cancelled the agent is interrupted at once
    /// (SIGINT, the grace period, then its process group) and the run ends as failed.
    fn set_cancel(&mut self, cancel: Option<CancelToken>);

    /// Continues `session_id` (saved by an earlier run of the host) at the next
    /// [`continue_session`](Self::continue_session).
    fn resume_session(&mut self, session_id: String);

    /// The id of the latest session, if one ran.
    fn current_session(&self) -> Option<&str>;
}
