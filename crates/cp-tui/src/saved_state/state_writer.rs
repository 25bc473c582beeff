//! Writes the saved state off the UI thread, and only what changed.
//!
//! The UI thread hands over a [`Snapshot`]: the small part of the state (`session.json`) and,
//! for the conversation's entries and the model's messages, only the tail that changed since
//! the last save ([`Delta`]). A thread of its own appends that tail to the logs (cutting them
//! back first if an entry in the middle changed, e.g. a tool call that got its result), fsyncs
//! them, then replaces `session.json` atomically with the new lengths. Snapshots that queue up
//! while a write is under way merge into one, so the cost of a save follows what changed, not
//! the history.
//!
//! Crash safety: `session.json` never names more lines than the logs hold whole. A log is cut
//! back below what `session.json` names only after `session.json` was first rewritten to name
//! no more than the kept prefix.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use cp_llm::Message;
use serde::Serialize;

use crate::conversation::Entry;
use crate::saved_state::{
    CONVERSATION_LOG, LogLengths, MESSAGES_LOG, OnDisk, SavedState, SavedStateError, write_head,
};

/// The items of a log from index `from` on; the ones before are unchanged since the last save.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta<T> {
    pub from: usize,
    pub items: Vec<T>,
}

impl<T> Delta<T> {
    /// This change followed by `later`, as one.
    fn then(mut self, later: Self) -> Self {
        if later.from <= self.from {
            return later;
        }
        let keep = (later.from - self.from).min(self.items.len());
        self.items.truncate(keep);
        self.items.extend(later.items);
        self
    }
}

/// One save: `head` (its entries and messages are ignored) and the changed tails.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub head: SavedState,
    pub conversation: Delta<Entry>,
    pub messages: Delta<Message>,
}

impl Snapshot {
    fn then(self, later: Self) -> Self {
        Self {
            head: later.head,
            conversation: self.conversation.then(later.conversation),
            messages: self.messages.then(later.messages),
        }
    }
}

enum Job {
    Save(Box<Snapshot>),
    Flush(Sender<()>),
}

/// The thread that writes the saved state. Dropping it lets the thread finish what is queued.
#[derive(Debug)]
pub struct StateWriter {
    jobs: Sender<Job>,
    errors: Receiver<String>,
    needs_full: Arc<AtomicBool>,
}

impl StateWriter {
    /// Starts the writer for the state directory `dir`, which holds `on_disk`.
    pub fn spawn(dir: PathBuf, on_disk: OnDisk) -> std::io::Result<Self> {
        let (jobs, rx) = mpsc::channel();
        let (errors_tx, errors) = mpsc::channel();
        let needs_full = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&needs_full);
        std::thread::Builder::new()
            .name("saved-state".into())
            .spawn(move || run(&dir, on_disk, &rx, &errors_tx, &flag))?;
        Ok(Self {
            jobs,
            errors,
            needs_full,
        })
    }

    /// Queues a save; returns at once.
    pub fn save(&self, snapshot: Snapshot) {
        let _ = self.jobs.send(Job::Save(Box::new(snapshot)));
    }

    /// Waits until everything queued is written (or `timeout` passes); returns whether it was.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done, wait) = mpsc::channel();
        self.jobs.send(Job::Flush(done)).is_ok() && wait.recv_timeout(timeout).is_ok()
    }

    /// Whether the next save must carry every entry and message (a save failed, so the
    /// writer no longer knows what is on disk). Clears the flag.
    pub fn take_needs_full(&self) -> bool {
        self.needs_full.swap(false, Ordering::SeqCst)
    }

    /// The error of a save that failed since the last call, if any.
    pub fn take_error(&self) -> Option<String> {
        self.errors.try_iter().last()
    }
}

fn run(
    dir: &Path,
    on_disk: OnDisk,
    jobs: &Receiver<Job>,
    errors: &Sender<String>,
    needs_full: &AtomicBool,
) {
    let mut disk = Disk::new(on_disk);
    while let Ok(first) = jobs.recv() {
        // Everything queued meanwhile: saves merge into one write.
        let mut pending: Option<Snapshot> = None;
        let mut flushes = Vec::new();
        for job in std::iter::once(first).chain(jobs.try_iter()) {
            match job {
                Job::Save(snapshot) => {
                    pending = Some(match pending {
                        Some(earlier) => earlier.then(*snapshot),
                        None => *snapshot,
                    });
                }
                Job::Flush(done) => flushes.push(done),
            }
        }
        if let Some(snapshot) = pending
            && let Err(e) = disk.write(dir, &snapshot)
        {
            tracing::warn!("saving the TUI state failed: {e}");
            disk.forget();
            needs_full.store(true, Ordering::SeqCst);
            let _ = errors.send(e.to_string());
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// What the writer knows is on disk.
struct Disk {
    conversation: Log,
    messages: Log,
    /// The lengths the `session.json` on disk names.
    referenced: LogLengths,
}

impl Disk {
    fn new(on_disk: OnDisk) -> Self {
        Self {
            conversation: Log {
                name: CONVERSATION_LOG,
                ends: on_disk.conversation_ends,
            },
            messages: Log {
                name: MESSAGES_LOG,
                ends: on_disk.messages_ends,
            },
            referenced: on_disk.referenced,
        }
    }

    /// After a failure: trust only what `session.json` names to be whole.
    fn forget(&mut self) {
        self.conversation
            .ends
            .truncate(self.referenced.conversation);
        self.messages.ends.truncate(self.referenced.messages);
    }

    fn write(&mut self, dir: &Path, snapshot: &Snapshot) -> Result<(), SavedStateError> {
        let conversation = &snapshot.conversation;
        let messages = &snapshot.messages;
        if conversation.from > self.conversation.ends.len()
            || messages.from > self.messages.ends.len()
        {
            return Err(SavedStateError::OutOfStep);
        }
        // Cutting a log back below what session.json names: name only the kept prefix first.
        let kept = LogLengths {
            conversation: self.referenced.conversation.min(conversation.from),
            messages: self.referenced.messages.min(messages.from),
        };
        if kept != self.referenced {
            write_head(dir, &snapshot.head, kept)?;
            self.referenced = kept;
        }
        self.conversation
            .write(dir, conversation.from, &conversation.items)?;
        self.messages.write(dir, messages.from, &messages.items)?;
        let lengths = LogLengths {
            conversation: conversation.from + conversation.items.len(),
            messages: messages.from + messages.items.len(),
        };
        write_head(dir, &snapshot.head, lengths)?;
        self.referenced = lengths;
        Ok(())
    }
}

/// One append-only log, and where each of its lines ends.
struct Log {
    name: &'static str,
    ends: Vec<u64>,
}

impl Log {
    /// Keeps the first `from` lines and appends `items`, one a line; then fsyncs.
    fn write<T: Serialize>(
        &mut self,
        dir: &Path,
        from: usize,
        items: &[T],
    ) -> Result<(), SavedStateError> {
        if from == self.ends.len() && items.is_empty() {
            return Ok(());
        }
        let path = dir.join(self.name);
        let fail = |source| SavedStateError::WriteLog {
            path: path.clone(),
            source,
        };
        cp_base::private::create_dir_all(dir).map_err(fail)?;
        let file = cp_base::private::open_options(&path)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(fail)?;
        let start = from.checked_sub(1).map_or(0, |i| self.ends[i]);
        file.set_len(start).map_err(fail)?;
        self.ends.truncate(from);
        let mut out = BufWriter::new(file);
        out.seek(SeekFrom::Start(start)).map_err(fail)?;
        let mut end = start;
        for item in items {
            let mut line = serde_json::to_vec(item)?;
            line.push(b'\n');
            out.write_all(&line).map_err(fail)?;
            end += line.len() as u64;
            self.ends.push(end);
        }
        let file: File = out.into_inner().map_err(|e| fail(e.into_error()))?;
        file.sync_data().map_err(fail)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Conversation;
    use crate::saved_state::{self, Restored};
    use cp_base::{Project, WorkerId};

    fn head(draft: &str) -> SavedState {
        SavedState {
            draft: draft.into(),
            ..SavedState::default()
        }
    }

    fn user(text: &str) -> Entry {
        Entry::User(text.into())
    }

    fn restore(project: &Project) -> Restored {
        saved_state::load(project, &WorkerId::default())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn deltas_merge_into_one_change() {
        let a = Delta {
            from: 2,
            items: vec![2, 3, 4],
        };
        let b = Delta {
            from: 4,
            items: vec![40, 5],
        };
        assert_eq!(
            a.clone().then(b),
            Delta {
                from: 2,
                items: vec![2, 3, 40, 5]
            }
        );
        let c = Delta {
            from: 1,
            items: vec![10],
        };
        assert_eq!(a.then(c.clone()), c);
    }

    #[test]
    fn saves_append_and_rewrite_only_the_changed_tail() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let dir = project.state_dir(&WorkerId::default());
        let writer = StateWriter::spawn(dir.clone(), OnDisk::default()).unwrap();
        writer.save(Snapshot {
            head: head("one"),
            conversation: Delta {
                from: 0,
                items: vec![user("a"), user("b")],
            },
            messages: Delta {
                from: 0,
                items: vec![Message::user_text("a")],
            },
        });
        // The second entry changed and a third came; the messages only grew.
        writer.save(Snapshot {
            head: head("two"),
            conversation: Delta {
                from: 1,
                items: vec![user("B"), user("c")],
            },
            messages: Delta {
                from: 1,
                items: vec![Message::assistant_text("b")],
            },
        });
        assert!(writer.flush(Duration::from_secs(10)));
        assert!(writer.take_error().is_none());
        let restored = restore(&project);
        assert_eq!(restored.state.draft, "two");
        assert_eq!(
            restored.state.conversation.entries(),
            [user("a"), user("B"), user("c")]
        );
        assert_eq!(
            restored.state.messages,
            [Message::user_text("a"), Message::assistant_text("b")]
        );
        let log = std::fs::read_to_string(dir.join(CONVERSATION_LOG)).unwrap();
        assert_eq!(log.lines().count(), 3, "{log}");

        // A writer that picks up the restored state only appends.
        let writer = StateWriter::spawn(dir.clone(), restored.on_disk).unwrap();
        writer.save(Snapshot {
            head: head("three"),
            conversation: Delta {
                from: 3,
                items: vec![user("d")],
            },
            messages: Delta {
                from: 2,
                items: Vec::new(),
            },
        });
        assert!(writer.flush(Duration::from_secs(10)));
        let restored = restore(&project);
        assert_eq!(restored.state.conversation.entries().len(), 4);
        assert_eq!(restored.state.messages.len(), 2);
        // Past the valid lines, a save that did not finish is ignored.
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(CONVERSATION_LOG))
            .unwrap();
        log.write_all(b"{\"User\":\"half").unwrap();
        assert_eq!(restore(&project).state.conversation.entries().len(), 4);
    }

    #[test]
    fn a_save_out_of_step_asks_for_a_full_one() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let dir = project.state_dir(&WorkerId::default());
        let writer = StateWriter::spawn(dir, OnDisk::default()).unwrap();
        writer.save(Snapshot {
            head: head("x"),
            conversation: Delta {
                from: 5,
                items: vec![user("lost")],
            },
            messages: Delta {
                from: 0,
                items: Vec::new(),
            },
        });
        assert!(writer.flush(Duration::from_secs(10)));
        assert!(writer.take_error().is_some());
        assert!(writer.take_needs_full());
        assert!(!writer.take_needs_full());
    }

    #[test]
    fn an_inline_state_still_loads_and_a_short_log_is_set_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let worker = WorkerId::default();
        assert!(saved_state::load(&project, &worker).unwrap().is_none());
        let mut conversation = Conversation::default();
        conversation.push(user("inline"));
        let state = SavedState {
            version: 1,
            conversation,
            messages: vec![Message::user_text("hi")],
            ..SavedState::default()
        };
        let path = saved_state::path(&project, &worker);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
        let back = restore(&project);
        assert_eq!(back.state.conversation.entries(), [user("inline")]);
        assert_eq!(back.state.messages, state.messages);
        assert!(back.on_disk.conversation_ends.is_empty());

        // session.json naming more lines than the log holds is set aside, not misread.
        write_head(
            path.parent().unwrap(),
            &head(""),
            LogLengths {
                conversation: 3,
                messages: 0,
            },
        )
        .unwrap();
        let err = saved_state::load(&project, &worker)
            .unwrap_err()
            .to_string();
        assert!(err.contains("moved to"), "{err}");
        assert!(saved_state::load(&project, &worker).unwrap().is_none());

        std::fs::write(&path, "{ not json").unwrap();
        let err = saved_state::load(&project, &worker)
            .unwrap_err()
            .to_string();
        assert!(err.contains("moved to"), "{err}");
        assert!(path.with_extension("json.corrupt").exists());
    }
}
