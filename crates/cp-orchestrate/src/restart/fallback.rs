//! The handoff built for an agent that did not write one: what git and the tool history say.

use crate::handoff::{CompletedItem, CompletionStatus, Handoff, HandoffBuilder, HandoffReason};
use cp_git::{ChangedFile, FileStatus};

use super::session::ToolRecord;

/// The issue line every fallback handoff carries, so the next session knows how far to trust it.
pub(crate) const FALLBACK_NOTE: &str = "The previous session stopped at its context limit without \
submitting a handoff; this summary was built from git and its tool history. Re-read the files \
below before continuing, and do not redo finished work.";

/// Tools whose path is something read, not changed.
fn is_read_only(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with("_read") || lower.ends_with("_list") || lower.ends_with("_search")
}

/// A `threshold_critical` handoff from `agent_id`: every changed file as a partly finished
/// item, and every file changed per git or per a successful writing tool call.
pub(crate) fn fallback_handoff(
    agent_id: &str,
    changed: &[ChangedFile],
    history: &[ToolRecord],
) -> Handoff {
    let mut builder =
        HandoffBuilder::new(agent_id, HandoffReason::ThresholdCritical).add_issue(FALLBACK_NOTE);
    for file in changed {
        let what = match file.status {
            FileStatus::Added | FileStatus::Untracked => "created",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
            _ => "modified",
        };
        let edits = history
            .iter()
            .filter(|r| r.paths.iter().any(|p| p == &file.path))
            .count();
        let notes = if edits > 0 {
            format!("{what}; {edits} tool calls touched it")
        } else {
            what.to_owned()
        };
        builder = builder
            .add_completed(CompletedItem {
                file: file.path.clone(),
                status: CompletionStatus::Partial,
                tests: None,
                notes: Some(notes),
            })
            .add_file_modified(file.display_path());
    }
    for record in history
        .iter()
        .filter(|r| !r.is_error && !is_read_only(&r.name))
    {
        for path in &record.paths {
            builder = builder.add_file_modified(path.clone());
        }
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_files_and_written_paths_are_listed_reads_and_failures_are_not() {
        let changed = [ChangedFile::new("src/a.rs", FileStatus::Modified)];
        let history = [
            ToolRecord::new("File_edit", ["src/a.rs"]),
            ToolRecord::new("File_edit", ["src/a.rs"]),
            ToolRecord::new("File_read", ["src/b.rs"]),
            ToolRecord::new("File_write", ["src/c.rs"]),
            ToolRecord {
                is_error: true,
                ..ToolRecord::new("File_write", ["src/d.rs"])
            },
        ];
        let h = fallback_handoff("w", &changed, &history);
        assert_eq!(h.reason, HandoffReason::ThresholdCritical);
        assert_eq!(h.context.files_modified, ["src/a.rs", "src/c.rs"]);
        assert_eq!(h.completed[0].status, CompletionStatus::Partial);
        assert_eq!(
            h.completed[0].notes.as_deref(),
            Some("modified; 2 tool calls touched it")
        );
        assert_eq!(h.context.issues, [FALLBACK_NOTE]);
    }
}
