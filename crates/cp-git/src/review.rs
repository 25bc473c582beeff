//! Acting on a reviewed diff: revert one hunk, revert a whole file, commit everything.
//!
//! All of it goes through `git` itself, so the person's hooks and signing apply. A hunk is
//! reverted with `git apply --reverse` of its own patch, checked first with `--check`, so a
//! hunk that no longer applies changes nothing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::diff::{ChangeKind, FileDiff, Hunk};
use crate::status::{Git, GitError};

/// Why a review action did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The `git` program could not be started.
    #[error("git is not available ({0}); install git or put it on PATH")]
    Missing(std::io::Error),
    /// Git ran and refused; its own words follow.
    #[error("`git {args}` failed: {stderr}")]
    Git { args: String, stderr: String },
    /// A new file could not be deleted.
    #[error("cannot delete {}: {source}", path.display())]
    Delete {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The commit message is empty.
    #[error("the commit message is empty; type one, e.g. `Fix the parser's line numbers`")]
    EmptyMessage,
}

impl From<GitError> for ReviewError {
    fn from(e: GitError) -> Self {
        match e {
            GitError::Missing(e) => Self::Missing(e),
            GitError::NotARepository(dir) => Self::Git {
                args: "rev-parse".into(),
                stderr: format!("{} is not inside a git work tree", dir.display()),
            },
            GitError::Failed { args, stderr, .. } => Self::Git { args, stderr },
        }
    }
}

/// The patch of one hunk of `file`, as `git apply` reads it.
pub fn hunk_patch(file: &FileDiff, hunk: &Hunk) -> String {
    let old = file.old_path.as_deref().unwrap_or(&file.path);
    let mut out = format!("diff --git a/{old} b/{}\n", file.path);
    let _ = writeln!(out, "--- a/{old}");
    let _ = writeln!(out, "+++ b/{}", file.path);
    let _ = writeln!(
        out,
        "@@ -{},{} +{},{} @@",
        hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count
    );
    for line in &hunk.lines {
        out.push(line.kind.marker());
        out.push_str(&line.text);
        out.push('\n');
        if line.no_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    out
}

impl Git {
    /// Reverts one hunk of `file` in the work tree of the repository at `root`. A hunk of a
    /// new file, or one that is the whole file, reverts the whole file (see
    /// [`Git::revert_file`]).
    pub fn revert_hunk(
        &self,
        root: &Path,
        file: &FileDiff,
        hunk: &Hunk,
    ) -> Result<(), ReviewError> {
        if file.untracked || file.kind != ChangeKind::Modified {
            return self.revert_file_to(root, file, None);
        }
        let patch = hunk_patch(file, hunk);
        let args = ["apply", "--reverse", "--whitespace=nowarn", "-"];
        self.run_with_input(
            root,
            &["apply", "--check", "--reverse", "--whitespace=nowarn", "-"],
            Some(patch.as_bytes()),
        )?;
        self.run_with_input(root, &args, Some(patch.as_bytes()))?;
        Ok(())
    }

    /// Reverts `file` to the last commit: a tracked file is checked out from `HEAD`, a new
    /// file is deleted (and dropped from the index), a renamed one comes back under its old
    /// name.
    pub fn revert_file(&self, root: &Path, file: &FileDiff) -> Result<(), ReviewError> {
        self.revert_file_to(root, file, None)
    }

    /// Like [`Git::revert_file`], back to commit `base` when given (a workflow phase's
    /// start) instead of `HEAD`.
    pub fn revert_file_to(
        &self,
        root: &Path,
        file: &FileDiff,
        base: Option<&str>,
    ) -> Result<(), ReviewError> {
        let base = base.unwrap_or("HEAD");
        match file.kind {
            ChangeKind::Modified | ChangeKind::Deleted => {
                self.run(root, &["checkout", base, "--", &file.path])?;
            }
            ChangeKind::New => {
                if !file.untracked {
                    self.run(root, &["rm", "--cached", "-q", "-f", "--", &file.path])?;
                }
                delete(&root.join(&file.path))?;
            }
            ChangeKind::Renamed => {
                if let Some(old) = &file.old_path {
                    self.run(root, &["checkout", base, "--", old])?;
                }
                self.run(
                    root,
                    &[
                        "rm",
                        "--cached",
                        "-q",
                        "-f",
                        "--ignore-unmatch",
                        "--",
                        &file.path,
                    ],
                )?;
                delete(&root.join(&file.path))?;
            }
        }
        Ok(())
    }

    /// Commits every change (`git add -A`, then `git commit -m message`); returns git's
    /// summary line, e.g. `[main 1a2b3c4] Fix the parser`.
    pub fn commit_all(&self, root: &Path, message: &str) -> Result<String, ReviewError> {
        if message.trim().is_empty() {
            return Err(ReviewError::EmptyMessage);
        }
        self.run(root, &["add", "-A"])?;
        let out = self.run(root, &["commit", "-q", "-m", message])?;
        let said = String::from_utf8_lossy(&out).trim().to_owned();
        let head = self
            .run(root, &["log", "-1", "--format=%h %s"])
            .map_or(said, |o| String::from_utf8_lossy(&o).trim().to_owned());
        Ok(head)
    }
}

fn delete(path: &Path) -> Result<(), ReviewError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ReviewError::Delete {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
            .args(args)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{args:?}: {ok:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["config", "user.name", "t"]);
        git(dir.path(), &["config", "user.email", "t@t.invalid"]);
        git(dir.path(), &["config", "commit.gpgsign", "false"]);
        let text: String = (1..=30).fold(String::new(), |mut t, i| {
            let _ = writeln!(t, "line {i}");
            t
        });
        std::fs::write(dir.path().join("a.txt"), text).unwrap();
        std::fs::write(dir.path().join("b.txt"), "keep\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-q", "-m", "first"]);
        dir
    }

    const G: Git = Git { path_env: None };

    #[test]
    fn the_diff_lists_tracked_and_untracked_changes_with_numbers() {
        let dir = repo();
        let root = dir.path();
        let text: String = (1..=30)
            .map(|i| match i {
                3 => "line three\n".to_owned(),
                25 => "line 25\nline 25b\n".to_owned(),
                n => format!("line {n}\n"),
            })
            .collect();
        std::fs::write(root.join("a.txt"), text).unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("new.rs"), "fn main() {}\nfn two() {}").unwrap();
        std::fs::write(root.join("blob.bin"), [0u8, 1, 2]).unwrap();
        let files = G.diff(root).unwrap();
        let names: Vec<(&str, ChangeKind, usize, usize)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.kind, f.added, f.removed))
            .collect();
        assert_eq!(
            names,
            [
                ("a.txt", ChangeKind::Modified, 2, 1),
                ("b.txt", ChangeKind::Deleted, 0, 1),
                ("blob.bin", ChangeKind::New, 0, 0),
                ("new.rs", ChangeKind::New, 2, 0),
            ]
        );
        assert_eq!(files[0].hunks.len(), 2);
        assert_eq!(files[2].summary, Some(crate::Summary::Binary));
        assert!(files[3].untracked);
        assert_eq!(files[3].hunks[0].lines[1].new, Some(2));
        assert!(files[3].hunks[0].lines[1].no_newline);
    }

    #[test]
    fn reverting_one_hunk_leaves_the_other_and_a_stale_hunk_changes_nothing() {
        let dir = repo();
        let root = dir.path();
        let text: String = (1..=30)
            .map(|i| match i {
                3 => "line three\n".to_owned(),
                25 => "line twenty-five\n".to_owned(),
                n => format!("line {n}\n"),
            })
            .collect();
        std::fs::write(root.join("a.txt"), &text).unwrap();
        let files = G.diff(root).unwrap();
        let file = &files[0];
        G.revert_hunk(root, file, &file.hunks[1]).unwrap();
        let now = std::fs::read_to_string(root.join("a.txt")).unwrap();
        assert!(now.contains("line three\n"), "{now}");
        assert!(
            now.contains("line 25\n") && !now.contains("twenty-five"),
            "{now}"
        );
        // The same hunk again no longer applies: git says so, and nothing changes.
        let err = G.revert_hunk(root, file, &file.hunks[1]).unwrap_err();
        assert!(matches!(err, ReviewError::Git { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), now);
    }

    #[test]
    fn reverting_files_restores_or_deletes_them() {
        let dir = repo();
        let root = dir.path();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("new.txt"), "x\n").unwrap();
        for file in G.diff(root).unwrap() {
            G.revert_file(root, &file).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(root.join("b.txt")).unwrap(),
            "keep\n"
        );
        assert!(!root.join("new.txt").exists());
        assert!(G.diff(root).unwrap().is_empty());
    }

    #[test]
    fn commit_takes_everything_and_a_failing_hook_is_reported_with_its_words() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("new.txt"), "x\n").unwrap();
        assert!(matches!(
            G.commit_all(root, "  "),
            Err(ReviewError::EmptyMessage)
        ));
        let head = G.commit_all(root, "Add new.txt").unwrap();
        assert!(head.ends_with("Add new.txt"), "{head}");
        assert!(G.diff(root).unwrap().is_empty());

        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\necho 'lint says no' >&2\nexit 1\n").unwrap();
        let mut perms = std::fs::metadata(&hook).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&hook, perms).unwrap();
        std::fs::write(root.join("other.txt"), "y\n").unwrap();
        let err = G.commit_all(root, "Add other").unwrap_err();
        assert!(err.to_string().contains("lint says no"), "{err}");
    }

    #[test]
    fn a_diff_from_a_base_includes_what_was_committed_since() {
        let dir = repo();
        let root = dir.path();
        let base = G.head(root).unwrap();
        std::fs::write(root.join("b.txt"), "changed\n").unwrap();
        git(root, &["commit", "-q", "-am", "phase"]);
        std::fs::write(root.join("c.txt"), "new\n").unwrap();
        assert_eq!(G.diff(root).unwrap().len(), 1, "only c.txt is uncommitted");
        let files = G.diff_from(root, Some(&base)).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["b.txt", "c.txt"]);
        G.revert_file_to(root, &files[0], Some(&base)).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("b.txt")).unwrap(),
            "keep\n"
        );
    }

    #[test]
    fn a_repository_without_commits_shows_everything_as_new() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("x.txt"), "1\n2\n").unwrap();
        git(dir.path(), &["add", "x.txt"]);
        std::fs::write(dir.path().join("y.txt"), "3\n").unwrap();
        let files = G.diff(dir.path()).unwrap();
        let kinds: Vec<(&str, ChangeKind, usize)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.kind, f.added))
            .collect();
        assert_eq!(
            kinds,
            [("x.txt", ChangeKind::New, 2), ("y.txt", ChangeKind::New, 1)]
        );
    }
}
