//! Markdown rendering of a handoff, injected into the next session's prompt.

use std::fmt::Write;

use super::model::{CompletionStatus, Handoff, Priority, TestStatus};
use cp_git::{ListedFile, write_bounded};

impl Handoff {
    /// Renders the handoff as markdown for the next session's prompt.
    ///
    /// Remaining items come first after the header because they are what the next session
    /// acts on; empty sections are left out so they cost no context.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## Handoff from `{}` ({}, {})",
            self.agent_id,
            self.reason.as_str(),
            self.created_at
        );

        if !self.remaining.is_empty() {
            out.push_str("\n### Remaining work\n");
            // Stable sort: high first, then normal (or unset), then low; ties keep their order.
            let mut remaining: Vec<_> = self.remaining.iter().collect();
            remaining.sort_by_key(|r| match r.priority {
                Some(Priority::High) => 0,
                Some(Priority::Normal) | None => 1,
                Some(Priority::Low) => 2,
            });
            for item in remaining {
                let priority = match item.priority {
                    Some(Priority::High) => "high",
                    Some(Priority::Normal) | None => "normal",
                    Some(Priority::Low) => "low",
                };
                let _ = write!(out, "- [{priority}] `{}`: {}", item.file, item.description);
                if let Some(reference) = &item.reference_pattern {
                    let _ = write!(out, " (follow `{reference}`)");
                }
                out.push('\n');
            }
        }

        if !self.completed.is_empty() {
            out.push_str("\n### Completed\n");
            for item in &self.completed {
                let status = match item.status {
                    CompletionStatus::Done => "done",
                    CompletionStatus::Partial => "partial",
                };
                let _ = write!(out, "- `{}`: {status}", item.file);
                match item.tests {
                    Some(TestStatus::Passed) => out.push_str(", tests passed"),
                    Some(TestStatus::Skipped) => out.push_str(", tests skipped"),
                    Some(TestStatus::Failed) => out.push_str(", tests FAILED"),
                    None => {}
                }
                if let Some(notes) = &item.notes {
                    let _ = write!(out, ": {notes}");
                }
                out.push('\n');
            }
        }

        section(&mut out, "Decisions", &self.context.decisions);
        section(&mut out, "Patterns to follow", &self.context.patterns);
        section(&mut out, "Issues", &self.context.issues);
        if !self.context.files_modified.is_empty() {
            out.push_str("\n### Files modified\n");
            let files: Vec<ListedFile> = self
                .context
                .files_modified
                .iter()
                .map(|file| ListedFile {
                    path: file.clone(),
                    kind: "modified",
                    line: format!("- `{file}`"),
                })
                .collect();
            write_bounded(&mut out, &files, "");
        }
        out
    }
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### {title}");
    for line in lines {
        let _ = writeln!(out, "- {line}");
    }
}

#[cfg(test)]
mod tests {
    use crate::handoff::{
        CompletedItem, CompletionStatus, Handoff, HandoffContext, HandoffReason, Priority,
        RemainingItem, TestStatus,
    };

    fn handoff() -> Handoff {
        Handoff {
            completed: vec![
                CompletedItem {
                    file: "src/a.rs".into(),
                    status: CompletionStatus::Done,
                    tests: Some(TestStatus::Passed),
                    notes: Some("parser done".into()),
                },
                CompletedItem {
                    file: "src/c.rs".into(),
                    status: CompletionStatus::Partial,
                    tests: Some(TestStatus::Failed),
                    notes: None,
                },
            ],
            remaining: vec![
                RemainingItem {
                    file: "src/low.rs".into(),
                    description: "tidy".into(),
                    reference_pattern: None,
                    priority: Some(Priority::Low),
                },
                RemainingItem {
                    file: "src/b.rs".into(),
                    description: "add the writer".into(),
                    reference_pattern: Some("src/a.rs:15-30".into()),
                    priority: Some(Priority::High),
                },
            ],
            context: HandoffContext {
                decisions: vec!["use thiserror".into()],
                patterns: vec!["one file one job".into()],
                issues: vec![],
                files_modified: vec!["src/a.rs".into(), "src/c.rs".into()],
            },
            created_at: "2025-01-31T12:00:00.000Z".into(),
            agent_id: "w1".into(),
            reason: HandoffReason::ThresholdCritical,
        }
    }

    #[test]
    fn markdown_renders_every_filled_section() {
        let md = handoff().to_markdown();
        let expected = "\
## Handoff from `w1` (threshold_critical, 2025-01-31T12:00:00.000Z)

### Remaining work
- [high] `src/b.rs`: add the writer (follow `src/a.rs:15-30`)
- [low] `src/low.rs`: tidy

### Completed
- `src/a.rs`: done, tests passed: parser done
- `src/c.rs`: partial, tests FAILED

### Decisions
- use thiserror

### Patterns to follow
- one file one job

### Files modified
- `src/a.rs`
- `src/c.rs`
";
        assert_eq!(md, expected);
    }

    #[test]
    fn markdown_shows_issues_only_when_present() {
        let mut h = handoff();
        assert!(!h.to_markdown().contains("### Issues"));
        h.context.issues.push("CI is slow".into());
        assert!(h.to_markdown().contains("### Issues\n- CI is slow\n"));
    }

    #[test]
    fn thousands_of_modified_files_are_listed_as_fifty_and_counted() {
        let mut h = handoff();
        h.context.files_modified = (0..2000).map(|i| format!("notes/n{i}.md")).collect();
        let md = h.to_markdown();
        let listed = md.lines().filter(|l| l.starts_with("- `notes/")).count();
        assert_eq!(listed, 50, "{md}");
        assert!(md.contains("… and 1,950 more, by directory:\n  notes/: 1,950 modified\n"));
    }
}
