//! Notifications on their way to the agent: the host's queue, and an outbox on disk for
//! what a short-lived process could not deliver.
//!
//! A hook process lives for one event, and an MCP server ends when its client does. Whatever
//! background work reported after the reply went out is kept in the worker's outbox
//! (`.context-pilot/state/<worker>/notices.json`) and handed to the agent by the next hook
//! call or MCP tool call of that worker.

use std::fmt::Write as _;

use cp_base::{JsonFile, Level, Notice, Notification, Notifier, Project, StoreError, WorkerId};
use serde_json::Value;

/// File name of the outbox under `.context-pilot/state/<worker>/`.
pub const OUTBOX_FILE: &str = "notices.json";
const KEY: &str = "undelivered";

/// The persisted notifications of one worker, in arrival order.
#[derive(Debug)]
pub struct Outbox {
    file: JsonFile,
}

impl Outbox {
    pub fn new(project: &Project, worker: &WorkerId) -> Self {
        Self {
            file: JsonFile::new(project.state_dir(worker).join(OUTBOX_FILE)),
        }
    }

    /// Appends `notes` (nothing is written for none).
    pub fn push(&self, notes: &[Notification]) -> Result<(), StoreError> {
        if notes.is_empty() {
            return Ok(());
        }
        self.file
            .update(|doc| {
                let mut all = read_notes(doc.get(KEY));
                all.extend(notes.iter().cloned());
                doc.insert(KEY.to_owned(), serde_json::to_value(all)?);
                Ok::<(), serde_json::Error>(())
            })?
            .map_err(|e| StoreError::InvalidSection {
                path: self.file.path().to_path_buf(),
                key: KEY.to_owned(),
                message: e.to_string(),
            })
    }

    /// Removes and returns everything in the outbox.
    pub fn take(&self) -> Result<Vec<Notification>, StoreError> {
        if self.file.stamp().is_none() {
            return Ok(Vec::new());
        }
        let taken = self.file.update(|doc| {
            let notes = read_notes(doc.get(KEY));
            doc.remove(KEY);
            Ok::<_, std::convert::Infallible>(notes)
        })?;
        Ok(taken.unwrap_or_else(|never| match never {}))
    }
}

/// Entries that do not parse (written by a newer version, or by hand) are skipped, not fatal:
/// a notification is advice, and the rest must still get through.
fn read_notes(value: Option<&Value>) -> Vec<Notification> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| serde_json::from_value(v.clone()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// What was collected for the agent: notifications, and whether any of them is a failure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    pub notes: Vec<Notification>,
    /// Something failed (a failed callback opened its panel, or an error was reported).
    pub failed: bool,
}

impl Collected {
    /// The notifications as one paragraph for the agent, if there are any.
    pub fn text(&self) -> Option<String> {
        render(&self.notes)
    }
}

/// The host's notifier together with the worker's outbox.
#[derive(Debug)]
pub struct Deliveries {
    notifier: Notifier,
    outbox: Outbox,
}

impl Deliveries {
    pub fn new(project: &Project, worker: &WorkerId, notifier: &Notifier) -> Self {
        Self {
            notifier: notifier.clone(),
            outbox: Outbox::new(project, worker),
        }
    }

    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Takes the outbox (older first) and everything queued on the notifier.
    pub fn collect(&self) -> Collected {
        let mut collected = Collected {
            notes: self.outbox.take().unwrap_or_else(|e| {
                tracing::warn!("notification outbox not read: {e}");
                Vec::new()
            }),
            failed: false,
        };
        collected.failed = collected.notes.iter().any(|n| n.level == Level::Error);
        let drained = self.notifier.drain();
        tracing::debug!(
            outbox = collected.notes.len(),
            queued = drained.len(),
            "notifications collected"
        );
        for notice in drained {
            match notice {
                Notice::Notify(note) => {
                    collected.failed |= note.level == Level::Error;
                    collected.notes.push(note);
                }
                // A failed callback run asks for its panel: the failure itself is in the
                // tool result (blocking) or in a notification (background).
                Notice::OpenPanel(_) => collected.failed = true,
                Notice::Refresh => {}
            }
        }
        collected
    }

    /// [`Deliveries::collect`] as text for a tool result.
    pub fn collect_text(&self) -> Option<String> {
        self.collect().text()
    }

    /// Moves what is queued on the notifier to the outbox, for the next call.
    pub fn keep_undelivered(&self) {
        let notes: Vec<Notification> = self
            .notifier
            .drain()
            .into_iter()
            .filter_map(|n| match n {
                Notice::Notify(note) => Some(note),
                Notice::OpenPanel(_) | Notice::Refresh => None,
            })
            .collect();
        if !notes.is_empty() {
            tracing::debug!(
                notes = notes.len(),
                "undelivered notifications kept in the outbox"
            );
        }
        self.keep(&notes);
    }

    /// Puts `notes` back for the next call.
    pub fn keep(&self, notes: &[Notification]) {
        if let Err(e) = self.outbox.push(notes) {
            tracing::error!("{} notification(s) not kept: {e}", notes.len());
        }
    }
}

/// Renders notifications for the agent, oldest first.
pub fn render(notes: &[Notification]) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let mut text = String::from("Background results since your last tool call:");
    for note in notes {
        let level = match note.level {
            Level::Info => "info",
            Level::Success => "ok",
            Level::Warning => "warning",
            Level::Error => "FAILED",
        };
        let _ = write!(text, "\n- [{} {level}] {}", note.source, note.text);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outbox_keeps_notes_across_processes_until_taken() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let worker = WorkerId::default();
        let first = Outbox::new(&project, &worker);
        first
            .push(&[Notification::new("callback", Level::Success, "lint passed")])
            .unwrap();
        first
            .push(&[Notification::new("callback", Level::Error, "tests FAILED")])
            .unwrap();
        // Another process of the same worker sees both, in order, once.
        let second = Deliveries::new(&project, &worker, &Notifier::new());
        let got = second.collect();
        assert!(got.failed);
        let texts: Vec<_> = got.notes.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, ["lint passed", "tests FAILED"]);
        assert!(second.collect().notes.is_empty());
        // Another worker has its own outbox.
        let other = WorkerId::new("agent-2").unwrap();
        Outbox::new(&project, &other)
            .push(&[Notification::new("x", Level::Info, "hi")])
            .unwrap();
        assert!(Outbox::new(&project, &worker).take().unwrap().is_empty());
    }

    #[test]
    fn an_open_panel_request_marks_a_failure_and_undelivered_notes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let notifier = Notifier::new();
        let deliveries = Deliveries::new(&project, &WorkerId::default(), &notifier);
        notifier.open_panel("callback-run:1");
        let got = deliveries.collect();
        assert!(got.failed && got.notes.is_empty() && got.text().is_none());

        notifier.notify(Notification::new("callback", Level::Success, "late"));
        deliveries.keep_undelivered();
        let text = deliveries.collect_text().unwrap();
        assert!(text.ends_with("- [callback ok] late"), "{text}");
    }

    #[test]
    fn unreadable_entries_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let worker = WorkerId::default();
        let path = project.state_dir(&worker).join(OUTBOX_FILE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"undelivered": [42, {"source": "callback", "level": "error", "text": "boom"}]}"#,
        )
        .unwrap();
        let notes = Outbox::new(&project, &worker).take().unwrap();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].text, "boom");
    }
}
