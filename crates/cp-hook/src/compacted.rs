//! After the agent compacted its context (`SessionStart` with source `compact`, in Claude
//! Code and Codex CLI): put back what the summary may have lost.
//!
//! The agent keeps a summary of its conversation, and the structured handoff it submitted
//! with `Checkpoint_handoff` is exactly what such a summary drops first. The reply gives the
//! model, in the first request after the compaction, the latest handoff of the project
//! (`.context-pilot/handoffs/`) and what the stop gate left open at its last run for this
//! worker: failing tests, gated files not committed, the limit reached. With neither, it says
//! nothing.

use std::fmt::Write as _;

use cp_mod_checkpoint::{StopGate, StopReport};
use cp_orchestrate::HandoffStore;

use cp_agent_cli::Reply;
use cp_host::Host;

/// Lines of a failing test run's output given again.
const TAIL_LINES: usize = 10;

/// The context to put back after a compaction.
pub fn after_compaction(host: &Host) -> Reply {
    let project = host.project();
    let handoff = match HandoffStore::new(project).latest() {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("after compaction: cannot read the latest handoff: {e}");
            None
        }
    };
    let open = StopGate::last_report(project, host.worker())
        .map(|report| open_items(&report))
        .filter(|items| !items.is_empty());
    if handoff.is_none() && open.is_none() {
        return Reply::Nothing;
    }
    let mut text = String::from(
        "Context Pilot: your context was just compacted. What the summary may have lost is \
         below; carry on from it.\n",
    );
    if let Some((path, handoff)) = handoff {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = write!(
            text,
            "\nThe latest handoff (.context-pilot/handoffs/{name}):\n\n{}",
            handoff.to_markdown()
        );
    }
    if let Some(open) = open {
        let _ = write!(text, "\nThe stop gate's open items:\n{open}");
    }
    Reply::Context(text)
}

/// What the stop gate's last run left open, one `- ` line each (empty: nothing).
fn open_items(report: &StopReport) -> String {
    let mut out = String::new();
    if !report.tests_reused {
        for run in report.tests.iter().filter(|run| !run.passed) {
            let project = run
                .project
                .as_deref()
                .map(|p| format!(" (in {p})"))
                .unwrap_or_default();
            let _ = writeln!(out, "- tests failing: `{}`{project}", run.command);
            let tail = &run.tail[run.tail.len().saturating_sub(TAIL_LINES)..];
            for line in tail {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    if !report.uncommitted_gated.is_empty() {
        let _ = writeln!(
            out,
            "- not committed yet: {}",
            report.uncommitted_gated.join(", ")
        );
    }
    if let Some(left) = &report.gave_up {
        let _ = writeln!(out, "- left when the stop gate's limit was reached: {left}");
    }
    out
}
