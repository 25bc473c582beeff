//! What the restart loop reports as it goes, for the status bar and conversation markers.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::estimator::RestartTrigger;

/// Where the handoff of a stopped session came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffSource {
    /// The agent submitted it (`Checkpoint_handoff`).
    Agent,
    /// The agent gave none; it was built from git and the tool history.
    Fallback,
}

/// One step of the restart loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RestartEvent {
    /// A session of the phase starts (`attempt` 0 is the first, N follows restart N).
    SessionStarted {
        /// The phase.
        phase: String,
        /// The attempt.
        attempt: u32,
    },
    /// A session stopped for a restart after its tool batch finished.
    Stopped {
        /// The phase.
        phase: String,
        /// Which threshold; `None` when stopped by hand.
        trigger: Option<RestartTrigger>,
    },
    /// The handoff for the next session is saved.
    Handoff {
        /// The phase.
        phase: String,
        /// Who wrote it.
        source: HandoffSource,
        /// The record under `.context-pilot/handoffs/`.
        path: PathBuf,
        /// Why the agent gave none, for a fallback: its handoff turn's error, or that the
        /// turn ended without a handoff.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// Auto-commit ran; `commit` is `None` when there was nothing to commit.
    Committed {
        /// The phase.
        phase: String,
        /// The commit message.
        message: String,
        /// The new commit's hash.
        commit: Option<String>,
    },
    /// A fresh session starts with the handoff injected.
    Restarting {
        /// The phase.
        phase: String,
        /// The restart number (1-based).
        restart: u32,
        /// The configured maximum.
        max: u32,
    },
    /// The phase hit the limit once more than allowed; the run fails.
    LimitExceeded {
        /// The phase.
        phase: String,
        /// How often it hit the limit.
        hits: u32,
        /// The configured maximum.
        max: u32,
    },
    /// The phase's work is done.
    PhaseCompleted {
        /// The phase.
        phase: String,
        /// Restarts it used.
        restarts: u32,
    },
}

impl fmt::Display for RestartEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SessionStarted { phase, attempt: 0 } => {
                write!(f, "phase {phase}: session started")
            }
            Self::SessionStarted { phase, attempt } => {
                write!(f, "phase {phase}: session {} started", attempt + 1)
            }
            Self::Stopped {
                phase,
                trigger: Some(trigger),
            } => write!(f, "phase {phase}: stopping for a restart, {trigger}"),
            Self::Stopped {
                phase,
                trigger: None,
            } => write!(f, "phase {phase}: stopped by request"),
            Self::Handoff {
                phase,
                source: HandoffSource::Agent,
                path,
                ..
            } => write!(f, "phase {phase}: handoff received ({})", path.display()),
            Self::Handoff {
                phase,
                source: HandoffSource::Fallback,
                path,
                why,
            } => {
                write!(f, "phase {phase}: no handoff from the agent")?;
                if let Some(why) = why {
                    write!(f, ": {why}")?;
                }
                write!(
                    f,
                    "; used the handoff built from git and the tool history ({})",
                    path.display()
                )
            }
            Self::Committed {
                phase,
                message,
                commit: Some(commit),
            } => write!(
                f,
                "phase {phase}: committed {} \"{message}\"",
                commit.get(..12).unwrap_or(commit)
            ),
            Self::Committed {
                phase,
                commit: None,
                ..
            } => write!(f, "phase {phase}: nothing to commit"),
            Self::Restarting {
                phase,
                restart,
                max,
            } => write!(f, "phase {phase}: restart {restart}/{max} with the handoff"),
            Self::LimitExceeded { phase, hits, max } => write!(
                f,
                "phase {phase}: hit the context limit {hits} times (max restarts {max})"
            ),
            Self::PhaseCompleted { phase, restarts } => {
                write!(f, "phase {phase}: completed after {restarts} restarts")
            }
        }
    }
}

/// Receives [`RestartEvent`]s. Closures `FnMut(&RestartEvent)` implement it.
pub trait RestartObserver {
    /// Called for each event, in order.
    fn on_event(&mut self, event: &RestartEvent);
}

impl<F: FnMut(&RestartEvent)> RestartObserver for F {
    fn on_event(&mut self, event: &RestartEvent) {
        self(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_says_why_the_agent_gave_no_handoff() {
        let event = RestartEvent::Handoff {
            phase: "build".into(),
            source: HandoffSource::Fallback,
            path: "h.json".into(),
            why: Some("Gemini CLI's request was refused (HTTP 400 INVALID_ARGUMENT)".into()),
        };
        assert_eq!(
            event.to_string(),
            "phase build: no handoff from the agent: Gemini CLI's request was refused (HTTP \
             400 INVALID_ARGUMENT); used the handoff built from git and the tool history \
             (h.json)"
        );
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json["why"],
            "Gemini CLI's request was refused (HTTP 400 INVALID_ARGUMENT)"
        );
    }
}
