//! The agent CLI's session the TUI's conversation continues, kept beside the saved TUI state
//! (`state/<worker>/agent-session.json`), so a live reload or a restart of the TUI resumes the
//! same Claude Code / Gemini CLI session its restored conversation shows.

use std::path::PathBuf;

use cp_base::{Project, StoreError, WorkerId, write_atomic};
use serde::{Deserialize, Serialize};

const FILE: &str = "agent-session.json";

/// Which CLI's session, and its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    agent: String,
    session_id: String,
}

fn path(project: &Project, worker: &WorkerId) -> PathBuf {
    project.state_dir(worker).join(FILE)
}

/// The session of `agent` to resume, if one was saved. A missing or unreadable file (or one
/// of another agent) means a fresh session; an unreadable one is logged.
pub fn load(project: &Project, worker: &WorkerId, agent: &str) -> Option<String> {
    let path = path(project, worker);
    let text = std::fs::read_to_string(&path).ok()?;
    match serde_json::from_str::<Record>(&text) {
        Ok(record) => (record.agent == agent).then_some(record.session_id),
        Err(e) => {
            tracing::warn!("ignoring {}: {e}", path.display());
            None
        }
    }
}

/// Saves `session_id` as the session of `agent` to resume.
pub fn save(
    project: &Project,
    worker: &WorkerId,
    agent: &str,
    session_id: &str,
) -> Result<(), StoreError> {
    let record = Record {
        agent: agent.to_owned(),
        session_id: session_id.to_owned(),
    };
    let path = path(project, worker);
    let text = serde_json::to_string(&record)
        .map_err(|e| StoreError::io(&path, std::io::Error::other(e)))?;
    write_atomic(&path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_session_is_resumed_only_by_the_same_agent() {
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let worker = WorkerId::default();
        assert_eq!(load(&project, &worker, "Claude Code"), None);
        save(&project, &worker, "Claude Code", "s-1").unwrap();
        assert_eq!(
            load(&project, &worker, "Claude Code").as_deref(),
            Some("s-1")
        );
        assert_eq!(load(&project, &worker, "Gemini CLI"), None);
        std::fs::write(path(&project, &worker), "not json").unwrap();
        assert_eq!(load(&project, &worker, "Claude Code"), None);
    }
}
