//! The tool-batch pipeline: run one assistant message's tool calls, then let modules react.
//!
//! 1. Each call is validated and started in order, so two edits of one file apply in the order
//!    the model wrote them. Deferred (waiting) work then runs in parallel, modules released.
//! 2. The file changes the calls report are collected per call.
//! 3. Every module's batch hook sees those changes ([`react_to_changes`], which a front-end
//!    whose agent edited the files itself calls alone) and may add notes to the calls that caused
//!    them, now or from work that holds the batch (blocking callbacks).
//! 4. Only when all holds are done do the results go back, each with its notes appended.

use std::thread;

use crate::module::{BatchChanges, BatchHold, CallChanges, CallNote, ToolEnv};
use crate::registry::Registry;
use crate::tool::{ToolCall, ToolOutcome, ToolResult};

/// Runs a batch of tool calls through `registry` and returns one result per call, in order.
pub fn run_batch(registry: &Registry, calls: &[ToolCall], env: &ToolEnv) -> Vec<ToolResult> {
    let outcomes: Vec<ToolOutcome> = calls.iter().map(|c| registry.start_call(c, env)).collect();
    let mut results = finish_all(outcomes);

    let batch = BatchChanges {
        calls: calls
            .iter()
            .zip(&results)
            .enumerate()
            .filter(|(_, (_, result))| !result.changes.is_empty())
            .map(|(call_index, (call, result))| CallChanges {
                call_index,
                tool: call.name.clone(),
                label: call_label(call),
                changes: result.changes.clone(),
            })
            .collect(),
    };
    for note in react_to_changes(registry, &batch, env) {
        if let Some(result) = results.get_mut(note.call_index) {
            result.append(&note.text);
        }
    }
    results
}

/// Tells every module of `registry` that the calls of `batch` changed these files, and runs
/// what that triggers (callbacks): returns the notes for each call once every blocking piece of
/// work ended. [`run_batch`] calls it after its own tools; a front-end whose agent edited the
/// files itself (an agent CLI's hook) calls it with the agent's calls.
pub fn react_to_changes(registry: &Registry, batch: &BatchChanges, env: &ToolEnv) -> Vec<CallNote> {
    if batch.is_empty() {
        return Vec::new();
    }
    let mut notes: Vec<CallNote> = Vec::new();
    let mut holds: Vec<BatchHold> = Vec::new();
    for response in registry.on_batch(batch, env) {
        notes.extend(response.notes);
        holds.extend(response.hold);
    }
    let held = !holds.is_empty();
    notes.extend(run_holds(holds));
    if held {
        // Held work changed modules from its own threads (a failed run shows its panel).
        registry.try_republish();
    }
    notes
}

/// A short human label for a call, e.g. `File_edit src/main.rs`.
pub fn call_label(call: &ToolCall) -> String {
    let target = ["file_path", "path", "id", "name", "command"]
        .iter()
        .find_map(|key| call.arguments.get(*key).and_then(|v| v.as_str()));
    match target {
        Some(target) => format!("{} {target}", call.name),
        None => call.name.clone(),
    }
}

fn finish_all(outcomes: Vec<ToolOutcome>) -> Vec<ToolResult> {
    if outcomes.iter().all(|o| matches!(o, ToolOutcome::Done(_))) {
        return outcomes.into_iter().map(ToolOutcome::finish).collect();
    }
    thread::scope(|scope| {
        let handles: Vec<_> = outcomes
            .into_iter()
            .map(|o| scope.spawn(move || o.finish()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| ToolResult::error("the tool failed unexpectedly"))
            })
            .collect()
    })
}

fn run_holds(holds: Vec<BatchHold>) -> Vec<CallNote> {
    match holds.len() {
        0 => Vec::new(),
        1 => holds.into_iter().flat_map(|hold| hold()).collect(),
        _ => thread::scope(|scope| {
            let handles: Vec<_> = holds.into_iter().map(|hold| scope.spawn(hold)).collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::{Value, json};

    use super::*;
    use crate::module::{BatchResponse, Module};
    use crate::notify::Notifier;
    use crate::project::Project;
    use crate::tool::{ChangeKind, FileChange, ToolDef};
    use crate::worker::WorkerId;

    /// Pretends to write the file named in its arguments.
    struct Writer;
    impl Module for Writer {
        fn id(&self) -> &'static str {
            "writer"
        }
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef::new("write", "", json!({"type": "object"}))]
        }
        fn call_tool(&mut self, _: &str, args: &Value, _: &ToolEnv) -> ToolOutcome {
            let path = args["file_path"].as_str().unwrap_or("x").to_owned();
            if args.get("slow").is_some() {
                return ToolOutcome::Deferred(Box::new(move || {
                    ToolResult::ok("slow").with_change(FileChange::new(path, ChangeKind::Created))
                }));
            }
            ToolResult::ok("wrote")
                .with_change(FileChange::new(path, ChangeKind::Modified))
                .into()
        }
    }

    /// Records the batches it sees and notes every changed path, half now, half held.
    struct Recorder(Arc<Mutex<Vec<BatchChanges>>>);
    impl Module for Recorder {
        fn id(&self) -> &'static str {
            "recorder"
        }
        fn tools(&self) -> Vec<ToolDef> {
            Vec::new()
        }
        fn call_tool(&mut self, _: &str, _: &Value, _: &ToolEnv) -> ToolOutcome {
            ToolResult::error("none").into()
        }
        fn on_batch(&mut self, batch: &BatchChanges, _: &ToolEnv) -> BatchResponse {
            self.0.lock().unwrap().push(batch.clone());
            let held: Vec<CallNote> = batch
                .iter()
                .map(|(i, ch)| CallNote {
                    call_index: i,
                    text: format!("held {}", ch.path),
                })
                .collect();
            BatchResponse {
                notes: vec![CallNote {
                    call_index: 0,
                    text: "now".into(),
                }],
                hold: Some(Box::new(move || held)),
            }
        }
    }

    #[test]
    fn the_batch_hook_receives_exactly_the_batch_changes() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut registry = Registry::new();
        registry.register(Box::new(Writer));
        registry.register(Box::new(Recorder(seen.clone())));
        let env = ToolEnv::new(
            Project::at("/nonexistent"),
            WorkerId::default(),
            Notifier::new(),
        );
        let calls = vec![
            ToolCall::new("a", "write", json!({"file_path": "a.rs"})),
            ToolCall::new("b", "nope", json!({})),
            ToolCall::new("c", "write", json!({"file_path": "c.rs", "slow": true})),
        ];
        let results = run_batch(&registry, &calls, &env);
        assert_eq!(results.len(), 3);
        assert_eq!(results[0].text, "wrote\n\nnow\n\nheld a.rs");
        assert!(results[1].is_error);
        assert_eq!(results[2].text, "slow\n\nheld c.rs");

        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let calls: Vec<_> = seen[0]
            .calls
            .iter()
            .map(|c| (c.call_index, c.label.clone()))
            .collect();
        assert_eq!(
            calls,
            vec![(0, "write a.rs".to_owned()), (2, "write c.rs".to_owned())]
        );
        let changes: Vec<_> = seen[0].iter().map(|(_, ch)| ch.clone()).collect();
        assert_eq!(
            changes,
            vec![
                FileChange::new("a.rs", ChangeKind::Modified),
                FileChange::new("c.rs", ChangeKind::Created)
            ]
        );
    }

    #[test]
    fn a_batch_without_changes_skips_the_hooks() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut registry = Registry::new();
        registry.register(Box::new(Recorder(seen.clone())));
        let env = ToolEnv::new(
            Project::at("/nonexistent"),
            WorkerId::default(),
            Notifier::new(),
        );
        let results = run_batch(&registry, &[ToolCall::new("a", "nope", json!({}))], &env);
        assert!(results[0].is_error);
        assert!(seen.lock().unwrap().is_empty());
    }
}
