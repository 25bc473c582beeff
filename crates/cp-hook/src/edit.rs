//! After an agent's file edits: fire the callbacks exactly as if the edits had been Context
//! Pilot tool calls in one batch.
//!
//! The agent's calls that changed files are replayed through [`cp_base::run_batch`] as calls
//! of tools named after the agent's own (`Edit`, `write_file`, …) whose results report the
//! file changes the agent already made. Every module's batch hook then sees the same
//! [`cp_base::BatchChanges`] it would see in the TUI: one call at `PostToolUse` (an edit, or
//! what a shell command changed), every call of the batch at `PostToolBatch`, so a
//! `once_per_batch` callback runs once with every matched file of the batch. Blocking
//! callbacks hold the reply until they end, and the notes land on the calls, which the reply
//! gives the agent together.

use cp_base::{
    FileChange, Module, Registry, ToolCall, ToolDef, ToolEnv, ToolOutcome, ToolResult, run_batch,
};
use serde_json::{Value, json};

use cp_agent_cli::Reply;
use cp_host::Host;
use cp_host::{Collected, Deliveries};

/// One of the agent's tool calls that changed files: its tool and the changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEdit {
    pub tool: String,
    pub changes: Vec<FileChange>,
}

/// The agent's calls, as tools that report their changes. A call's arguments name its index
/// (`{"call": 1, …}`), since one tool may be called more than once in a batch.
struct Replay {
    names: Vec<String>,
    edits: Vec<AgentEdit>,
}

impl Module for Replay {
    fn id(&self) -> &'static str {
        "hook-replay"
    }

    fn tools(&self) -> Vec<ToolDef> {
        self.names
            .iter()
            .map(|name| {
                ToolDef::new(
                    name.clone(),
                    "The agent's own edit, replayed for the batch hook.",
                    json!({"type": "object"}),
                )
            })
            .collect()
    }

    fn call_tool(&mut self, _name: &str, args: &Value, _env: &ToolEnv) -> ToolOutcome {
        let index = args["call"].as_u64().and_then(|i| usize::try_from(i).ok());
        let changes = index
            .and_then(|i| self.edits.get(i))
            .map(|edit| edit.changes.as_slice())
            .unwrap_or_default();
        changes
            .iter()
            .fold(ToolResult::ok(""), |result, change| {
                result.with_change(change.clone())
            })
            .into()
    }
}

/// Fires callbacks for `edits` (the agent's calls that changed files: one, or a whole batch)
/// and collects what the agent should hear: the blocking results of these edits and the
/// notifications that are due.
pub fn after_edits(host: &Host, edits: Vec<AgentEdit>) -> Reply {
    let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
    let edits: Vec<AgentEdit> = edits
        .into_iter()
        .filter(|e| !e.changes.is_empty())
        .collect();
    let notes = (!edits.is_empty()).then(|| fire(host, edits)).flatten();
    let collected = deliveries.collect();
    reply(notes, &collected)
}

/// The name a replayed call of the agent's `tool` gets: its own, unless one of ours has it
/// (ours never contain ':').
fn replay_name(host: &Host, tool: &str) -> String {
    if host.registry().tool_def(tool).is_some() {
        format!("agent:{tool}")
    } else {
        tool.to_owned()
    }
}

fn fire(host: &Host, edits: Vec<AgentEdit>) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for (index, edit) in edits.iter().enumerate() {
        let name = replay_name(host, &edit.tool);
        let paths: Vec<&str> = edit.changes.iter().map(|c| c.path.as_str()).collect();
        let args = match paths.as_slice() {
            [one] => json!({"call": index, "file_path": one}),
            many => json!({"call": index, "file_paths": many}),
        };
        calls.push(ToolCall::new(
            format!("hook-{}", index + 1),
            name.clone(),
            args,
        ));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut registry: Registry = host.registry().clone();
    if let Err(e) = registry.register(Box::new(Replay { names, edits })) {
        tracing::error!("cannot replay the agent's edits: {e}");
        return None;
    }
    let texts: Vec<String> = run_batch(&registry, &calls, host.env())
        .into_iter()
        .map(|result| result.text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

fn reply(notes: Option<String>, collected: &Collected) -> Reply {
    let text: Vec<String> = notes.into_iter().chain(collected.text()).collect();
    if text.is_empty() {
        Reply::Nothing
    } else if collected.failed {
        Reply::Block(text.join("\n\n"))
    } else {
        Reply::Context(text.join("\n\n"))
    }
}
