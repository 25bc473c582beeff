//! Run results and the text the agent reads about them.

use std::time::Duration;

use uuid::Uuid;

use crate::model::CallbackId;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Exit status 0.
    Passed,
    /// Anything else the script did by itself: a non-zero exit, a signal, a lost server.
    Failed { status: String },
    /// Ran past its timeout; the whole process group was killed.
    TimedOut { after_secs: u64 },
    /// Never started (the console server could not be reached, the cwd vanished, …).
    NotStarted { reason: String },
    /// The person cancelled the turn (Esc) while the batch waited; the whole process group
    /// was killed.
    Cancelled,
}

/// Everything about one finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// `CP_RUN_ID`.
    pub run_id: Uuid,
    /// The console that ran it.
    pub console: Option<Uuid>,
    pub callback: CallbackId,
    pub name: String,
    pub outcome: RunOutcome,
    pub elapsed: Duration,
    /// The last lines of output, as a terminal shows them.
    pub tail: String,
    /// Files given to the run.
    pub files: Vec<String>,
    /// Files among `files` that changed on disk while the script ran (a formatter).
    pub modified: Vec<String>,
    /// Labels of the edits that triggered it, e.g. `File_edit src/a.rs`.
    pub triggers: Vec<String>,
    pub success_message: Option<String>,
    /// Id of the panel that shows its output.
    pub panel_id: String,
}

/// Lines of output shown in a failure note.
pub const NOTE_TAIL_LINES: usize = 5;

impl RunReport {
    pub fn passed(&self) -> bool {
        self.outcome == RunOutcome::Passed
    }

    fn tail_block(&self) -> String {
        let lines: Vec<&str> = self.tail.lines().collect();
        let start = lines.len().saturating_sub(NOTE_TAIL_LINES);
        let shown = lines[start..].join("\n");
        if shown.trim().is_empty() {
            "(no output)".to_owned()
        } else {
            format!("```\n{shown}\n```")
        }
    }

    fn triggered_by(&self) -> String {
        match self.triggers.as_slice() {
            [] => String::new(),
            [one] => format!(", triggered by {one}"),
            many => format!(", triggered by {}", many.join(" and ")),
        }
    }

    fn modified_line(&self) -> Option<String> {
        (!self.modified.is_empty()).then(|| {
            format!(
                "Callback '{}' modified {}; re-read {} before editing again.",
                self.name,
                self.modified.join(", "),
                if self.modified.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            )
        })
    }

    /// The result text: a line on success, the tail and the panel on failure.
    pub fn note(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        let mut text = match &self.outcome {
            RunOutcome::Passed => {
                let head = match &self.success_message {
                    Some(m) => format!(
                        "Callback '{}' passed: {m} (run {}, {secs:.1}s)",
                        self.name, self.run_id
                    ),
                    None => format!(
                        "Callback '{}' passed (run {}, {secs:.1}s)",
                        self.name, self.run_id
                    ),
                };
                // Warnings of a passing build still matter to the agent: show the tail too.
                if self.tail.trim().is_empty() {
                    head
                } else {
                    format!("{head}. Last lines of output:\n{}", self.tail_block())
                }
            }
            RunOutcome::Failed { status } => format!(
                "Callback '{}' FAILED ({status}) after {secs:.1}s{} (run {}). Last lines of output:\n{}\nFull output: panel `{}` (opened). The edit itself was applied.",
                self.name,
                self.triggered_by(),
                self.run_id,
                self.tail_block(),
                self.panel_id
            ),
            RunOutcome::TimedOut { after_secs } => format!(
                "Callback '{}' TIMED OUT after {after_secs}s and its process group was killed{} (run {}). Last lines of output:\n{}\nFull output: panel `{}` (opened). The edit itself was applied.",
                self.name,
                self.triggered_by(),
                self.run_id,
                self.tail_block(),
                self.panel_id
            ),
            RunOutcome::NotStarted { reason } => format!(
                "Callback '{}' could not start{} (run {}): {reason}. The edit itself was applied.",
                self.name,
                self.triggered_by(),
                self.run_id
            ),
            RunOutcome::Cancelled => format!(
                "Callback '{}' CANCELLED by the user after {secs:.1}s and its process group was killed{} (run {}). Last lines of output:\n{}\nThe edit itself was applied; the check did not finish.",
                self.name,
                self.triggered_by(),
                self.run_id,
                self.tail_block()
            ),
        };
        if let Some(line) = self.modified_line() {
            text.push('\n');
            text.push_str(&line);
        }
        if let Some(line) = self.unlisted_line() {
            text.push('\n');
            text.push_str(&line);
        }
        text
    }

    /// Says which file names were left out of `CP_CHANGED_FILES` (they hold a newline).
    fn unlisted_line(&self) -> Option<String> {
        let unlisted: Vec<String> = crate::env::unlisted(&self.files)
            .map(|f| format!("`{}`", f.escape_debug()))
            .collect();
        (!unlisted.is_empty()).then(|| {
            format!(
                "Left out of CP_CHANGED_FILES because the name holds a newline (the file named by CP_CHANGED_FILES0 lists every file, NUL-separated): {}.",
                unlisted.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(outcome: RunOutcome) -> RunReport {
        RunReport {
            run_id: Uuid::nil(),
            console: None,
            callback: CallbackId(1),
            name: "check".into(),
            outcome,
            elapsed: Duration::from_millis(1500),
            tail: "1\n2\n3\n4\n5\n6\n7".into(),
            files: vec!["a.rs".into()],
            modified: vec![],
            triggers: vec!["File_edit a.rs".into()],
            success_message: Some("all good".into()),
            panel_id: "callback-run:x".into(),
        }
    }

    #[test]
    fn success_is_one_line_with_the_message_and_run_id() {
        let mut quiet = report(RunOutcome::Passed);
        quiet.tail = String::new();
        assert_eq!(
            quiet.note(),
            "Callback 'check' passed: all good (run 00000000-0000-0000-0000-000000000000, 1.5s)"
        );
    }

    #[test]
    fn success_with_output_shows_its_last_lines() {
        let n = report(RunOutcome::Passed).note();
        assert!(n.starts_with("Callback 'check' passed: all good"), "{n}");
        assert!(n.contains("```\n3\n4\n5\n6\n7\n```"), "{n}");
    }

    #[test]
    fn failure_names_the_edit_and_shows_five_lines_and_the_panel() {
        let n = report(RunOutcome::Failed {
            status: "exited with code 2".into(),
        })
        .note();
        assert!(n.contains("FAILED (exited with code 2)"), "{n}");
        assert!(n.contains("triggered by File_edit a.rs"), "{n}");
        assert!(n.contains("```\n3\n4\n5\n6\n7\n```"), "{n}");
        assert!(!n.contains("\n2\n"), "{n}");
        assert!(n.contains("panel `callback-run:x`"), "{n}");
    }

    #[test]
    fn a_cancelled_run_says_so_and_names_the_edit() {
        let n = report(RunOutcome::Cancelled).note();
        assert!(
            n.starts_with("Callback 'check' CANCELLED by the user after 1.5s"),
            "{n}"
        );
        assert!(n.contains("process group was killed"), "{n}");
        assert!(n.contains("triggered by File_edit a.rs"), "{n}");
        assert!(!report(RunOutcome::Cancelled).passed());
    }

    #[test]
    fn a_formatter_tells_the_agent_to_re_read() {
        let mut r = report(RunOutcome::Passed);
        r.modified = vec!["src/a.rs".into()];
        assert!(
            r.note()
                .ends_with("Callback 'check' modified src/a.rs; re-read it before editing again.")
        );
    }

    #[test]
    fn a_name_with_a_newline_is_reported_as_left_out() {
        let mut r = report(RunOutcome::Passed);
        r.files = vec!["a.rs".into(), "x\n/etc/passwd".into()];
        let n = r.note();
        assert!(
            n.contains("Left out of CP_CHANGED_FILES") && n.contains("`x\\n/etc/passwd`"),
            "{n}"
        );
    }
}
