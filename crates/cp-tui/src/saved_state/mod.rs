//! The TUI's saved state on disk: everything needed to pick up where the last process left
//! off (the conversation, the model's history, panels, selection, draft input, …).
//!
//! Saved to `.context-pilot/state/<worker>/` when a turn ends, soon after anything worth
//! saving, and when the host exits (quit, SIGTERM, SIGHUP, reload); restored on the next start.
//! The conversation's entries and the model's messages, which grow all day, live in append-only
//! logs (`conversation.jsonl`, `messages.jsonl`, one item a line) that are extended rather than
//! rewritten (see `state_writer.rs`); `session.json` (the file keeps its historical name) holds
//! the rest and how many lines of each log are valid, so a crash mid-append never leaves a state
//! that cannot be read. A `session.json` with the entries and messages inline (older versions,
//! and tests that seed one) is read as well. Not to be confused with a console (PTY) session or
//! an agent's session.

pub(crate) mod state_writer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cp_base::{Notification, Project, StoreError, WorkerId, write_atomic};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::Conversation;
use cp_agent::UsageMeter;
use cp_llm::Message;

/// How often the state is saved while nothing else triggers a save.
const AUTOSAVE: Duration = Duration::from_secs(5);

/// When to write the saved state: soon after something worth saving, and every few seconds
/// anyway, so even a killed host loses little.
#[derive(Debug)]
pub struct Autosave {
    unsaved: bool,
    last: Instant,
}

impl Default for Autosave {
    fn default() -> Self {
        Self {
            unsaved: false,
            last: Instant::now(),
        }
    }
}

impl Autosave {
    /// Something worth saving happened.
    pub fn mark(&mut self) {
        self.unsaved = true;
    }

    /// Whether a save is due now (clears the mark).
    pub fn due(&mut self) -> bool {
        std::mem::take(&mut self.unsaved) || self.last.elapsed() >= AUTOSAVE
    }

    /// A save was just made.
    pub fn saved(&mut self) {
        self.last = Instant::now();
    }
}

/// Bumped when the layout changes incompatibly; older files are set aside, not misread.
const VERSION: u32 = 1;
const FILE: &str = "session.json";
/// The log of conversation entries, one JSON entry a line.
pub const CONVERSATION_LOG: &str = "conversation.jsonl";
/// The log of the model's messages, one JSON message a line.
pub const MESSAGES_LOG: &str = "messages.jsonl";

/// How many lines of each log belong to the state (`session.json`'s `logs`); lines past them
/// are a save that did not finish.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLengths {
    pub conversation: usize,
    pub messages: usize,
}

/// The TUI's saved state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SavedState {
    pub version: u32,
    pub conversation: Conversation,
    /// The history as the model sees it.
    pub messages: Vec<Message>,
    pub input_history: Vec<String>,
    pub draft: String,
    pub selected: String,
    /// Scroll offset per panel id.
    pub scroll: BTreeMap<String, usize>,
    pub usage: UsageMeter,
    /// Notifications not yet delivered to the agent.
    pub pending: Vec<Notification>,
    /// Each module's saved state, by module id.
    pub modules: BTreeMap<String, Value>,
    /// The agent was stopped mid-turn (for a reload) and should continue.
    #[serde(default)]
    pub resume_turn: bool,
    /// How many files the Changes panel last counted: its badge until the first reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<usize>,
    /// The Changes panel's review comments, sent or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub review_comments: Vec<crate::changes::comments::ReviewComment>,
    /// Set when the entries and messages are in the logs beside this file (then the inline
    /// ones are empty); absent in a state that holds them inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<LogLengths>,
}

/// A restored state, and what its logs on disk hold, so the next save only appends.
#[derive(Debug)]
pub struct Restored {
    pub state: SavedState,
    pub on_disk: OnDisk,
}

/// What the state on disk holds: for each log, the byte offset where each valid line ends,
/// and the lengths `session.json` names. Empty for a state kept inline (its logs, if any,
/// belong to nothing and are rewritten from the start).
#[derive(Debug, Clone, Default)]
pub struct OnDisk {
    pub conversation_ends: Vec<u64>,
    pub messages_ends: Vec<u64>,
    pub referenced: LogLengths,
}

pub fn path(project: &Project, worker: &WorkerId) -> PathBuf {
    project.state_dir(worker).join(FILE)
}

/// Why the saved state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SavedStateError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Unreadable or foreign; `moved_to` is where it was set aside, if that worked.
    #[error(
        "the saved TUI state {} could not be restored ({why}){}",
        path.display(),
        moved_to.as_ref().map(|to| format!("; it was moved to {} and the TUI started afresh", to.display())).unwrap_or_default()
    )]
    Unusable {
        path: PathBuf,
        why: String,
        moved_to: Option<PathBuf>,
    },
    #[error("cannot write {}: {source}", path.display())]
    WriteLog {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The writer was asked to append past what it knows is on disk (a failed save before).
    #[error("the saved TUI state on disk is out of step; it is written in full next time")]
    OutOfStep,
    #[error("cannot encode the TUI state: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Write(#[from] StoreError),
}

/// Loads the saved state. A missing file is `Ok(None)`. An unreadable or foreign file is
/// moved aside to `session.json.corrupt` and reported, so it is never overwritten unseen.
pub fn load(project: &Project, worker: &WorkerId) -> Result<Option<Restored>, SavedStateError> {
    let path = path(project, worker);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SavedStateError::Read { path, source }),
    };
    let mut state = match serde_json::from_str::<SavedState>(&text) {
        Ok(state) if state.version == VERSION => state,
        Ok(state) => {
            return Err(set_aside(
                path,
                format!("it has version {}, expected {VERSION}", state.version),
            ));
        }
        Err(e) => return Err(set_aside(path, e.to_string())),
    };
    let Some(lengths) = state.logs.take() else {
        return Ok(Some(Restored {
            state,
            on_disk: OnDisk::default(),
        }));
    };
    let dir = project.state_dir(worker);
    let logs = read_log(&dir.join(CONVERSATION_LOG), lengths.conversation).and_then(
        |(entries, conversation_ends)| {
            read_log(&dir.join(MESSAGES_LOG), lengths.messages).map(|(messages, messages_ends)| {
                (entries, conversation_ends, messages, messages_ends)
            })
        },
    );
    match logs {
        Ok((entries, conversation_ends, messages, messages_ends)) => {
            state.conversation.set_entries(entries);
            state.messages = messages;
            Ok(Some(Restored {
                state,
                on_disk: OnDisk {
                    conversation_ends,
                    messages_ends,
                    referenced: lengths,
                },
            }))
        }
        Err(why) => Err(set_aside(path, why.to_string())),
    }
}

/// Why a conversation or message log cannot give back the lines the state names.
#[derive(Debug, thiserror::Error)]
enum LogError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} line {line}: {source}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("{} holds {found} whole lines, {expected} expected", path.display())]
    Short {
        path: PathBuf,
        found: usize,
        expected: usize,
    },
}

/// The first `lines` items of the log at `path`, and where each one's line ends.
fn read_log<T: serde::de::DeserializeOwned>(
    path: &Path,
    lines: usize,
) -> Result<(Vec<T>, Vec<u64>), LogError> {
    if lines == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let bytes = std::fs::read(path).map_err(|source| LogError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut items = Vec::with_capacity(lines);
    let mut ends = Vec::with_capacity(lines);
    let mut start = 0;
    for (n, line) in bytes
        .split_inclusive(|b| *b == b'\n')
        .take(lines)
        .enumerate()
    {
        if line.last() != Some(&b'\n') {
            break;
        }
        let item = serde_json::from_slice(line).map_err(|source| LogError::Parse {
            path: path.to_path_buf(),
            line: n + 1,
            source,
        })?;
        items.push(item);
        start += line.len();
        ends.push(start as u64);
    }
    if items.len() < lines {
        return Err(LogError::Short {
            path: path.to_path_buf(),
            found: items.len(),
            expected: lines,
        });
    }
    Ok((items, ends))
}

fn set_aside(path: PathBuf, why: String) -> SavedStateError {
    let aside = path.with_extension("json.corrupt");
    let moved_to = std::fs::rename(&path, &aside).is_ok().then_some(aside);
    let error = SavedStateError::Unusable {
        path,
        why,
        moved_to,
    };
    tracing::warn!("{error}");
    error
}

/// Writes `session.json` atomically: `head` (whose entries and messages are in the logs),
/// naming `lengths` lines of each log as valid.
pub fn write_head(
    dir: &Path,
    head: &SavedState,
    lengths: LogLengths,
) -> Result<(), SavedStateError> {
    let mut head = head.clone();
    head.version = VERSION;
    head.logs = Some(lengths);
    let text = serde_json::to_string(&head)?;
    write_atomic(&dir.join(FILE), text.as_bytes())?;
    Ok(())
}
