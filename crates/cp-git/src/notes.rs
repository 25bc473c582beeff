//! Git notes that keep Context Pilot's proof beside a commit: what a merge was tested with
//! before it landed. They live under their own ref ([`NOTES_REF`]), so `git log
//! --notes=context-pilot` shows them and nothing else of the repository changes: no file, no
//! branch, no commit of the project's history.

use crate::worktree::{Repository, WorktreeError};

/// The ref of Context Pilot's notes.
pub const NOTES_REF: &str = "refs/notes/context-pilot";

impl Repository {
    /// Attaches `text` to `commit` as its note under [`NOTES_REF`], replacing an earlier note
    /// of that commit. Git records notes in commits of their own: `identity` (name, email) is
    /// used for those when given, for a git with no identity of its own.
    pub fn add_note(
        &self,
        commit: &str,
        text: &str,
        identity: Option<(&str, &str)>,
    ) -> Result<(), WorktreeError> {
        let name;
        let email;
        let mut args: Vec<&str> = Vec::new();
        if let Some((who, address)) = identity {
            name = format!("user.name={who}");
            email = format!("user.email={address}");
            args.extend(["-c", name.as_str(), "-c", email.as_str()]);
        }
        let notes_ref = format!("--ref={NOTES_REF}");
        args.extend(["notes", notes_ref.as_str(), "add", "-f", "-m", text, commit]);
        self.git(&args).map(drop)
    }

    /// The note of `commit` under [`NOTES_REF`], if it has one.
    pub fn note(&self, commit: &str) -> Result<Option<String>, WorktreeError> {
        let notes_ref = format!("--ref={NOTES_REF}");
        let listed = self.git(&["notes", notes_ref.as_str(), "list", commit]);
        if listed.is_err() {
            // `notes list <commit>` fails when the commit has no note (or there are no notes).
            return Ok(None);
        }
        self.git(&["notes", notes_ref.as_str(), "show", commit])
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_attached_replaced_and_read_back_without_touching_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::at(dir.path());
        repo.git(&["init", "-q", "-b", "main"]).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        repo.git(&["add", "-A"]).unwrap();
        repo.git(&[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            "base",
        ])
        .unwrap();
        let head = repo.head().unwrap();
        assert_eq!(repo.note(&head).unwrap(), None);
        let who = Some(("Context Pilot", "context-pilot@localhost"));
        repo.add_note(&head, "tested: 3 passed", who).unwrap();
        repo.add_note(&head, "tested again: 4 passed", who).unwrap();
        assert_eq!(
            repo.note(&head).unwrap().as_deref(),
            Some("tested again: 4 passed")
        );
        let shown = repo
            .git(&["log", "-1", "--notes=context-pilot", "--format=%N"])
            .unwrap();
        assert_eq!(shown.trim(), "tested again: 4 passed");
        // Only the notes ref moved: no file changed, the branch is where it was.
        assert_eq!(repo.git(&["status", "--porcelain"]).unwrap(), "");
        assert_eq!(repo.head().unwrap(), head);
    }
}
