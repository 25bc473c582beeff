//! A handoff as an agent writes it: the `Checkpoint_handoff` tool's arguments, with the
//! context lists flattened. [`HandoffSummary::into_handoff`] turns it into the record (files
//! de-duplicated, the agent and the time filled in).

use serde::Deserialize;

use super::builder::HandoffBuilder;
use super::model::{CompletedItem, Handoff, HandoffReason, RemainingItem};

/// What an agent says when it hands off.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffSummary {
    /// Why the session ends.
    pub reason: HandoffReason,
    /// What is done.
    #[serde(default)]
    pub completed: Vec<CompletedItem>,
    /// What is left, with where to start.
    #[serde(default)]
    pub remaining: Vec<RemainingItem>,
    /// Decisions taken, to keep.
    #[serde(default)]
    pub decisions: Vec<String>,
    /// Patterns the code follows.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Known problems.
    #[serde(default)]
    pub issues: Vec<String>,
    /// The files changed.
    #[serde(default)]
    pub files_modified: Vec<String>,
}

impl HandoffSummary {
    /// The handoff record of `agent_id`.
    pub fn into_handoff(self, agent_id: impl Into<String>) -> Handoff {
        let mut builder = HandoffBuilder::new(agent_id, self.reason);
        for item in self.completed {
            builder = builder.add_completed(item);
        }
        for item in self.remaining {
            builder = builder.add_remaining(item);
        }
        for decision in self.decisions {
            builder = builder.add_decision(decision);
        }
        for pattern in self.patterns {
            builder = builder.add_pattern(pattern);
        }
        for issue in self.issues {
            builder = builder.add_issue(issue);
        }
        for file in self.files_modified {
            builder = builder.add_file_modified(file);
        }
        builder.build()
    }
}
