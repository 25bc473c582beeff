//! The handoff's data: what was completed, what remains, the decisions and patterns to
//! keep, and the context the next session needs.

use serde::{Deserialize, Serialize};

/// How far a completed item got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionStatus {
    /// Finished.
    Done,
    /// Started but not finished; the notes or a remaining item say what is left.
    Partial,
}

/// The state of the tests that cover a completed item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    /// The tests ran and passed.
    Passed,
    /// The tests were not run.
    Skipped,
    /// The tests ran and failed.
    Failed,
}

/// How urgent a remaining item is for the next session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Do first.
    High,
    /// Do in order.
    Normal,
    /// Do when the rest is done.
    Low,
}

/// Why the handoff was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandoffReason {
    /// The context or tool-call threshold was reached; a fresh session continues.
    ThresholdCritical,
    /// The task is finished.
    TaskComplete,
    /// The agent hit an error it could not resolve.
    Error,
}

impl HandoffReason {
    /// The `snake_case` name used in JSON, e.g. `threshold_critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ThresholdCritical => "threshold_critical",
            Self::TaskComplete => "task_complete",
            Self::Error => "error",
        }
    }
}

/// A file the agent finished (or partly finished).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletedItem {
    /// Path of the file, relative to the project root.
    pub file: String,
    /// Whether it is done or partial.
    pub status: CompletionStatus,
    /// The state of its tests, when that applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestStatus>,
    /// Implementation notes for the next session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A file the next session still has to work on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemainingItem {
    /// Path of the file, relative to the project root.
    pub file: String,
    /// What needs to be done.
    pub description: String,
    /// Existing code to imitate, e.g. `utils.rs:15-30 error handling`.
    #[serde(
        default,
        alias = "referencePattern",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference_pattern: Option<String>,
    /// Execution priority; `normal` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
}

/// What the next session must know beyond the item lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffContext {
    /// Key architectural decisions made.
    #[serde(default)]
    pub decisions: Vec<String>,
    /// Code patterns to follow.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// Issues encountered; omitted from JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<String>,
    /// Every file touched, without duplicates, for dependency tracking.
    #[serde(default, alias = "filesModified")]
    pub files_modified: Vec<String>,
}

/// The whole handoff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    /// Items done by this agent.
    pub completed: Vec<CompletedItem>,
    /// Items for the next agent.
    pub remaining: Vec<RemainingItem>,
    /// Preserved context.
    pub context: HandoffContext,
    /// When the handoff was built, RFC 3339 in UTC, e.g. `2025-01-31T12:00:00.000Z`.
    #[serde(alias = "createdAt")]
    pub created_at: String,
    /// The agent (worker) that wrote it.
    #[serde(alias = "agentId")]
    pub agent_id: String,
    /// Why it was created.
    pub reason: HandoffReason,
}

impl Handoff {
    /// Compact JSON, the form whose length [`validate_size`] measures.
    pub fn to_json(&self) -> Result<String, crate::HandoffError> {
        serde_json::to_string(self).map_err(|source| crate::HandoffError::Serialize {
            what: "handoff",
            source,
        })
    }

    /// Parses a handoff from JSON, e.g. one written by [`Handoff::to_json`].
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_values_serialize_as_the_seed_spells_them() {
        let cases = [
            (
                serde_json::to_value(CompletionStatus::Done).unwrap(),
                "done",
            ),
            (
                serde_json::to_value(CompletionStatus::Partial).unwrap(),
                "partial",
            ),
            (serde_json::to_value(TestStatus::Passed).unwrap(), "passed"),
            (
                serde_json::to_value(TestStatus::Skipped).unwrap(),
                "skipped",
            ),
            (serde_json::to_value(TestStatus::Failed).unwrap(), "failed"),
            (serde_json::to_value(Priority::High).unwrap(), "high"),
            (serde_json::to_value(Priority::Normal).unwrap(), "normal"),
            (serde_json::to_value(Priority::Low).unwrap(), "low"),
            (
                serde_json::to_value(HandoffReason::ThresholdCritical).unwrap(),
                "threshold_critical",
            ),
            (
                serde_json::to_value(HandoffReason::TaskComplete).unwrap(),
                "task_complete",
            ),
            (serde_json::to_value(HandoffReason::Error).unwrap(), "error"),
        ];
        for (value, expected) in cases {
            assert_eq!(value, serde_json::Value::String(expected.into()));
        }
        for reason in [
            HandoffReason::ThresholdCritical,
            HandoffReason::TaskComplete,
            HandoffReason::Error,
        ] {
            assert_eq!(
                serde_json::to_value(reason).unwrap(),
                serde_json::Value::String(reason.as_str().into())
            );
        }
    }

    #[test]
    fn unknown_enum_value_is_rejected_with_the_expected_values() {
        let err = serde_json::from_str::<CompletedItem>(r#"{"file":"a","status":"finished"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("finished") && err.contains("done") && err.contains("partial"));
    }

    #[test]
    fn optional_fields_may_be_omitted_and_camel_case_aliases_are_accepted() {
        let json = r#"{
            "completed": [{"file": "a.rs", "status": "partial"}],
            "remaining": [{"file": "b.rs", "description": "wire up", "referencePattern": "a.rs:1-9"}],
            "context": {"decisions": [], "patterns": [], "filesModified": ["a.rs"]},
            "createdAt": "2025-01-31T12:00:00Z",
            "agentId": "w1",
            "reason": "error"
        }"#;
        let h = Handoff::from_json(json).unwrap();
        assert_eq!(h.completed[0].tests, None);
        assert_eq!(h.completed[0].notes, None);
        assert_eq!(
            h.remaining[0].reference_pattern.as_deref(),
            Some("a.rs:1-9")
        );
        assert_eq!(h.remaining[0].priority, None);
        assert!(h.context.issues.is_empty());
        assert_eq!(h.context.files_modified, ["a.rs"]);
        assert_eq!(h.agent_id, "w1");
        // Output uses snake_case only.
        let out = h.to_json().unwrap();
        assert!(out.contains("\"files_modified\"") && out.contains("\"reference_pattern\""));
        assert!(!out.contains("filesModified") && !out.contains("\"issues\""));
    }

    #[test]
    fn json_round_trip_keeps_every_field() {
        let h = crate::HandoffBuilder::new("w", HandoffReason::TaskComplete)
            .add_completed(CompletedItem {
                file: "a.rs".into(),
                status: CompletionStatus::Done,
                tests: Some(TestStatus::Skipped),
                notes: Some("n".into()),
            })
            .add_remaining(RemainingItem {
                file: "b.rs".into(),
                description: "d".into(),
                reference_pattern: Some("a.rs:1-2".into()),
                priority: Some(Priority::Low),
            })
            .add_decision("dec")
            .add_pattern("pat")
            .add_issue("iss")
            .add_file_modified("a.rs")
            .build();
        let json = h.to_json().unwrap();
        assert_eq!(Handoff::from_json(&json).unwrap(), h);
        let pretty = serde_json::to_string_pretty(&h).unwrap();
        assert_eq!(Handoff::from_json(&pretty).unwrap(), h);
    }
}
