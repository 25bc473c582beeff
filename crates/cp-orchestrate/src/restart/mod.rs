//! Smart restart: when a session's context fills up, stop it after its tool batch,
//! take its handoff, commit, and continue in a fresh session whose prompt is the handoff
//! followed by the original prompt.
//!
//! - [`RestartConfig`] is the `"restart"` section of `config.json`; [`RestartOverrides`] are
//!   the CLI flags ([`RESTART_HELP`] documents both).
//! - [`ContextEstimator`] turns provider-reported usage and tool calls into a restart signal.
//! - [`SessionDriver`] is what the host's agent loop implements; it reports to a
//!   [`SessionControl`] and stops when asked ([`StopHandle`]).
//! - [`RestartLoop::run_phase`] is the loop itself; it reports [`RestartEvent`]s to a
//!   [`RestartObserver`] and logs them with `tracing`.
//!
//! # Behaviour
//!
//! After every model response the driver reports the request's input tokens; at
//! `context_threshold` % of the window (or after `tool_call_threshold` tool calls when the
//! provider reports no usage) the session is asked to stop. The tool batch in progress always
//! finishes first. The stopped session gets one turn ([`HANDOFF_REQUEST`]) to call
//! `Checkpoint_handoff`; without it, a fallback handoff lists the changed files and the tool
//! history. With `auto_commit` everything is committed
//! (`context-pilot: auto-commit before restart N of phase X`), and a finished phase is committed
//! too (`context-pilot: phase X completed`). Hooks are skipped (`--no-verify`) for these
//! work-in-progress commits so a failing lint hook cannot end a long run.
//!
//! # Troubleshooting
//!
//! - *"phase X hit the context limit N times"*: the phase is too big for one context window
//!   even with handoffs. Split it into smaller phases, or raise `--max-restarts`.
//! - *"the work tree has uncommitted changes"*: auto-commit would put them in its commits;
//!   commit or stash them, or pass `--allow-dirty` (or `--no-auto-commit`).
//! - Restarts come too early or too late: tune `--context-threshold`; 100 turns restarts off.
//! - The fresh session redoes work: the agent's handoff was thin. The handoff record is under
//!   `.context-pilot/handoffs/`; the `Checkpoint_handoff` description tells the model what to
//!   include.

mod config;
mod cycle;
mod error;
mod estimator;
mod event;
mod fallback;
mod git;
mod prompt;
mod session;

pub use config::{RESTART_CONFIG_KEY, RESTART_HELP, RestartConfig, RestartOverrides};
pub use cycle::{PhaseReport, RestartLoop};
pub use error::{DriverError, RestartError};
pub use estimator::{ContextEstimator, RestartTrigger};
pub use event::{HandoffSource, RestartEvent, RestartObserver};
pub(crate) use git::{changed_files, commit_all, commit_identity};
pub use prompt::{PROGRESS_LINES, RestartContext, restart_prompt};
pub use session::{
    HANDOFF_REQUEST, SessionControl, SessionDriver, SessionEnd, StopHandle, StopReason, ToolRecord,
};
