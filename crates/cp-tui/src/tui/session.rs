//! The session on disk: everything needed to pick up where the last process left off.
//!
//! Saved atomically to `.context-pilot/state/<worker>/session.json` when a turn ends and when
//! the host exits (quit, SIGTERM, SIGHUP, reload). Restored on the next start.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cp_base::{Notification, Project, WorkerId, write_atomic};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::Conversation;
use cp_agent::UsageMeter;
use cp_llm::Message;

/// Bumped when the layout changes incompatibly; older files are set aside, not misread.
const VERSION: u32 = 1;
const FILE: &str = "session.json";

/// A saved session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionState {
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

/// Loads the saved session. A missing file is `Ok(None)`. An unreadable or foreign file is
/// moved aside to `session.json.corrupt` and reported, so it is never overwritten unseen.
pub fn load(project: &Project, worker: &WorkerId) -> Result<Option<SessionState>, String> {
    let path = path(project, worker);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    match serde_json::from_str::<SessionState>(&text) {
        Ok(state) if state.version == VERSION => Ok(Some(state)),
        Ok(state) => Err(set_aside(
            &path,
            &format!("it has version {}, expected {VERSION}", state.version),
        )),
        Err(e) => Err(set_aside(&path, &e.to_string())),
    }
}

fn set_aside(path: &std::path::Path, why: &str) -> String {
    let aside = path.with_extension("json.corrupt");
    let moved = std::fs::rename(path, &aside).is_ok();
    let msg = if moved {
        format!(
            "the saved session {} could not be restored ({why}); it was moved to {} and a new session started",
            path.display(),
            aside.display()
        )
    } else {
        format!(
            "the saved session {} could not be restored ({why})",
            path.display()
        )
    };
    tracing::warn!("{msg}");
    msg
}

/// Saves atomically.
pub fn save(project: &Project, worker: &WorkerId, state: &SessionState) -> Result<(), String> {
    let mut state = state.clone();
    state.version = VERSION;
    let text =
        serde_json::to_string(&state).map_err(|e| format!("cannot encode the session: {e}"))?;
    write_atomic(&path(project, worker), text.as_bytes()).map_err(|e| e.to_string())
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
        let mut state = SessionState {
            draft: "half a thought".into(),
            ..SessionState::default()
        };
        state.messages.push(Message::user_text("hi"));
        save(&project, &worker, &state).unwrap();
        let back = load(&project, &worker).unwrap().unwrap();
        assert_eq!(back.draft, "half a thought");
        assert_eq!(back.messages, state.messages);

        std::fs::write(path(&project, &worker), "{ not json").unwrap();
        let err = load(&project, &worker).unwrap_err();
        assert!(err.contains("moved to"), "{err}");
        assert!(
            path(&project, &worker)
                .with_extension("json.corrupt")
                .exists()
        );
        assert!(load(&project, &worker).unwrap().is_none());
    }
}
