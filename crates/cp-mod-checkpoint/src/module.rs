//! The checkpoint module as the host sees it: the `Checkpoint_handoff` tool and the stop
//! gate's panel.

use cp_base::{
    BatchChanges, BatchResponse, Module, Tool, ToolDef, ToolEnv, ToolOutcome, ToolResult, ToolTable,
};
use serde::Deserialize;
use serde_json::{Value, json};

use std::sync::Arc;
use std::time::SystemTime;

use cp_base::Panel;

use crate::panel::StopGatePanel;
use crate::stop::{STATE_FILE, StopGate, WarmLauncher, current_warm_run, warm_record_path};
use cp_orchestrate::{HandoffStore, HandoffSummary, validate_size};

/// Public name of the handoff tool.
pub const HANDOFF_TOOL: &str = "Checkpoint_handoff";

/// Offers `Checkpoint_handoff`, which records the agent's structured handoff under
/// `.context-pilot/handoffs/`, and the Checkpoint panel ([`StopGatePanel`]) with the stop
/// gate's last report and the project's warm run. With a [`WarmLauncher`], every batch that
/// changed files asks for a warm run.
#[derive(Debug, Default)]
pub struct CheckpointModule {
    panel: StopGatePanel,
    /// Modification time of the state file the panel was loaded from.
    loaded: Option<SystemTime>,
    /// Modification time of the warm-run record the panel was loaded from.
    warm_loaded: Option<SystemTime>,
    /// Starts warm runs after edits; none in a host that cannot run `warm-run`.
    warm: Option<WarmLauncher>,
}

impl CheckpointModule {
    /// A new module. Records live on disk; the panel follows this worker's state file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts warm runs with `launcher` after every batch that changed files.
    #[must_use]
    pub fn with_warm_runs(mut self, launcher: WarmLauncher) -> Self {
        self.warm = Some(launcher);
        self
    }

    /// Reloads the panel when the stop gate state file or the warm-run record changed (a
    /// hook process, the agent loop or a warm run wrote it). Returns whether it changed.
    fn refresh(&mut self, env: &ToolEnv) -> bool {
        let modified =
            |path: &std::path::Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let state = modified(&env.project.state_dir(&env.worker).join(STATE_FILE));
        let warm = modified(&warm_record_path(&env.project));
        let mut changed = false;
        if state != self.loaded {
            self.loaded = state;
            self.panel
                .set_report(StopGate::last_report(&env.project, &env.worker));
            changed = true;
        }
        if warm != self.warm_loaded {
            self.warm_loaded = warm;
            self.panel.set_warm(current_warm_run(&env.project));
            changed = true;
        }
        changed
    }
}

fn string_list(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

/// What the handoff tool tells the model.
const HANDOFF_DOC: &str = "Record your structured handoff so a fresh session can continue your work. Call it when \
         you are asked for a handoff or before you stop mid-task. List finished files in \
         `completed`, what is left in `remaining` (with an existing code pattern to imitate), \
         and the decisions, patterns, issues and every modified file. Keep it under 4000 \
         characters: one line per entry. Example: {\"reason\": \"threshold_critical\", \
         \"completed\": [{\"file\": \"src/parser.rs\", \"status\": \"done\", \"tests\": \
         \"passed\"}], \"remaining\": [{\"file\": \"src/writer.rs\", \"description\": \"add \
         the encoder\", \"reference_pattern\": \"src/parser.rs:40-80 error handling\", \
         \"priority\": \"high\"}], \"decisions\": [\"errors are typed with thiserror\"], \
         \"files_modified\": [\"src/parser.rs\"]}";

fn handoff_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reason"],
        "properties": {
            "reason": {
                "type": "string",
                "enum": ["threshold_critical", "task_complete", "error"],
                "description": "Why you hand off."
            },
            "completed": {
                "type": "array",
                "description": "Files you finished or partly finished.",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["file", "status"],
                    "properties": {
                        "file": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": ["done", "partial"]},
                        "tests": {"type": "string", "enum": ["passed", "skipped", "failed"]},
                        "notes": {"type": "string"}
                    }
                }
            },
            "remaining": {
                "type": "array",
                "description": "Work for the next session.",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["file", "description"],
                    "properties": {
                        "file": {"type": "string", "minLength": 1},
                        "description": {"type": "string", "minLength": 1},
                        "reference_pattern": {
                            "type": "string",
                            "examples": ["src/utils.rs:15-30 error handling"]
                        },
                        "priority": {"type": "string", "enum": ["high", "normal", "low"]}
                    }
                }
            },
            "decisions": string_list("Key architectural decisions made."),
            "patterns": string_list("Code patterns to follow."),
            "issues": string_list("Issues encountered."),
            "files_modified": string_list("Every file you touched (duplicates are dropped).")
        }
    })
}

/// How the module's tool runs: with the call's arguments, in the worker's project.
type Handler = fn(&Value, &ToolEnv) -> ToolResult;

/// The module's tools: what the model sees, and the function that runs each.
static TOOLS: ToolTable<Handler> = ToolTable::new(&[Tool {
    name: HANDOFF_TOOL,
    description: HANDOFF_DOC,
    schema: handoff_schema,
    handler: record_handoff,
}]);

impl Module for CheckpointModule {
    fn id(&self) -> &'static str {
        "checkpoint"
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome {
        match TOOLS.get(name) {
            Some(tool) => (tool.handler)(args, env).into(),
            None => ToolResult::error(format!(
                "checkpoint module has no tool '{name}'; it offers {HANDOFF_TOOL}"
            ))
            .into(),
        }
    }

    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        vec![Arc::new(self.panel.clone())]
    }

    fn on_batch(&mut self, batch: &BatchChanges, env: &ToolEnv) -> BatchResponse {
        if let Some(warm) = &self.warm {
            warm.request_for_batch(&env.project, &env.worker, batch);
        }
        BatchResponse::default()
    }

    fn on_tick(&mut self, env: &ToolEnv) -> bool {
        self.refresh(env)
    }

    fn load_state(&mut self, _state: &Value, env: &ToolEnv) {
        self.refresh(env);
    }
}

fn record_handoff(args: &Value, env: &ToolEnv) -> ToolResult {
    // The host validated `args` against the schema; this only fails if the two disagree.
    let handoff = match HandoffSummary::deserialize(args) {
        Ok(summary) => summary.into_handoff(env.worker.as_str()),
        Err(e) => return ToolResult::error(format!("{HANDOFF_TOOL}: {e}; nothing was saved")),
    };
    let size = validate_size(&handoff);
    let path = match HandoffStore::new(&env.project).save(&handoff) {
        Ok(path) => path,
        Err(e) => return ToolResult::error(format!("{HANDOFF_TOOL}: could not save: {e}")),
    };
    let shown = env
        .project
        .relative(&path)
        .unwrap_or_else(|| path.display().to_string());
    let mut text = format!(
        "Handoff saved to {shown} ({} characters): {} completed, {} remaining, {} files modified.",
        size.size,
        handoff.completed.len(),
        handoff.remaining.len(),
        handoff.context.files_modified.len()
    );
    if let Some(warning) = size.warning {
        text.push_str("\nWarning: ");
        text.push_str(&warning);
        text.push_str(
            ". It was saved in full; call the tool again with a shorter version if you can.",
        );
    }
    ToolResult::ok(text)
}

#[cfg(test)]
mod tests {
    use cp_base::{Notifier, Project, Registry, ToolCall, WorkerId};

    use super::*;
    use cp_orchestrate::{CompletionStatus, HandoffReason, Priority};

    fn setup() -> (tempfile::TempDir, Registry, ToolEnv) {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry.register(Box::new(CheckpointModule::new()));
        let env = ToolEnv::new(
            Project::at(dir.path()),
            WorkerId::new("agent-3").unwrap(),
            Notifier::new(),
        );
        (dir, registry, env)
    }

    #[test]
    fn records_a_valid_handoff_with_deduplicated_files() {
        let (_dir, registry, env) = setup();
        let args = json!({
            "reason": "threshold_critical",
            "completed": [{"file": "src/a.rs", "status": "done", "tests": "passed"}],
            "remaining": [{"file": "src/b.rs", "description": "finish", "priority": "high",
                           "reference_pattern": "src/a.rs:1-20"}],
            "decisions": ["typed errors"],
            "files_modified": ["src/a.rs", "src/a.rs", "src/c.rs"]
        });
        let result = registry.call(&ToolCall::new("1", HANDOFF_TOOL, args), &env);
        assert!(!result.is_error, "{}", result.text);
        assert!(
            result
                .text
                .starts_with("Handoff saved to .context-pilot/handoffs/"),
            "{}",
            result.text
        );
        assert!(result.text.contains("2 files modified"), "{}", result.text);
        let (_, saved) = HandoffStore::new(&env.project).latest().unwrap().unwrap();
        assert_eq!(saved.agent_id, "agent-3");
        assert_eq!(saved.reason, HandoffReason::ThresholdCritical);
        assert_eq!(saved.completed[0].status, CompletionStatus::Done);
        assert_eq!(saved.remaining[0].priority, Some(Priority::High));
        assert_eq!(saved.context.files_modified, ["src/a.rs", "src/c.rs"]);
    }

    #[test]
    fn bad_enum_value_is_rejected_and_nothing_is_saved() {
        let (_dir, registry, env) = setup();
        let args = json!({
            "reason": "tired",
            "completed": [{"file": "a", "status": "done"}]
        });
        let result = registry.call(&ToolCall::new("1", HANDOFF_TOOL, args), &env);
        assert!(result.is_error);
        assert!(result.text.contains("reason"), "{}", result.text);
        assert!(
            result.text.contains("threshold_critical"),
            "{}",
            result.text
        );
        let args = json!({"reason": "error", "completed": [{"file": "a", "status": "finished"}]});
        let result = registry.call(&ToolCall::new("2", HANDOFF_TOOL, args), &env);
        assert!(result.is_error);
        assert!(result.text.contains("status"), "{}", result.text);
        assert!(HandoffStore::new(&env.project).list().unwrap().is_empty());
    }

    #[test]
    fn oversized_handoff_is_saved_with_a_warning() {
        let (_dir, registry, env) = setup();
        let args = json!({"reason": "task_complete", "decisions": ["d".repeat(5000)]});
        let result = registry.call(&ToolCall::new("1", HANDOFF_TOOL, args), &env);
        assert!(!result.is_error);
        assert!(
            result.text.contains("Warning: handoff is") && result.text.contains("4000"),
            "{}",
            result.text
        );
        assert_eq!(HandoffStore::new(&env.project).list().unwrap().len(), 1);
    }
}
