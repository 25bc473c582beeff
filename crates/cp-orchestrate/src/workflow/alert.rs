//! Telling the person when a run needs them: an approval gate or a merge conflict waits for
//! an answer, or a phase failed. The engine reports an [`Alert`] to the host's [`Alerter`],
//! which decides how to tell (the terminal bell, a desktop notification, a command of the
//! person's own that gets the alert as JSON).

use std::fmt;

use serde::Serialize;

/// Something the person should know now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alert {
    /// `approval` (an approval gate waits), `conflict` (a merge conflict waits) or
    /// `phase_failed`.
    pub event: &'static str,
    /// The run.
    pub run_id: String,
    /// The workflow's name.
    pub workflow: String,
    /// The phase concerned.
    pub phase: String,
    /// One line for a person, e.g. "merging phase 'ui' conflicts with phase 'api' in x.rs".
    pub message: String,
}

/// Tells the person about [`Alert`]s. Must not block the run for long.
pub trait Alerter: Send + Sync {
    /// Tells the person about `alert`.
    fn alert(&self, alert: &Alert);
}

impl fmt::Debug for dyn Alerter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Alerter")
    }
}
