//! The prompt of a restarted session: the handoff and what changed, then the original task.

use std::fmt::Write;

use crate::handoff::Handoff;
use cp_git::{ChangedFile, ListedFile, write_bounded};

use super::estimator::RestartTrigger;
use super::session::ToolRecord;

/// How many of the last tool calls the restart prompt lists.
pub const PROGRESS_LINES: usize = 20;

/// Facts about the stop that the restart prompt reports besides the handoff.
#[derive(Debug, Clone, Default)]
pub struct RestartContext {
    /// The phase.
    pub phase_id: String,
    /// Which restart this is (1 for the first).
    pub restart: u32,
    /// The configured maximum.
    pub max_restarts: u32,
    /// The threshold that stopped the session; `None` when stopped by hand.
    pub trigger: Option<RestartTrigger>,
    /// Uncommitted changes at the stop (before the auto-commit).
    pub changed_files: Vec<ChangedFile>,
    /// The commit made before the restart, if any.
    pub commit: Option<String>,
    /// The stopped session's tool calls.
    pub history: Vec<ToolRecord>,
}

/// Composes the restarted session's prompt: a header, the handoff as markdown, the changed
/// files, the latest tool calls, and then `original` unchanged.
pub fn restart_prompt(handoff: &Handoff, context: &RestartContext, original: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Continuing phase `{}` (restart {} of at most {})\n",
        context.phase_id, context.restart, context.max_restarts
    );
    let why = context.trigger.map_or_else(
        || "it was stopped by hand".to_owned(),
        |t| format!("it reached its limit: {t}"),
    );
    let _ = write!(
        out,
        "A previous session already worked on this task and ended because {why}. "
    );
    match &context.commit {
        Some(commit) => {
            let short = commit.get(..12).unwrap_or(commit);
            let _ = write!(out, "Its work is committed as {short}. ");
        }
        None => out.push_str("Its work is in the files as it left them. "),
    }
    out.push_str(
        "Continue from where it stopped: do not redo completed work, and read a file before you \
         change it.\n\n",
    );
    out.push_str(&handoff.to_markdown());
    if !context.changed_files.is_empty() {
        out.push_str("\n### Files changed by the previous session\n");
        let files: Vec<ListedFile> = context
            .changed_files
            .iter()
            .map(|file| ListedFile {
                path: file.path.clone(),
                kind: file.status.word(),
                line: format!("- {} `{}`", file.status.code(), file.display_path()),
            })
            .collect();
        write_bounded(&mut out, &files, "");
    }
    if !context.history.is_empty() {
        let _ = write!(
            out,
            "\n### Progress of the previous session\n{} tool calls",
            context.history.len()
        );
        let skipped = context.history.len().saturating_sub(PROGRESS_LINES);
        if skipped > 0 {
            let _ = write!(out, "; the last {PROGRESS_LINES}");
        }
        out.push_str(":\n");
        for record in &context.history[skipped..] {
            out.push_str(&record.list_item());
            out.push('\n');
        }
    }
    out.push_str("\n---\n\n## The original task\n\n");
    out.push_str(original);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::{HandoffBuilder, HandoffReason};
    use cp_git::FileStatus;

    #[test]
    fn handoff_comes_before_the_original_prompt_and_history_is_capped() {
        let handoff = HandoffBuilder::new("w", HandoffReason::ThresholdCritical)
            .add_decision("keep the parser pure")
            .build();
        let history: Vec<ToolRecord> = (0..25)
            .map(|i| ToolRecord::new("File_edit", [format!("f{i}.rs")]))
            .collect();
        let ctx = RestartContext {
            phase_id: "impl".into(),
            restart: 2,
            max_restarts: 3,
            trigger: Some(RestartTrigger::ToolCalls {
                calls: 25,
                threshold: 25,
            }),
            changed_files: vec![ChangedFile::new("f1.rs", FileStatus::Modified)],
            commit: Some("0123456789abcdef0123".into()),
            history,
        };
        let p = restart_prompt(&handoff, &ctx, "Write the parser.");
        assert!(p.starts_with("# Continuing phase `impl` (restart 2 of at most 3)"));
        assert!(p.contains("25 tool calls (threshold 25)"), "{p}");
        assert!(p.contains("committed as 0123456789ab"), "{p}");
        let decision = p.find("keep the parser pure").unwrap();
        let original = p.find("Write the parser.").unwrap();
        assert!(decision < original);
        assert!(p.ends_with("Write the parser."));
        assert!(p.contains("- M `f1.rs`"), "{p}");
        assert!(p.contains("25 tool calls; the last 20:"), "{p}");
        assert!(!p.contains("`f4.rs`") && p.contains("`f5.rs`"), "{p}");
    }
}
