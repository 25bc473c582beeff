//! What the work tree looked like at one moment, cheaply: every path `git status` lists, with
//! its status, size and modification time. Two snapshots tell which files changed between
//! them even when no edit tool was used — an agent's `sed -i` or `cat > f` through its shell.
//!
//! A clean tracked file that a command edits shows up in `git status`; a file already
//! modified that is edited again keeps its status but changes size or mtime; a file put back
//! as committed leaves the list. Each of these is a change. Files git ignores are not seen.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::status::{FileStatus, Git, GitError};

/// One listed path's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// How it differs from the last commit.
    pub status: FileStatus,
    /// Its size in bytes; `None` when it does not exist (a deletion).
    pub size: Option<u64>,
    /// Its modification time in nanoseconds since the epoch, when known.
    pub mtime_ns: Option<u128>,
}

/// The state of every uncommitted path of a repository, by repository-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkTreeSnapshot {
    entries: BTreeMap<String, Stamp>,
}

impl WorkTreeSnapshot {
    /// The snapshot of the repository at `repo_root` now: one `git status`, then one
    /// `stat` per listed path.
    pub fn take(git: &Git, repo_root: &Path) -> Result<Self, GitError> {
        let files = git.changed_files(repo_root)?;
        let entries = files
            .into_iter()
            .map(|file| {
                let meta = std::fs::symlink_metadata(repo_root.join(&file.path)).ok();
                let stamp = Stamp {
                    status: file.status,
                    size: meta.as_ref().map(std::fs::Metadata::len),
                    mtime_ns: meta
                        .and_then(|m| m.modified().ok())
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map(|d| d.as_nanos()),
                };
                (file.path, stamp)
            })
            .collect();
        Ok(Self { entries })
    }

    /// The paths whose state differs from `earlier`: listed in one and not the other, or
    /// listed in both with another status, size or mtime. Sorted.
    pub fn changed_since(&self, earlier: &Self) -> Vec<String> {
        let mut changed: Vec<String> = self
            .entries
            .iter()
            .filter(|(path, stamp)| earlier.entries.get(*path) != Some(stamp))
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(
            earlier
                .entries
                .keys()
                .filter(|path| !self.entries.contains_key(*path))
                .cloned(),
        );
        changed.sort();
        changed
    }

    /// The state of `path`, when it is listed (uncommitted).
    pub fn stamp(&self, path: &str) -> Option<&Stamp> {
        self.entries.get(path)
    }

    /// How many paths are listed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the work tree was clean.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {

    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["config", "user.name", "T"]);
        git(dir.path(), &["config", "user.email", "t@example.invalid"]);
        std::fs::write(dir.path().join("clean.txt"), "one\n").unwrap();
        std::fs::write(dir.path().join("edited.txt"), "one\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "init"]);
        dir
    }

    fn snap(dir: &Path) -> WorkTreeSnapshot {
        WorkTreeSnapshot::take(&Git { path_env: None }, dir).unwrap()
    }

    #[test]
    fn edits_made_outside_any_edit_tool_are_seen() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("edited.txt"), "two\n").unwrap();
        let before = snap(root);
        assert_eq!(before.len(), 1);

        // A clean file edited, a modified file edited again (same size, later mtime), a new
        // file, and nothing else.
        std::fs::write(root.join("clean.txt"), "uno\n").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        let file = std::fs::File::options()
            .write(true)
            .open(root.join("edited.txt"))
            .unwrap();
        file.set_modified(later).unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        let after = snap(root);
        assert_eq!(
            after.changed_since(&before),
            ["clean.txt", "edited.txt", "new.txt"]
        );
        assert!(after.changed_since(&after).is_empty());

        // Putting a file back as committed is a change too.
        std::fs::write(root.join("clean.txt"), "one\n").unwrap();
        let reverted = snap(root);
        assert_eq!(reverted.changed_since(&after), ["clean.txt"]);
    }

    #[test]
    fn a_snapshot_survives_a_round_trip_through_json() {
        let dir = repo();
        std::fs::remove_file(dir.path().join("clean.txt")).unwrap();
        let snapshot = snap(dir.path());
        let json = serde_json::to_string(&snapshot).unwrap();
        let back: WorkTreeSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(back, snapshot);
        assert!(back.changed_since(&snapshot).is_empty());
    }
}
