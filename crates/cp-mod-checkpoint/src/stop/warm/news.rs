//! What a warm run tells whoever watches it (the `warm-run` command prints it in the run's
//! console), as it happens. The record the panel reads is kept apart ([`super::WarmRun`]).

use std::fmt;
use std::time::Duration;

/// One step of a warm run, for the person watching its console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarmNews {
    /// A stop (or a newer warm run) came after this run was asked for: it does nothing.
    Superseded {
        /// The edit the run was asked for after.
        change: String,
    },
    /// The run waits this long for the edits to settle.
    Settling {
        /// The edit the run was asked for after.
        change: String,
        /// How long it waits (`checkpoint.warm.quiet_ms`).
        quiet: Duration,
    },
    /// The tree changed while the tests ran: the run tests it once more, as it is.
    Again,
    /// The run tests nothing, and why.
    NoRun(String),
    /// The verdict of this very tree and these commands is kept already.
    Known,
    /// The tests started.
    Testing {
        /// The test commands, in order.
        commands: Vec<String>,
    },
    /// A test did not finish: no verdict, and why.
    NoVerdict(String),
    /// The tests ended and their verdict is kept.
    Done {
        /// How long the tests took.
        elapsed: Duration,
        /// Whether every test command passed.
        passed: bool,
        /// The commit the tree was on, when it was on one.
        head: Option<String>,
    },
}

impl fmt::Display for WarmNews {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Superseded { change } => {
                write!(
                    f,
                    "Warm run after {change}: a stop came first; nothing to do."
                )
            }
            Self::Settling { change, quiet } => write!(
                f,
                "Warm run after {change}: waiting {} ms for the edits to settle.",
                quiet.as_millis()
            ),
            Self::Again => {
                write!(
                    f,
                    "The tree changed while the tests ran; once more on the tree as it is."
                )
            }
            Self::NoRun(why) => write!(f, "No warm run: {why}"),
            Self::Known => write!(f, "This tree's verdict is known already."),
            Self::Testing { commands } => {
                write!(f, "Testing the tree as it is: {}", commands.join("; "))
            }
            Self::NoVerdict(why) => write!(f, "No verdict: {why}."),
            Self::Done {
                elapsed,
                passed,
                head,
            } => write!(
                f,
                "Warm run done in {:.1} s: {} (HEAD {}).",
                elapsed.as_secs_f64(),
                if *passed { "passed" } else { "not passed" },
                head.as_deref().map_or("none", |h| &h[..h.len().min(7)]),
            ),
        }
    }
}
