//! After an agent's file edits: fire the callbacks exactly as if the edits had been Context
//! Pilot tool calls in one batch.
//!
//! The agent's calls that changed files become one [`cp_base::BatchChanges`], a call each, and
//! go to [`Host::react_to_changes`]: every module's batch hook sees what it would see in the
//! TUI. One call at `PostToolUse` (an edit, or what a shell command changed), every call of the
//! batch at `PostToolBatch`, so a `once_per_batch` callback runs once with every matched file
//! of the batch. Blocking callbacks hold the reply until they end, and the notes land on the
//! calls, which the reply gives the agent together.

use cp_base::{BatchChanges, CallChanges, CallNote, FileChange};

use cp_agent_cli::Reply;
use cp_host::Host;
use cp_host::{Collected, Deliveries};

/// One of the agent's tool calls that changed files: its tool and the changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEdit {
    pub tool: String,
    pub changes: Vec<FileChange>,
}

impl AgentEdit {
    /// What messages call this edit: the agent's tool and its file, e.g. `Edit src/a.rs`, or
    /// the tool alone when the call changed several files (a shell command, a patch).
    fn label(&self) -> String {
        match self.changes.as_slice() {
            [one] => format!("{} {}", self.tool, one.path),
            _ => self.tool.clone(),
        }
    }
}

/// What the callbacks of some edits did.
pub struct AfterEdits {
    /// What the agent should hear.
    pub reply: Reply,
    /// Whether a module answered with notes (a blocking callback ran to its end and may have
    /// written files): when not, the work tree holds nothing but the edits themselves.
    pub noted: bool,
}

/// Fires callbacks for `edits` (the agent's calls that changed files: one, or a whole batch)
/// and collects what the agent should hear: the blocking results of these edits and the
/// notifications that are due.
pub fn after_edits(host: &Host, edits: Vec<AgentEdit>) -> AfterEdits {
    let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
    let edits: Vec<AgentEdit> = edits
        .into_iter()
        .filter(|e| !e.changes.is_empty())
        .collect();
    let (any_note, notes) = if edits.is_empty() {
        (false, None)
    } else {
        fire(host, edits)
    };
    let collected = deliveries.collect();
    AfterEdits {
        reply: reply(notes, &collected),
        noted: any_note,
    }
}

/// Whether any note came back, and the notes' text.
fn fire(host: &Host, edits: Vec<AgentEdit>) -> (bool, Option<String>) {
    let batch = BatchChanges {
        calls: edits
            .into_iter()
            .enumerate()
            .map(|(call_index, edit)| CallChanges {
                call_index,
                label: edit.label(),
                tool: edit.tool,
                changes: edit.changes,
            })
            .collect(),
    };
    let mut notes: Vec<CallNote> = host.react_to_changes(&batch);
    let any_note = !notes.is_empty();
    // The notes of one call stay together, in the order of the calls.
    notes.sort_by_key(|note| note.call_index);
    let texts: Vec<String> = notes
        .into_iter()
        .map(|note| note.text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect();
    (any_note, (!texts.is_empty()).then(|| texts.join("\n\n")))
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
