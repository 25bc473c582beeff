//! The run context: approval gate records, the skip list, iteration counts, vars and
//! free fields. Conditions see it as `context`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schema::Action;

/// The context key of the approval gate decisions, and its name before the rename.
const APPROVALS: &str = "approvals";
const OLD_APPROVALS: &str = "checkpoints";

/// One recorded approval gate decision (`context.approvals[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The phase whose approval gate it was.
    pub phase: String,
    /// The action chosen.
    pub decision: Action,
    /// `skip_phases`: the phases added to the skip list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Vec<String>>,
    /// `repeat_phase`: the phase jumped back to (`current` resolved to its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What the person wrote, for options `with_feedback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// When, RFC 3339 UTC.
    pub timestamp: String,
}

/// `context.phases`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseCounters {
    /// How many times each phase has been run (or scheduled by `repeat_phase`).
    #[serde(default)]
    pub iteration_counts: BTreeMap<String, u32>,
}

/// The context of a run, as conditions see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunContext {
    /// Every approval gate decision, in order. Saved runs from before the word "approval
    /// gate" called it `checkpoints`, and still load.
    #[serde(default, alias = "checkpoints")]
    pub approvals: Vec<ApprovalRecord>,
    /// Phases that will not run.
    #[serde(default)]
    pub skip_phases: Vec<String>,
    /// Per-phase counters.
    #[serde(default)]
    pub phases: PhaseCounters,
    /// The workflow's vars (after command-line overrides).
    #[serde(default)]
    pub vars: BTreeMap<String, Value>,
    /// Free fields: the workflow's `context:` and whatever the host adds (e.g.
    /// `subagents_spawned`, `deliverables`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RunContext {
    /// How many times `phase` has run.
    pub fn iteration(&self, phase: &str) -> u32 {
        self.phases
            .iteration_counts
            .get(phase)
            .copied()
            .unwrap_or(0)
    }

    pub(crate) fn bump(&mut self, phase: &str) {
        let count = self
            .phases
            .iteration_counts
            .entry(phase.to_owned())
            .or_insert(0);
        *count = count.saturating_add(1);
    }

    /// The context as JSON (what conditions get as `context`). The approval gate decisions
    /// are there under their old name `checkpoints` too, so conditions written before the
    /// rename (`context.approvals.some(…)`) keep their meaning.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value
            && let Some(approvals) = map.get(APPROVALS).cloned()
        {
            map.insert(OLD_APPROVALS.to_owned(), approvals);
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn serializes_in_the_seed_004_shape() {
        let mut ctx = RunContext::default();
        ctx.bump("planning");
        ctx.bump("planning");
        ctx.skip_phases.push("docs".into());
        ctx.extra.insert("subagents_spawned".into(), json!(2));
        ctx.approvals.push(ApprovalRecord {
            phase: "discovery".into(),
            decision: Action::SkipPhases,
            skipped: Some(vec!["documentation".into()]),
            target: None,
            feedback: Some("Not needed for MVP".into()),
            timestamp: "2025-10-31T14:00:00Z".into(),
        });
        let v = ctx.to_value();
        assert_eq!(v["phases"]["iteration_counts"]["planning"], 2);
        assert_eq!(v["skip_phases"], json!(["docs"]));
        assert_eq!(v["subagents_spawned"], 2);
        assert_eq!(
            v["approvals"][0],
            json!({"phase": "discovery", "decision": "skip_phases", "skipped": ["documentation"],
                   "feedback": "Not needed for MVP", "timestamp": "2025-10-31T14:00:00Z"})
        );
        assert_eq!(
            v["checkpoints"], v["approvals"],
            "conditions may use the old name"
        );
        let saved = serde_json::to_value(&ctx).unwrap();
        assert!(
            saved.get("checkpoints").is_none(),
            "saved under the new name only"
        );
        let back: RunContext = serde_json::from_value(saved).unwrap();
        assert_eq!(back, ctx);
    }

    #[test]
    fn a_context_saved_with_the_old_name_loads() {
        let old = json!({
            "checkpoints": [{"phase": "plan", "decision": "continue",
                             "timestamp": "2026-11-01T10:00:00Z"}],
            "skip_phases": [],
            "feature": "kept"
        });
        let ctx: RunContext = serde_json::from_value(old).unwrap();
        assert_eq!(ctx.approvals.len(), 1);
        assert_eq!(ctx.approvals[0].phase, "plan");
        assert!(ctx.extra.get("checkpoints").is_none(), "{:?}", ctx.extra);
        assert_eq!(ctx.extra["feature"], "kept");
    }
}
