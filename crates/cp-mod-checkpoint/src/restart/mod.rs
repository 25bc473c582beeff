//! Smart restart (seed 003): when a session's context fills up, stop it after its tool batch,
//! take its handoff, commit, and continue in a fresh session whose prompt is the handoff
//! followed by the original prompt.
//!
//! - [`RestartConfig`] is the `"restart"` section of `config.json`; [`RestartOverrides`] are
//!   the CLI flags ([`RESTART_HELP`] documents both).
//! - [`ContextEstimator`] turns provider-reported usage and tool calls into a restart signal.
//! - [`SessionRunner`] is what the host's agent loop implements; it reports to a
//!   [`SessionControl`] and stops when asked ([`StopHandle`]).
//! - [`RestartLoop::run_phase`] is the loop itself; it reports [`RestartEvent`]s to a
//!   [`RestartObserver`] and logs them with `tracing`.

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
pub use error::RestartError;
pub use estimator::{ContextEstimator, RestartTrigger};
pub use event::{HandoffSource, RestartEvent, RestartObserver};
pub use prompt::{PROGRESS_LINES, RestartContext, restart_prompt};
pub use session::{
    HANDOFF_REQUEST, SessionControl, SessionEnd, SessionRunner, StopHandle, ToolRecord,
};
