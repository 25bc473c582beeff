//! The gate's scope as the agent reads it: what the session committed since it began, what it
//! has not committed, and what git lists that is not this repository's change (nested
//! repositories, worktrees, submodules with only untracked files inside), named for what they
//! are so no one is asked to commit them.

use std::fmt::Write;

use super::categorize::CategorizedFile;
use super::report::StopReport;
use cp_git::{ChangedFile, LISTED_FILES, ListedFile, write_bounded};

/// Entries of the "not counted" line before the rest are counted.
const OUTSIDE_SHOWN: usize = 10;

/// The files of the session's work: `Changed files (n):` when nothing was committed;
/// otherwise `Committed in this session, since 1a2b3c4 (n):` and `Not committed (m):`. Then the
/// entries that are not this repository's, when there are any.
pub(crate) fn scope(out: &mut String, report: &StopReport) {
    if report.committed.is_empty() && report.scope_note.is_none() {
        files(out, "Changed files", &report.files);
    } else {
        let since = report
            .since
            .as_deref()
            .map(|commit| format!(", since {}", &commit[..commit.len().min(7)]))
            .unwrap_or_default();
        let heading = format!("Committed in this session{since}");
        files(out, &heading, &report.committed);
        if let Some(note) = &report.scope_note {
            let _ = writeln!(out, "  ({note})");
        }
        if !report.files.is_empty() {
            files(out, "Not committed", &report.files);
        }
    }
    outside(out, &report.outside);
}

/// `heading (n):` and one line per file with its change in words and categories, at most
/// [`LISTED_FILES`](cp_git::LISTED_FILES) of them and the rest counted by directory.
fn files(out: &mut String, heading: &str, files: &[CategorizedFile]) {
    let _ = writeln!(out, "{heading} ({}):", files.len());
    let listed: Vec<ListedFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            // Only the first files get a line of their own; the rest are counted.
            let mut line = String::new();
            if i < LISTED_FILES {
                line = f.file.describe();
                if !f.categories.is_empty() {
                    let _ = write!(line, "  [{}]", f.categories.join(", "));
                }
            }
            ListedFile {
                path: f.file.path.clone(),
                kind: f.file.word(),
                line,
            }
        })
        .collect();
    write_bounded(out, &listed, "  ");
}

/// `Not counted (not this repository's files): vendor/ (nested repository), …`.
fn outside(out: &mut String, entries: &[ChangedFile]) {
    if entries.is_empty() {
        return;
    }
    let shown: Vec<String> = entries
        .iter()
        .take(OUTSIDE_SHOWN)
        .map(|entry| match entry.kind {
            cp_git::EntryKind::Submodule(_) => entry.describe(),
            _ => format!("{} ({})", entry.display_path(), entry.word()),
        })
        .collect();
    let more = entries.len().saturating_sub(OUTSIDE_SHOWN);
    let _ = write!(
        out,
        "Not counted (not this repository's own files; nothing to commit here): {}",
        shown.join(", ")
    );
    if more > 0 {
        let _ = write!(out, ", and {more} more");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_git::{EntryKind, FileStatus, SubmoduleChange};

    fn categorized(path: &str, status: FileStatus) -> CategorizedFile {
        CategorizedFile {
            file: ChangedFile::new(path, status),
            categories: vec!["code".into()],
            gated: true,
            code: true,
            triggers_tests: true,
        }
    }

    #[test]
    fn committed_and_uncommitted_are_listed_apart_and_outside_entries_named() {
        let mut report = StopReport::new(super::super::StopPhase::First);
        report.files = vec![categorized("src/b.py", FileStatus::Modified)];
        let mut out = String::new();
        scope(&mut out, &report);
        assert_eq!(out, "Changed files (1):\n  modified src/b.py  [code]\n");

        report.committed = vec![categorized("src/a.py", FileStatus::Added)];
        report.since = Some("0123456789abcdef".into());
        report.outside = vec![
            ChangedFile {
                kind: EntryKind::NestedRepository,
                ..ChangedFile::new("vendor", FileStatus::Untracked)
            },
            ChangedFile {
                kind: EntryKind::Submodule(SubmoduleChange {
                    untracked_content: true,
                    ..SubmoduleChange::default()
                }),
                ..ChangedFile::new("sub", FileStatus::Modified)
            },
        ];
        let mut out = String::new();
        scope(&mut out, &report);
        assert_eq!(
            out,
            "Committed in this session, since 0123456 (1):\n  new src/a.py  [code]\n\
             Not committed (1):\n  modified src/b.py  [code]\n\
             Not counted (not this repository's own files; nothing to commit here): vendor/ \
             (nested repository), submodule sub (untracked files inside)\n"
        );
    }
}
