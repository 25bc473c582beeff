//! Lock files a killed git left behind. Git takes `<file>.lock` (the index, `packed-refs`, a
//! ref, `HEAD`) for the time of one command and removes it when the command ends. A git killed
//! with its caller (SIGKILL of a run's process group, a crash) leaves the lock, and every later
//! command that needs it fails: "Unable to create '…/packed-refs.lock': File exists".
//!
//! A lock is stale when no git process works in the repository (the main work tree, any
//! linked worktree, the git directory) and the lock is older than that check: a git started
//! since would have made a newer one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::worktree::{Repository, WorktreeError};

/// How long [`Repository::clear_stale_locks`] waits for the git processes working in the
/// repository to end.
const BUSY_LIMIT: Duration = Duration::from_secs(5);

impl Repository {
    /// Removes the lock files a killed git left in this repository: in its git directory, its
    /// refs, and the private directories of its worktrees. Nothing is removed while a git
    /// process works in the repository (it gets a few seconds to end). Returns the removed
    /// paths.
    pub fn clear_stale_locks(&self) -> Result<Vec<PathBuf>, WorktreeError> {
        let common = PathBuf::from(self.git(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-common-dir",
        ])?);
        let mut places = vec![common.clone()];
        let listed = self.git(&["worktree", "list", "--porcelain"])?;
        places.extend(
            listed
                .lines()
                .filter_map(|l| l.strip_prefix("worktree "))
                .map(PathBuf::from),
        );
        // A git still at work (an orphan of the killed run finishing, the person's own) ends
        // in a moment; one that does not keeps its locks.
        let waited = Instant::now();
        let checked = loop {
            let checked = SystemTime::now();
            let busy = git_processes_in(&places);
            if busy.is_empty() {
                break checked;
            }
            if waited.elapsed() > BUSY_LIMIT {
                tracing::info!(?busy, "git is running in the repository; its locks stay");
                return Ok(Vec::new());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut removed = Vec::new();
        for lock in lock_files(&common) {
            let older = std::fs::metadata(&lock)
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified < checked);
            if !older {
                continue;
            }
            match std::fs::remove_file(&lock) {
                Ok(()) => {
                    tracing::warn!(lock = %lock.display(), "removed a lock a killed git left");
                    removed.push(lock);
                }
                Err(e) => tracing::warn!(lock = %lock.display(), "cannot remove a stale lock: {e}"),
            }
        }
        Ok(removed)
    }
}

/// The `*.lock` files of the git directory `common`: its own files (`index.lock`,
/// `packed-refs.lock`, `HEAD.lock`, …), those below `refs/`, and those of each worktree's
/// private directory (`worktrees/<name>/index.lock`, …). Objects are not locked this way.
fn lock_files(common: &Path) -> Vec<PathBuf> {
    let mut found = locks_in(common);
    let mut dirs = vec![common.join("refs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else if is_lock(&path) {
                found.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(common.join("worktrees"))
        .into_iter()
        .flatten()
        .flatten()
    {
        found.extend(locks_in(&entry.path()));
    }
    found
}

/// The `*.lock` files directly in `dir`.
fn locks_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_lock(p))
        .collect()
}

fn is_lock(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "lock")
}

/// The pids of `git` processes whose working directory is in one of `places` (git moves to
/// the directory `-C` names, so every git working on the repository is found).
fn git_processes_in(places: &[PathBuf]) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with("git") {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if places.iter().any(|place| cwd.starts_with(place)) {
            found.push(pid);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(root: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn locks_a_killed_git_left_are_removed_and_git_works_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "init"]);
        git(&root, &["branch", "side"]);
        let tree = root.join("wt");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "other",
                &tree.to_string_lossy(),
            ],
        );
        // What a git killed in `branch -D`, `commit` and a worktree's `add` leaves.
        let locks = [
            root.join(".git/packed-refs.lock"),
            root.join(".git/index.lock"),
            root.join(".git/refs/heads/side.lock"),
            root.join(".git/worktrees/wt/index.lock"),
        ];
        for lock in &locks {
            std::fs::write(lock, "").unwrap();
        }
        let repo = Repository::at(&root);
        assert!(repo.git(&["branch", "-D", "side"]).is_err());
        let mut removed = repo.clear_stale_locks().unwrap();
        removed.sort();
        let mut expected = locks.to_vec();
        expected.sort();
        assert_eq!(removed, expected);
        assert!(repo.git(&["branch", "-D", "side"]).is_ok());
        std::fs::write(tree.join("b.txt"), "b\n").unwrap();
        git(&tree, &["add", "-A"]);
        // Nothing else in the git directory is touched.
        assert!(root.join(".git/HEAD").exists() && root.join(".git/index").exists());
        assert!(repo.clear_stale_locks().unwrap().is_empty());
    }
}
