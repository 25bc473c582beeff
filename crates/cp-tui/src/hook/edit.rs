//! After an agent's file edit (or a shell command that changed files): fire the callbacks exactly as if the edit had been a
//! Context Pilot tool call in a batch of one.
//!
//! The edit is replayed through [`cp_base::run_batch`] as a call of a tool named after the
//! agent's own (`Edit`, `write_file`, …) whose result reports the file change the agent already
//! made. Every module's batch hook then sees the same [`cp_base::BatchChanges`] it would see in
//! the TUI, blocking callbacks hold the reply until they end, and the notes land on that call.

use cp_base::{
    FileChange, Module, Registry, ToolCall, ToolDef, ToolEnv, ToolOutcome, ToolResult, run_batch,
};
use serde_json::{Value, json};

use super::outbox::{Collected, Deliveries};
use crate::host::Host;
use cp_agent_cli::Reply;

/// The agent's edit, as a tool that reports its changes.
struct Replay {
    tool: String,
    changes: Vec<FileChange>,
}

impl Module for Replay {
    fn id(&self) -> &'static str {
        "hook-replay"
    }

    fn tools(&self) -> Vec<ToolDef> {
        vec![ToolDef::new(
            self.tool.clone(),
            "The agent's own edit, replayed for the batch hook.",
            json!({"type": "object"}),
        )]
    }

    fn call_tool(&mut self, _name: &str, _args: &Value, _env: &ToolEnv) -> ToolOutcome {
        self.changes
            .iter()
            .fold(ToolResult::ok(""), |result, change| {
                result.with_change(change.clone())
            })
            .into()
    }
}

/// Fires callbacks for `changes` (made by the agent's tool `tool`: an edit tool's files, or
/// what a shell command changed) and collects what the agent should hear: the blocking
/// results of this edit and the notifications that are due.
pub fn after_edit(host: &Host, tool: &str, changes: Vec<FileChange>) -> Reply {
    let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
    let notes = (!changes.is_empty())
        .then(|| fire(host, tool, changes))
        .flatten();
    let collected = deliveries.collect();
    reply(notes, &collected)
}

fn fire(host: &Host, tool: &str, changes: Vec<FileChange>) -> Option<String> {
    // An agent tool named like one of ours would clash in the registry: use a name that
    // cannot (ours never contain ':').
    let name = if host.registry().tool_def(tool).is_some() {
        format!("agent:{tool}")
    } else {
        tool.to_owned()
    };
    let paths: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    let mut registry: Registry = host.registry().clone();
    if let Err(e) = registry.register(Box::new(Replay {
        tool: name.clone(),
        changes,
    })) {
        tracing::error!("cannot replay the edit of {}: {e}", paths.join(", "));
        return None;
    }
    let args = match paths.as_slice() {
        [one] => json!({"file_path": one}),
        many => json!({"file_paths": many}),
    };
    let call = ToolCall::new("hook-1", name, args);
    let result = run_batch(&registry, &[call], host.env())
        .into_iter()
        .next()?;
    let text = result.text.trim();
    (!text.is_empty()).then(|| text.to_owned())
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
