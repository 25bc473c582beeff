//! The contract between an agent loop and the stop gate: when the agent ends its turn, the
//! loop asks a [`StopCheck`] whether it may stop, and either ends the turn or gives the agent
//! the [`Decision::Block`] reason and goes on. The loop says where its session began
//! ([`StopInput::base`]), so what the agent committed is checked as well as what it did not.
//!
//! The stop gate itself (what changed, the tests, the message, the commit gate) lives in the
//! checkpoint module, which implements this trait; the agent crates see only the contract, so
//! a crate that drives agents does not depend on a crate that draws panels.

use cp_base::{CancelToken, Project, WorkerId};
use cp_git::Head;

/// Set by a driver of an agent CLI (`context-pilot run --agent …`) for the agent it starts,
/// and so for the hooks the agent runs: where HEAD was when the phase began, as the JSON of a
/// [`Head`]. The stop gate behind the hooks then checks what the phase committed (a restart's
/// auto-commit included), not only what the agent's current session did.
pub const SESSION_BASE_ENV: &str = "CP_SESSION_BASE";

/// The most blocks in a row a stop gate may be configured to give (`max_blocks`); an agent
/// loop also uses it as its own bound, should the gate's count be lost.
pub const MAX_MAX_BLOCKS: u32 = 20;

/// What the stop gate knows when the agent stops.
#[derive(Debug, Clone)]
pub struct StopInput {
    /// The project (its root may be a subdirectory of the git work tree).
    pub project: Project,
    /// The worker stopping; state is kept per worker.
    pub worker: WorkerId,
    /// The agent session: Claude Code's or Gemini CLI's `session_id`, or one TUI turn.
    /// Consecutive blocks are counted per session, across hook processes.
    pub session: String,
    /// Whether uncommitted gated files hold the stop (the commit gate). False where the
    /// caller commits the work itself (workflow phases); red tests still hold it.
    pub gate_commits: bool,
    /// Where HEAD was when the session began: what it committed since is the session's work
    /// too, tested and listed with what is uncommitted. `None` when that is not known (only
    /// uncommitted work is in scope).
    pub base: Option<Head>,
}

/// Whether the agent may stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Keep the agent going and give it `reason` (Claude: `{"decision":"block","reason":…}`;
    /// Gemini: the retry prompt).
    Block {
        /// The stop gate message.
        reason: String,
    },
    /// Let the agent stop.
    Pass,
}

/// What a [`StopCheck`] answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopAnswer {
    /// Block or pass.
    pub decision: Decision,
    /// For the person, not the agent: set when the block limit let the agent stop with work
    /// left (uncommitted files, red tests).
    pub notice: Option<String>,
}

/// Why a stop check could not be made at all (a broken config, say). The agent loop lets
/// the agent stop and shows the reason.
pub type StopCheckError = Box<dyn std::error::Error + Send + Sync>;

/// Decides whether an agent may end its turn.
pub trait StopCheck: Send + Sync {
    /// Checks `input`; `cancel` (Esc) kills a test run in progress, after which the verdict
    /// means nothing and the caller ignores it.
    fn check(&self, input: &StopInput, cancel: &CancelToken) -> Result<StopAnswer, StopCheckError>;
}
