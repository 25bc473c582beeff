//! Committing the files a person reviewed: exactly those, and nothing else, with the index
//! left as it was when git refuses.
//!
//! The commit is built in an index of its own (`GIT_INDEX_FILE`, a copy of the real one in
//! the git directory): from `HEAD` plus the listed files as the work tree has them, or during
//! a merge, rebase or cherry-pick from the real index plus the listed files (git's own
//! message then offered). `git commit` runs on it, so the person's hooks and signing apply
//! and see what is committed. When git refuses (a hook exits 1), the copy is dropped and the
//! real index was never touched: staged stays staged, unstaged stays unstaged. When it
//! succeeds, the real index takes the committed files from the new `HEAD`, and only them.
//!
//! Refused before anything runs: an empty message, no file, and an index with unresolved
//! conflicts (named), which `git add` would otherwise mark resolved, `<<<<<<<` and all.

use std::path::{Path, PathBuf};

use crate::diff::{EMPTY_TREE, FileDiff};
use crate::git::Git;
use crate::review::{ReviewError, pathspec_input};

/// A merge, rebase or cherry-pick waiting for its commit, and the message git prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// `merge`, `rebase`, `cherry-pick` or `revert`.
    pub operation: &'static str,
    /// Git's prepared message (`MERGE_MSG`), comment lines and all, if there is one.
    pub message: Option<String>,
    /// Where that message is.
    pub message_file: PathBuf,
}

impl Pending {
    /// The prepared message's first line that is not a comment: what a one-line editor
    /// offers.
    pub fn subject(&self) -> Option<&str> {
        self.message
            .as_deref()?
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
    }
}

/// A path git printed, relative to `root` unless absolute.
fn absolute(root: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

/// What to commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitMessage {
    /// The person's words.
    Typed(String),
    /// Git's prepared message for the pending merge, rebase or cherry-pick, as git would
    /// use it (comment lines stripped).
    Prepared,
}

impl Git {
    /// The merge, rebase, cherry-pick or revert waiting for a commit in the repository at
    /// `root`, if any.
    pub fn pending_operation(&self, root: &Path) -> Option<Pending> {
        const MARKERS: [(&str, &str); 5] = [
            ("MERGE_HEAD", "merge"),
            ("rebase-merge", "rebase"),
            ("rebase-apply", "rebase"),
            ("CHERRY_PICK_HEAD", "cherry-pick"),
            ("REVERT_HEAD", "revert"),
        ];
        // One git call for every path: `rev-parse` prints one line per `--git-path`.
        let mut args = vec!["rev-parse"];
        for (name, _) in MARKERS.iter().chain([&("MERGE_MSG", "")]) {
            args.extend(["--git-path", name]);
        }
        let out = self.run(root, &args).ok()?;
        let text = String::from_utf8_lossy(&out);
        let paths: Vec<PathBuf> = text.lines().map(|line| absolute(root, line)).collect();
        let operation = MARKERS
            .iter()
            .zip(&paths)
            .find(|(_, path)| path.exists())?
            .0
            .1;
        let message_file = paths.get(MARKERS.len())?.clone();
        let message = std::fs::read_to_string(&message_file).ok();
        Some(Pending {
            operation,
            message,
            message_file,
        })
    }

    /// A file in the git directory (`git rev-parse --git-path`), absolute.
    fn git_path(&self, root: &Path, name: &str) -> Option<PathBuf> {
        let out = self.run(root, &["rev-parse", "--git-path", name]).ok()?;
        let text = String::from_utf8_lossy(&out);
        Some(absolute(root, text.trim_end_matches(['\n', '\r'])))
    }

    /// Commits exactly `files` (their work-tree content; a rename's both paths), with
    /// `message`; returns git's summary of the new commit, e.g. `1a2b3c4 Fix the parser`.
    /// When git refuses, the index is left exactly as it was.
    pub fn commit_files(
        &self,
        root: &Path,
        files: &[FileDiff],
        message: &CommitMessage,
    ) -> Result<String, ReviewError> {
        if let CommitMessage::Typed(text) = message
            && text.trim().is_empty()
        {
            return Err(ReviewError::EmptyMessage);
        }
        if files.is_empty() {
            return Err(ReviewError::NothingToCommit);
        }
        let unmerged = self.unmerged(root)?;
        if !unmerged.is_empty() {
            let mut names: Vec<String> = unmerged
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            names.sort();
            return Err(ReviewError::Unmerged(names));
        }
        let pending = self.pending_operation(root);
        let index = self
            .git_path(root, &format!("cp-commit-index.{}", std::process::id()))
            .ok_or_else(|| ReviewError::Git {
                args: "rev-parse --git-path".into(),
                stderr: "cannot find the git directory".into(),
            })?;
        let result = self.commit_aside(root, files, message, pending.as_ref(), &index);
        let lock = PathBuf::from(format!("{}.lock", index.display()));
        for leftover in [&index, &lock] {
            let _ = std::fs::remove_file(leftover);
        }
        result
    }

    fn commit_aside(
        &self,
        root: &Path,
        files: &[FileDiff],
        message: &CommitMessage,
        pending: Option<&Pending>,
        index: &Path,
    ) -> Result<String, ReviewError> {
        let real = self.git_path(root, "index");
        match real.filter(|p| p.exists()) {
            Some(real) => {
                std::fs::copy(&real, index).map_err(|e| ReviewError::Git {
                    args: "commit".into(),
                    stderr: format!("cannot copy the index {}: {e}", real.display()),
                })?;
            }
            None => {
                let _ = std::fs::remove_file(index);
            }
        }
        let aside = Some(index);
        if pending.is_none() {
            // From HEAD, keeping the copy's file stamps (no file is hashed again).
            let tree = if self.head(root).is_some() {
                "HEAD"
            } else {
                EMPTY_TREE
            };
            self.run_with_index(root, &["read-tree", "--reset", tree], None, aside)?;
        }
        let paths = pathspec_input(files.iter().flat_map(FileDiff::commit_paths));
        let add = [
            "--literal-pathspecs",
            "add",
            "-A",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        self.run_with_index(root, &add, Some(&paths), aside)?;
        match (message, pending) {
            (CommitMessage::Prepared, Some(pending)) => {
                let file = pending.message_file.display().to_string();
                let args = ["commit", "-q", "--cleanup=strip", "-F", &file];
                self.run_with_index(root, &args, None, aside)?;
            }
            (CommitMessage::Typed(text), _) => {
                self.run_with_index(
                    root,
                    &["commit", "-q", "-F", "-"],
                    Some(text.as_bytes()),
                    aside,
                )?;
            }
            (CommitMessage::Prepared, None) => {
                return Err(ReviewError::Git {
                    args: "commit".into(),
                    stderr: "no merge, rebase or cherry-pick is waiting; type a message".into(),
                });
            }
        }
        // The real index takes the committed files from the new HEAD; what else it held
        // stays (after a merge's commit, which took the whole index, that equals HEAD too).
        let reset = [
            "--literal-pathspecs",
            "reset",
            "-q",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        self.run_with_input(root, &reset, Some(&paths))?;
        let head = self.run(root, &["log", "-1", "--format=%h %s"])?;
        Ok(String::from_utf8_lossy(&head).trim().to_owned())
    }
}
