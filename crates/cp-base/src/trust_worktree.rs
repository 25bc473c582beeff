//! Worktrees of a trusted repository are trusted as it is.
//!
//! A linked git worktree (made by `git worktree add`, by Claude Code for a subagent with
//! `isolation: "worktree"` under `.claude/worktrees/agent-…`, or by a workflow's parallel
//! phase) holds the repository's own files, `.context-pilot/` included. While the worktree's
//! grant hashes to what the person trusted for the repository, it allows nothing the person
//! did not review, so it is trusted without a record of its own; a worktree whose
//! configuration differs is untrusted, as a clone would be.
//!
//! The repository is found the way git finds it, from files alone: the worktree's `.git` is a
//! file `gitdir: <dir>`, that directory's `commondir` names the repository's git directory,
//! and a non-bare repository's work tree is the directory holding its `.git`. The link must
//! hold both ways (`<dir>/gitdir` names the worktree's `.git` again), so a `.git` file written
//! by hand into some folder does not borrow a repository's trust.

use std::fs;
use std::path::{Path, PathBuf};

/// The main work tree of the repository whose linked worktree is `root` (canonical); `None`
/// when `root` is no linked worktree of a non-bare repository.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// assert_eq!(cp_base::repository_of_worktree(dir.path()), None);
/// ```
pub fn repository_of_worktree(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let text = fs::read_to_string(&dot_git).ok()?;
    let gitdir = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let gitdir = fs::canonicalize(root.join(gitdir)).ok()?;
    let back = fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = fs::canonicalize(gitdir.join(back.trim())).ok()?;
    if back != fs::canonicalize(&dot_git).ok()? {
        return None;
    }
    let common = fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = fs::canonicalize(gitdir.join(common.trim())).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    let repository = common.parent()?.to_path_buf();
    (repository != fs::canonicalize(root).ok()? && repository.join(".git").is_dir())
        .then_some(repository)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// Runs git in `dir` with a throwaway identity; fails the test when git does.
    pub(crate) fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn a_linked_worktree_names_its_repository_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let main = fs::canonicalize(dir.path()).unwrap().join("main");
        fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(&main, &["commit", "-q", "--allow-empty", "-m", "init"]);
        let nested = main.join(".claude/worktrees/agent-1");
        git(&main, &["worktree", "add", "-q", nested.to_str().unwrap()]);
        let beside = dir.path().join("beside");
        git(&main, &["worktree", "add", "-q", beside.to_str().unwrap()]);

        assert_eq!(repository_of_worktree(&nested), Some(main.clone()));
        assert_eq!(repository_of_worktree(&beside), Some(main.clone()));
        assert_eq!(repository_of_worktree(&main), None);

        // A `.git` file copied elsewhere does not link back: no repository.
        let copy = dir.path().join("copy");
        fs::create_dir_all(&copy).unwrap();
        fs::copy(nested.join(".git"), copy.join(".git")).unwrap();
        assert_eq!(repository_of_worktree(&copy), None);
    }
}
