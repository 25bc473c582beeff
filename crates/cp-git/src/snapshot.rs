//! What the work tree looked like at one moment, cheaply: every file `git status` lists, with
//! its status and what `lstat` says of it (size, modification and change times, inode). Two
//! snapshots tell which files were edited between them even when no edit tool was used — an
//! agent's `sed -i` or `cat > f` through its shell.
//!
//! An edit is a change of a file's content, never a change of its git status alone:
//! - a clean tracked file that a command edits shows up in `git status`: an edit, unless the
//!   file was not written since the earlier snapshot (`git reset --soft`, `git rm --cached`
//!   list files whose content did not change);
//! - a listed file edited again keeps its status but changes size, times or inode: an edit;
//!   staged or unstaged, its status alone changing is not;
//! - a file that leaves the list is an edit when it is not as it was (put back as committed);
//!   one that is exactly as it was was committed (`git add -A && git commit`), not edited.
//!
//! Files git ignores are not seen, nor the insides of submodules, nested repositories and
//! worktrees.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::changed_file::FileStatus;
use crate::git::{Git, GitError};

/// File times come from the kernel's coarse clock, which may lag the precise one by a tick:
/// a file whose change time is older than a snapshot by at least this much was not written
/// after it.
const CLOCK_SLACK_NS: u128 = 20_000_000;

/// One listed file's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// How it differs from the last commit.
    pub status: FileStatus,
    /// Its size in bytes; `None` when it does not exist (a deletion).
    pub size: Option<u64>,
    /// Its modification time in nanoseconds since the epoch, when known.
    pub mtime_ns: Option<u128>,
    /// Its change time in nanoseconds since the epoch (no tool can set it back), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctime_ns: Option<u128>,
    /// Its inode (`sed -i` writes a new file), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inode: Option<u64>,
    /// A digest of its bytes, taken when its times were too recent for the rest to tell a
    /// later write apart ([`cp_base::racy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<u64>,
}

impl Stamp {
    /// What `lstat` says of `path` now, with `status`.
    fn of(path: &Path, status: FileStatus) -> Self {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).ok();
        let ctime = meta.as_ref().and_then(|m| {
            let secs = u128::try_from(m.ctime()).ok()?;
            let nanos = u128::try_from(m.ctime_nsec()).ok()?;
            Some(secs * 1_000_000_000 + nanos)
        });
        Self {
            status,
            size: meta.as_ref().map(std::fs::Metadata::len),
            mtime_ns: meta
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos()),
            ctime_ns: ctime,
            inode: meta.as_ref().map(MetadataExt::ino),
            content: None,
        }
    }

    /// [`Stamp::of`], with a digest of the bytes when the file is racy against `taken`.
    fn taken(path: &Path, status: FileStatus, taken: std::time::SystemTime) -> Self {
        let mut stamp = Self::of(path, status);
        let racy = std::fs::symlink_metadata(path).is_ok_and(|meta| {
            let (mtime, ctime) = cp_base::racy::Stamp::times(&meta);
            cp_base::racy::is_racy(taken, mtime, ctime)
        });
        if racy {
            stamp.content = cp_base::racy::content_digest(path);
        }
        stamp
    }

    /// Whether the file at `path`, now stamped `self`, holds what it held when `before`
    /// was taken: the same stat data, and the same bytes when `before` was racy.
    fn unchanged_since(&self, before: &Self, path: &Path) -> bool {
        self.same_content(before)
            && before
                .content
                .is_none_or(|old| cp_base::racy::content_digest(path) == Some(old))
    }

    /// Whether the two stamps are of the same content: same size and times, and the same
    /// inode and change time where both know them. The status is not compared.
    fn same_content(&self, other: &Self) -> bool {
        let agree = |a: Option<u128>, b: Option<u128>| a.is_none() || b.is_none() || a == b;
        self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && agree(self.ctime_ns, other.ctime_ns)
            && agree(self.inode.map(u128::from), other.inode.map(u128::from))
    }
}

/// The state of every uncommitted file of a repository, by repository-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkTreeSnapshot {
    entries: BTreeMap<String, Stamp>,
    /// When it was taken, in nanoseconds since the epoch (absent in snapshots saved before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    taken_at_ns: Option<u128>,
}

impl WorkTreeSnapshot {
    /// The snapshot of the repository at `repo_root` now: one `git status`, then one
    /// `lstat` per listed file.
    pub fn take(git: &Git, repo_root: &Path) -> Result<Self, GitError> {
        let started = std::time::SystemTime::now();
        let taken_at_ns = started
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_nanos());
        let files = git.changed_files(repo_root)?;
        let entries = files
            .into_iter()
            .filter(|file| file.kind.is_file())
            .map(|file| {
                let stamp = Stamp::taken(&repo_root.join(&file.path), file.status, started);
                (file.path, stamp)
            })
            .collect();
        Ok(Self {
            entries,
            taken_at_ns,
        })
    }

    /// This snapshot with the files at `paths` (repository-relative) stamped as they are now,
    /// and the time it was taken moved to now: what [`WorkTreeSnapshot::take`] would say when
    /// nothing but those files was written since this one was taken, without running
    /// `git status`. For a hook call whose only writes are the edits the agent's tool named.
    ///
    /// A named file the earlier snapshot did not list keeps the status `Modified` (or
    /// `Deleted`, gone from disk): only [`WorkTreeSnapshot::changed_since`]'s later snapshot's
    /// statuses are read, and this one is always the earlier. A file git ignores is listed
    /// until the next full snapshot, which is taken at the next shell call.
    #[must_use]
    pub fn restamped(mut self, repo_root: &Path, paths: &[&str]) -> Self {
        let now = std::time::SystemTime::now();
        for path in paths {
            let full = repo_root.join(path);
            let status = self.entries.get(*path).map_or_else(
                || {
                    if full.symlink_metadata().is_ok() {
                        FileStatus::Modified
                    } else {
                        FileStatus::Deleted
                    }
                },
                |stamp| stamp.status,
            );
            self.entries
                .insert((*path).to_owned(), Stamp::taken(&full, status, now));
        }
        self.taken_at_ns = now.duration_since(UNIX_EPOCH).ok().map(|d| d.as_nanos());
        self
    }

    /// The files of the repository at `repo_root` whose content changed since `earlier`
    /// (see the module's documentation), sorted.
    pub fn changed_since(&self, earlier: &Self, repo_root: &Path) -> Vec<String> {
        let mut changed: Vec<String> = self
            .entries
            .iter()
            .filter(|(path, stamp)| match earlier.entries.get(*path) {
                Some(before) => !stamp.unchanged_since(before, &repo_root.join(path)),
                None => earlier.written_since(stamp),
            })
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(
            earlier
                .entries
                .iter()
                .filter(|(path, before)| {
                    let full = repo_root.join(path);
                    !self.entries.contains_key(*path)
                        && !Stamp::of(&full, before.status).unchanged_since(before, &full)
                })
                .map(|(path, _)| path.clone()),
        );
        changed.sort();
        changed
    }

    /// Whether a file newly listed with `stamp` was written (or removed) after this snapshot
    /// was taken; without the time it was taken, it counts as written.
    fn written_since(&self, stamp: &Stamp) -> bool {
        match (self.taken_at_ns, stamp.ctime_ns) {
            (Some(taken), Some(ctime)) if stamp.size.is_some() => ctime + CLOCK_SLACK_NS >= taken,
            _ => true,
        }
    }

    /// The state of `path`, when it is listed (uncommitted).
    pub fn stamp(&self, path: &str) -> Option<&Stamp> {
        self.entries.get(path)
    }

    /// The listed (uncommitted) paths, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
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
    use super::*;
    use crate::test_repo::{commit_all, git, repo};

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
            after.changed_since(&before, root),
            ["clean.txt", "edited.txt", "new.txt"]
        );
        assert!(after.changed_since(&after, root).is_empty());

        // Putting a file back as committed is a change too.
        std::fs::write(root.join("clean.txt"), "one\n").unwrap();
        let reverted = snap(root);
        assert_eq!(reverted.changed_since(&after, root), ["clean.txt"]);
    }

    #[test]
    fn a_same_size_rewrite_that_keeps_every_stat_field_is_seen_by_its_bytes() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("edited.txt"), "uno\n").unwrap();
        // A modification time not older than the snapshot: the file is racy, and its bytes
        // are digested.
        let soon = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(root.join("edited.txt"))
            .unwrap()
            .set_modified(soon)
            .unwrap();
        let before = snap(root);
        assert!(before.stamp("edited.txt").unwrap().content.is_some());
        std::fs::write(root.join("edited.txt"), "two\n").unwrap();
        // Every stat field as it was, as two writes in one tick of a coarse clock leave
        // them (this kernel's change times would tell them apart).
        let mut after = snap(root);
        let mut same = *before.stamp("edited.txt").unwrap();
        same.content = None;
        after.entries.insert("edited.txt".into(), same);
        assert_eq!(after.changed_since(&before, root), ["edited.txt"]);
        // Put back: the same bytes, nothing changed.
        std::fs::write(root.join("edited.txt"), "uno\n").unwrap();
        assert!(after.changed_since(&before, root).is_empty());
    }

    #[test]
    fn a_change_of_git_status_alone_is_not_an_edit() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("edited.txt"), "two\n").unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        std::fs::remove_file(root.join("clean.txt")).unwrap();
        let edited = snap(root);

        // Staged: the same files, another status.
        git(root, &["add", "-A"]);
        let staged = snap(root);
        assert!(staged.changed_since(&edited, root).is_empty(), "{staged:?}");

        // Committed: every file leaves the list as it was.
        git(root, &["commit", "-qm", "work"]);
        let committed = snap(root);
        assert!(committed.is_empty());
        assert!(committed.changed_since(&edited, root).is_empty());

        // Uncommitted again without a write (`git reset --soft`): listed, not edited.
        git(root, &["reset", "-q", "--soft", "HEAD~1"]);
        let soft = snap(root);
        assert_eq!(soft.len(), 3);
        // The hook's snapshot is taken well after the agent's last write (a model turn lies
        // between), as if a second later here.
        let quiet = WorkTreeSnapshot {
            taken_at_ns: committed.taken_at_ns.map(|t| t + 1_000_000_000),
            ..committed.clone()
        };
        // No `lstat` dates a deletion: a deleted file listed again counts as edited.
        assert_eq!(soft.changed_since(&quiet, root), ["clean.txt"], "{soft:?}");

        // A file written after the snapshot is an edit, whatever git says of it.
        std::fs::write(root.join("edited.txt"), "three\n").unwrap();
        commit_all(root, "again");
        let clean = snap(root);
        assert_eq!(clean.changed_since(&soft, root), ["edited.txt"]);
    }

    #[test]
    fn a_snapshot_restamped_for_the_named_edits_is_as_good_as_a_new_one() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("edited.txt"), "two\n").unwrap();
        let before = snap(root);
        // An edit tool writes a listed file, a clean one, a new one, and deletes one.
        std::fs::write(root.join("edited.txt"), "three\n").unwrap();
        std::fs::write(root.join("clean.txt"), "uno\n").unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        let restamped = before.restamped(root, &["edited.txt", "clean.txt", "new.txt"]);
        assert_eq!(restamped.len(), 3);
        // The next full snapshot sees nothing new since the restamped one...
        let after = snap(root);
        assert!(
            after.changed_since(&restamped, root).is_empty(),
            "{restamped:?}"
        );
        // ...and a later write through a shell, of a named file or another, is seen.
        let restamped = after.clone().restamped(root, &["new.txt"]);
        std::fs::write(root.join("new.txt"), "xy").unwrap();
        std::fs::remove_file(root.join("edited.txt")).unwrap();
        assert_eq!(
            snap(root).changed_since(&restamped, root),
            ["edited.txt", "new.txt"]
        );
    }

    #[test]
    fn nested_repositories_are_not_snapshotted() {
        let dir = repo();
        let root = dir.path();
        std::fs::create_dir_all(root.join("vendor")).unwrap();
        git(&root.join("vendor"), &["init", "-q"]);
        std::fs::write(root.join("vendor/x"), "x").unwrap();
        assert!(snap(root).is_empty());
    }

    #[test]
    fn a_snapshot_survives_a_round_trip_through_json() {
        let dir = repo();
        std::fs::remove_file(dir.path().join("clean.txt")).unwrap();
        let snapshot = snap(dir.path());
        let json = serde_json::to_string(&snapshot).unwrap();
        let back: WorkTreeSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(back, snapshot);
        assert!(back.changed_since(&snapshot, dir.path()).is_empty());
        // One saved before change times were kept reads, and compares on what it has.
        let old: WorkTreeSnapshot = serde_json::from_str(
            r#"{"entries":{"clean.txt":{"status":"deleted","size":null,"mtime_ns":null}}}"#,
        )
        .unwrap();
        assert!(snapshot.changed_since(&old, dir.path()).is_empty());
    }
}
