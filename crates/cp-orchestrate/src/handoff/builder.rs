//! Fluent construction of a [`Handoff`] and the size check.

use std::time::SystemTime;

use super::model::{CompletedItem, Handoff, HandoffContext, HandoffReason, RemainingItem};

/// Serialized handoffs longer than this many characters (about 1000 tokens) draw a warning:
/// they cost the next session context before it has done anything.
pub const HANDOFF_SIZE_WARNING: usize = 4000;

/// Builds a [`Handoff`]; every adder returns the builder so calls chain.
///
/// ```
/// use cp_orchestrate::{CompletedItem, CompletionStatus, HandoffBuilder, HandoffReason};
///
/// let handoff = HandoffBuilder::new("worker-1", HandoffReason::ThresholdCritical)
///     .add_completed(CompletedItem {
///         file: "src/lib.rs".into(),
///         status: CompletionStatus::Done,
///         tests: None,
///         notes: None,
///     })
///     .add_decision("errors are typed with thiserror")
///     .add_file_modified("src/lib.rs")
///     .add_file_modified("src/lib.rs")
///     .build();
/// assert_eq!(handoff.context.files_modified, ["src/lib.rs"]);
/// ```
#[derive(Debug, Clone)]
pub struct HandoffBuilder {
    completed: Vec<CompletedItem>,
    remaining: Vec<RemainingItem>,
    context: HandoffContext,
    agent_id: String,
    reason: HandoffReason,
}

impl HandoffBuilder {
    /// Starts an empty handoff from `agent_id` for `reason`.
    pub fn new(agent_id: impl Into<String>, reason: HandoffReason) -> Self {
        Self {
            completed: Vec::new(),
            remaining: Vec::new(),
            context: HandoffContext::default(),
            agent_id: agent_id.into(),
            reason,
        }
    }

    /// Records an item this agent finished or partly finished.
    #[must_use]
    pub fn add_completed(mut self, item: CompletedItem) -> Self {
        self.completed.push(item);
        self
    }

    /// Records an item the next agent has to do.
    #[must_use]
    pub fn add_remaining(mut self, item: RemainingItem) -> Self {
        self.remaining.push(item);
        self
    }

    /// Records an architectural decision.
    #[must_use]
    pub fn add_decision(mut self, decision: impl Into<String>) -> Self {
        self.context.decisions.push(decision.into());
        self
    }

    /// Records a code pattern to follow.
    #[must_use]
    pub fn add_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.context.patterns.push(pattern.into());
        self
    }

    /// Records an issue encountered.
    #[must_use]
    pub fn add_issue(mut self, issue: impl Into<String>) -> Self {
        self.context.issues.push(issue.into());
        self
    }

    /// Records a touched file; a file already recorded is not added again.
    #[must_use]
    pub fn add_file_modified(mut self, file: impl Into<String>) -> Self {
        let file = file.into();
        if !self.context.files_modified.contains(&file) {
            self.context.files_modified.push(file);
        }
        self
    }

    /// Finishes the handoff, stamped with the current time in RFC 3339 (UTC, milliseconds).
    ///
    /// Logs a warning when the JSON form is longer than [`HANDOFF_SIZE_WARNING`] characters;
    /// the handoff is still returned whole, nothing is cut.
    pub fn build(self) -> Handoff {
        let handoff = Handoff {
            completed: self.completed,
            remaining: self.remaining,
            context: self.context,
            created_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            agent_id: self.agent_id,
            reason: self.reason,
        };
        if let Some(warning) = validate_size(&handoff).warning {
            tracing::warn!(agent = %handoff.agent_id, "{warning}");
        }
        handoff
    }
}

/// The outcome of [`validate_size`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SizeReport {
    /// Whether the handoff is within [`HANDOFF_SIZE_WARNING`].
    pub valid: bool,
    /// Length of the compact JSON, in characters.
    pub size: usize,
    /// What to do about an oversized handoff; `None` when valid.
    pub warning: Option<String>,
}

/// Measures the compact JSON form of `handoff` against [`HANDOFF_SIZE_WARNING`].
pub fn validate_size(handoff: &Handoff) -> SizeReport {
    // Serializing these types cannot fail (string keys only); an empty string would only
    // under-report, so no error path is needed here.
    let size = serde_json::to_string(handoff).map_or(0, |json| json.chars().count());
    let valid = size <= HANDOFF_SIZE_WARNING;
    let warning = (!valid).then(|| {
        format!(
            "handoff is {size} characters, over the {HANDOFF_SIZE_WARNING}-character budget \
             (~1000 tokens); shorten notes and descriptions, keep decisions and patterns to one \
             line each"
        )
    });
    SizeReport {
        valid,
        size,
        warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::{CompletionStatus, Priority, TestStatus};

    fn sample() -> HandoffBuilder {
        HandoffBuilder::new("agent-7", HandoffReason::ThresholdCritical)
            .add_completed(CompletedItem {
                file: "src/a.rs".into(),
                status: CompletionStatus::Done,
                tests: Some(TestStatus::Passed),
                notes: Some("parser done".into()),
            })
            .add_remaining(RemainingItem {
                file: "src/b.rs".into(),
                description: "add the writer".into(),
                reference_pattern: Some("src/a.rs:15-30 error handling".into()),
                priority: Some(Priority::High),
            })
            .add_decision("use thiserror")
            .add_pattern("one file one job")
            .add_issue("flaky network test")
            .add_file_modified("src/a.rs")
    }

    #[test]
    fn builder_chains_every_adder_into_a_complete_handoff() {
        let h = sample().build();
        assert_eq!(h.agent_id, "agent-7");
        assert_eq!(h.reason, HandoffReason::ThresholdCritical);
        assert_eq!(h.completed.len(), 1);
        assert_eq!(h.completed[0].tests, Some(TestStatus::Passed));
        assert_eq!(h.remaining[0].priority, Some(Priority::High));
        assert_eq!(h.context.decisions, ["use thiserror"]);
        assert_eq!(h.context.patterns, ["one file one job"]);
        assert_eq!(h.context.issues, ["flaky network test"]);
        assert_eq!(h.context.files_modified, ["src/a.rs"]);
    }

    #[test]
    fn build_stamps_an_rfc3339_timestamp() {
        let h = sample().build();
        let parsed = humantime::parse_rfc3339(&h.created_at).unwrap();
        let age = SystemTime::now().duration_since(parsed).unwrap();
        assert!(
            age.as_secs() < 3600,
            "timestamp {} is not now",
            h.created_at
        );
        assert!(h.created_at.ends_with('Z') && h.created_at.contains('T'));
    }

    #[test]
    fn files_modified_are_deduplicated_in_first_seen_order() {
        let h = HandoffBuilder::new("a", HandoffReason::TaskComplete)
            .add_file_modified("b.rs")
            .add_file_modified("a.rs")
            .add_file_modified("b.rs")
            .add_file_modified(String::from("a.rs"))
            .build();
        assert_eq!(h.context.files_modified, ["b.rs", "a.rs"]);
    }

    #[test]
    fn other_lists_keep_repeats() {
        let h = HandoffBuilder::new("a", HandoffReason::Error)
            .add_decision("x")
            .add_decision("x")
            .build();
        assert_eq!(h.context.decisions, ["x", "x"]);
    }

    #[test]
    fn validate_size_accepts_a_small_handoff() {
        let h = sample().build();
        let report = validate_size(&h);
        assert!(report.valid);
        assert_eq!(report.size, h.to_json().unwrap().chars().count());
        assert_eq!(report.warning, None);
    }

    #[test]
    fn validate_size_warns_just_past_4000_characters() {
        let empty = HandoffBuilder::new("a", HandoffReason::Error).build();
        let base = validate_size(&empty).size;
        // One decision adds its length plus `""` quotes.
        let exactly = HandoffBuilder::new("a", HandoffReason::Error)
            .add_decision("x".repeat(HANDOFF_SIZE_WARNING - base - 2))
            .build();
        let at_limit = validate_size(&exactly);
        assert_eq!(at_limit.size, HANDOFF_SIZE_WARNING);
        assert!(at_limit.valid);
        let over = HandoffBuilder::new("a", HandoffReason::Error)
            .add_decision("x".repeat(HANDOFF_SIZE_WARNING - base - 1))
            .build();
        let report = validate_size(&over);
        assert_eq!(report.size, HANDOFF_SIZE_WARNING + 1);
        assert!(!report.valid);
        let warning = report.warning.unwrap();
        assert!(
            warning.contains("4001") && warning.contains("4000"),
            "{warning}"
        );
    }

    #[test]
    fn size_counts_characters_not_bytes() {
        let h = HandoffBuilder::new("a", HandoffReason::Error)
            .add_decision("é".repeat(10))
            .build();
        let json = h.to_json().unwrap();
        assert_eq!(validate_size(&h).size, json.chars().count());
        assert!(json.len() > json.chars().count());
    }
}

#[cfg(test)]
mod log_tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logs_of(f: impl FnOnce()) -> String {
        let captured = Captured::default();
        let sink = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn build_logs_a_warning_only_for_oversized_handoffs() {
        let big = logs_of(|| {
            let _ = HandoffBuilder::new("big-agent", HandoffReason::ThresholdCritical)
                .add_pattern("p".repeat(HANDOFF_SIZE_WARNING))
                .build();
        });
        assert!(big.contains("WARN"), "{big}");
        assert!(big.contains("over the 4000-character budget"), "{big}");
        assert!(big.contains("big-agent"), "{big}");

        let small = logs_of(|| {
            let _ = HandoffBuilder::new("a", HandoffReason::TaskComplete).build();
        });
        assert!(small.is_empty(), "{small}");
    }
}
