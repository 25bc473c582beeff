//! The TUI's saved state on disk: everything needed to pick up where the last process left
//! off (the conversation, the model's history, panels, selection, draft input, …).
//!
//! Saved atomically to `.context-pilot/state/<worker>/session.json` (the file keeps its
//! historical name) when a turn ends and when the host exits (quit, SIGTERM, SIGHUP, reload).
//! Restored on the next start. Not to be confused with a console (PTY) session or an agent's
//! session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use cp_base::{Notification, Project, StoreError, WorkerId, write_atomic};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::Conversation;
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
    #[error("cannot encode the TUI state: {0}")]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Write(#[from] StoreError),
}

/// Loads the saved state. A missing file is `Ok(None)`. An unreadable or foreign file is
/// moved aside to `session.json.corrupt` and reported, so it is never overwritten unseen.
pub fn load(project: &Project, worker: &WorkerId) -> Result<Option<SavedState>, SavedStateError> {
    let path = path(project, worker);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SavedStateError::Read { path, source }),
    };
    match serde_json::from_str::<SavedState>(&text) {
        Ok(state) if state.version == VERSION => Ok(Some(state)),
        Ok(state) => Err(set_aside(
            path,
            format!("it has version {}, expected {VERSION}", state.version),
        )),
        Err(e) => Err(set_aside(path, e.to_string())),
    }
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

/// Saves atomically.
pub fn save(
    project: &Project,
    worker: &WorkerId,
    state: &SavedState,
) -> Result<(), SavedStateError> {
    let mut state = state.clone();
    state.version = VERSION;
    let text = serde_json::to_string(&state)?;
    write_atomic(&path(project, worker), text.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sets_corrupt_files_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let worker = WorkerId::default();
        assert!(load(&project, &worker).unwrap().is_none());
        let mut state = SavedState {
            draft: "half a thought".into(),
            ..SavedState::default()
        };
        state.messages.push(Message::user_text("hi"));
        save(&project, &worker, &state).unwrap();
        let back = load(&project, &worker).unwrap().unwrap();
        assert_eq!(back.draft, "half a thought");
        assert_eq!(back.messages, state.messages);

        std::fs::write(path(&project, &worker), "{ not json").unwrap();
        let err = load(&project, &worker).unwrap_err().to_string();
        assert!(err.contains("moved to"), "{err}");
        assert!(
            path(&project, &worker)
                .with_extension("json.corrupt")
                .exists()
        );
        assert!(load(&project, &worker).unwrap().is_none());
    }
}
