//! Where the agent of a phase that runs beside others comes from: the host gives the engine
//! a [`DriverFactory`], and the engine asks it for one fresh driver per phase, rooted in the
//! phase's worktree and acting as the phase's worker.

use std::fmt;
use std::path::Path;

use cp_base::{CancelToken, WorkerId};

use crate::restart::{DriverError, SessionDriver};

/// What the agent of one phase is made for.
#[derive(Debug, Clone, Copy)]
pub struct PhaseAgent<'a> {
    /// The phase.
    pub phase: &'a str,
    /// The tree it works in: its worktree, or the project's root when it runs alone.
    pub root: &'a Path,
    /// The worker it acts as (the phase id in a worktree): callbacks, the stop gate's block
    /// count and the saved state are kept per worker, so phases never mix them.
    pub worker: &'a WorkerId,
    /// The phase's own `agent:` (`builtin`, `claude`, `gemini`, …); `None`: the run's.
    pub agent: Option<&'a str>,
    /// The phase's own `host:` (a name of the `hosts` configuration, or `local`); `None`:
    /// wherever a slot is free.
    pub host: Option<&'a str>,
    /// Stops this phase's agent alone, as Ctrl-C stops every phase's (the built-in agent's
    /// request is cancelled; an agent CLI gets SIGINT, then its process group): set when the
    /// phase's input changed under it (a phase it depends on runs again).
    pub stop: &'a CancelToken,
}

/// Makes the agent for a phase. Called on the engine's thread; the driver then runs on the
/// phase's own thread.
pub trait DriverFactory: Send + Sync {
    /// A fresh driver for `spec`, or why there cannot be one (e.g. an unknown agent name).
    fn driver(&self, spec: &PhaseAgent<'_>) -> Result<Box<dyn SessionDriver + Send>, DriverError>;

    /// Whether the person interrupted the run (Ctrl-C, SIGTERM): the drivers made here stop
    /// their sessions, and the engine starts nothing more. The default: never.
    fn interrupted(&self) -> bool {
        false
    }

    /// Called before the worktree at `root` is removed: end what the phase's host left running
    /// there (its console server and consoles). The default does nothing.
    fn release(&self, root: &Path) {
        let _ = root;
    }
}

impl fmt::Debug for dyn DriverFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DriverFactory")
    }
}

/// The worker id of phase `phase`: the id itself where it fits a worker id (`.` becomes `_`,
/// at most 64 characters), else `fallback`.
pub(crate) fn phase_worker(phase: &str, fallback: &WorkerId) -> WorkerId {
    let id: String = phase
        .chars()
        .map(|c| if c == '.' { '_' } else { c })
        .take(64)
        .collect();
    WorkerId::new(id).unwrap_or_else(|_| fallback.clone())
}
