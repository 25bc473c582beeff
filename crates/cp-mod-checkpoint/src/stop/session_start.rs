//! Where each agent session began, by session id: HEAD when the first hook event of the
//! session arrived (Claude Code's, Gemini CLI's and Codex CLI's `SessionStart`, else whichever
//! event came first). The stop gate checks what the session committed since, as well as what
//! it did not commit.
//!
//! Kept in `.context-pilot/state/<worker>/sessions.json` (ignored by git), written atomically,
//! and only when a session is new: a hook call of a known session reads one small file and
//! runs no git at all.

use std::collections::BTreeMap;
use std::path::PathBuf;

use cp_base::{Project, WorkerId};
use cp_git::{Git, Head};
use serde::{Deserialize, Serialize};

use super::state::forget_oldest;

/// The file under the worker's state directory.
pub const SESSIONS_FILE: &str = "sessions.json";

/// Sessions remembered at most; the oldest are forgotten first.
const MAX_SESSIONS: usize = 64;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    #[serde(default)]
    sessions: BTreeMap<String, Started>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Started {
    head: Head,
    /// RFC 3339 time it was recorded; used to forget old sessions.
    at: String,
}

/// The recorded starts of one worker's agent sessions.
#[derive(Debug, Clone)]
pub struct SessionStarts {
    file: PathBuf,
    root: PathBuf,
    git: Git,
}

impl SessionStarts {
    /// Those of `worker` in `project`.
    pub fn new(project: &Project, worker: &WorkerId) -> Self {
        Self {
            file: project.state_dir(worker).join(SESSIONS_FILE),
            root: project.root().to_path_buf(),
            git: Git { path_env: None },
        }
    }

    /// Where `session` began: as recorded at its first event, else HEAD now, which is
    /// recorded. `None` when git cannot say (no repository): the stop gate then checks only
    /// what is uncommitted.
    pub fn begin(&self, session: &str) -> Option<Head> {
        let mut saved = self.load();
        if let Some(started) = saved.sessions.get(session) {
            return Some(started.head.clone());
        }
        let head = self
            .git
            .repo_root(&self.root)
            .and_then(|repo| self.git.head_state(&repo))
            .map_err(|e| tracing::info!("where session {session} began is unknown: {e}"))
            .ok()?;
        let at = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
        saved.sessions.insert(
            session.to_owned(),
            Started {
                head: head.clone(),
                at,
            },
        );
        forget_oldest(&mut saved.sessions, MAX_SESSIONS, |s| &s.at);
        self.save(&saved);
        Some(head)
    }

    fn load(&self) -> Saved {
        let Ok(bytes) = std::fs::read(&self.file) else {
            return Saved::default();
        };
        serde_json::from_slice(&bytes)
            .map_err(|e| {
                tracing::warn!(file = %self.file.display(), "ignoring broken session starts: {e}");
            })
            .unwrap_or_default()
    }

    fn save(&self, saved: &Saved) {
        let result = serde_json::to_vec(saved)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                if let Some(dir) = self.file.parent() {
                    cp_base::private::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                cp_base::write_atomic(&self.file, &bytes).map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            tracing::warn!(file = %self.file.display(), "cannot save session starts: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
    }

    #[test]
    fn the_first_event_of_a_session_records_head_and_later_ones_keep_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        let project = Project::at(&root);
        let starts = SessionStarts::new(&project, &WorkerId::default());
        let unborn = starts.begin("s1").unwrap();
        assert_eq!(unborn.commit, None);

        std::fs::write(root.join("a.txt"), "a").unwrap();
        git(&root, &["add", "-A"]);
        git(
            &root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        assert_eq!(
            starts.begin("s1").unwrap(),
            unborn,
            "s1 began before the commit"
        );
        let s2 = starts.begin("s2").unwrap();
        assert!(s2.commit.is_some());
        // A new process reads what the first one saved.
        let again = SessionStarts::new(&project, &WorkerId::default());
        assert_eq!(again.begin("s2").unwrap(), s2);
        assert_eq!(again.begin("s1").unwrap(), unborn);
    }

    #[test]
    fn old_sessions_are_forgotten_and_a_broken_file_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q"]);
        let project = Project::at(&root);
        let starts = SessionStarts::new(&project, &WorkerId::default());
        for i in 0..MAX_SESSIONS + 5 {
            starts.begin(&format!("s{i}"));
        }
        assert_eq!(starts.load().sessions.len(), MAX_SESSIONS);
        std::fs::write(&starts.file, "{broken").unwrap();
        assert!(starts.begin("s1").is_some());
        assert_eq!(starts.load().sessions.len(), 1);
        // Outside a repository nothing is known, and nothing is written.
        let plain = tempfile::tempdir().unwrap();
        let none = SessionStarts::new(&Project::at(plain.path()), &WorkerId::default());
        assert!(none.begin("s").is_none());
        assert!(!none.file.exists());
    }
}
