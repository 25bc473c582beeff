//! The tree a verdict belongs to: HEAD, and the state of every uncommitted, untracked and
//! non-ignored file, as the stop gate fingerprints it
//! ([`super::super::fingerprint::fingerprint`]: path, status and one `lstat` each).
//!
//! An `lstat` tells one state of a file from the next without reading it: any write moves
//! the file's change time, which no tool can set back. The one gap is a write within the
//! clock tick the fingerprint was taken in (file times come from the kernel's coarse clock,
//! and some file systems keep whole seconds only): such a file is *racy*, as git calls its
//! index entries in the same case, and a warm run waits until no file is before it keeps a
//! fingerprint. A fingerprint with no racy file is then changed by every later write.

use std::path::Path;
use std::time::SystemTime;

use cp_git::{ChangedFile, Git, GitError};

use super::super::fingerprint::Fnv;

/// HEAD's commit in the repository at `repo`; `None` on a branch with no commit yet.
pub(crate) fn head_commit(git: &Git, repo: &Path) -> Result<Option<String>, GitError> {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(["rev-parse", "-q", "--verify", "HEAD^{commit}"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(path) = &git.path_env {
        cmd.env("PATH", path);
    }
    let out = cmd.output().map_err(GitError::Missing)?;
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok((out.status.success() && !commit.is_empty()).then_some(commit))
}

/// The git tree hash of `commit` in the repository at `repo`; `None` when git cannot say.
pub(crate) fn commit_tree(git: &Git, repo: &Path, commit: &str) -> Option<String> {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(["rev-parse", "-q", "--verify"])
        .arg(format!("{commit}^{{tree}}"))
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(path) = &git.path_env {
        cmd.env("PATH", path);
    }
    let out = cmd.output().ok()?;
    let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !tree.is_empty()).then_some(tree)
}

/// The fingerprint of the whole tree: the changed set's (the stop gate's `fingerprint`) and HEAD's
/// commit.
pub(crate) fn tree_fingerprint(changed_set: &str, head: Option<&str>) -> String {
    let mut hash = Fnv::new();
    hash.write(changed_set.as_bytes());
    hash.write(&[0]);
    hash.write(head.unwrap_or("unborn").as_bytes());
    format!("{:016x}", hash.finish())
}

/// Whether a file of `files` changed so recently (against `taken`, when the listing began)
/// that a write in the same clock tick would leave its `lstat` as it is ([`cp_base::racy`]).
/// Only the change time is asked: waiting ages it, while a modification time set in the
/// future never would (the fingerprint reads such a file's bytes instead).
pub(crate) fn racy<'a>(
    repo: &Path,
    taken: SystemTime,
    files: impl Iterator<Item = &'a ChangedFile>,
) -> bool {
    files.into_iter().any(|file| {
        std::fs::symlink_metadata(repo.join(&file.path)).is_ok_and(|meta| {
            let (_, ctime) = cp_base::racy::Stamp::times(&meta);
            ctime.not_older_than(taken)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_git::FileStatus;
    use std::time::Duration;

    #[test]
    fn a_file_written_just_now_is_racy_and_one_written_earlier_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x").unwrap();
        let files = [ChangedFile::new("a.py", FileStatus::Untracked)];
        assert!(racy(dir.path(), SystemTime::now(), files.iter()));
        let later = SystemTime::now() + Duration::from_secs(2);
        assert!(!racy(dir.path(), later, files.iter()));
        assert!(!racy(dir.path(), later, std::iter::empty()));
    }

    #[test]
    fn the_tree_fingerprint_follows_head() {
        assert_ne!(
            tree_fingerprint("f", Some("aaa")),
            tree_fingerprint("f", Some("bbb"))
        );
        assert_ne!(tree_fingerprint("f", None), tree_fingerprint("g", None));
        assert_eq!(tree_fingerprint("f", None), tree_fingerprint("f", None));
    }
}
