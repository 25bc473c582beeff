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

use crate::diff::{EMPTY_TREE, FileDiff, os_path};
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
            Some(real) => copy_index(&real, index).map_err(|e| ReviewError::Git {
                args: "commit".into(),
                stderr: format!("cannot copy the index {}: {e}", real.display()),
            })?,
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
        // What the work tree holds now, before git looks: the commit must hold exactly that.
        let expected = self.work_tree_blobs(root, files)?;
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
        let head = String::from_utf8_lossy(&head).trim().to_owned();
        let lacking = self.lacking_in_head(root, &expected)?;
        if lacking.is_empty() {
            Ok(head)
        } else {
            Err(ReviewError::Incomplete {
                head,
                files: lacking,
            })
        }
    }

    /// Each listed path and what the work tree holds there now (see [`Expected`]).
    fn work_tree_blobs(
        &self,
        root: &Path,
        files: &[FileDiff],
    ) -> Result<Vec<(Vec<u8>, Expected)>, ReviewError> {
        let mut expected = Vec::new();
        let mut to_hash = Vec::new();
        for path in files.iter().flat_map(FileDiff::commit_paths) {
            // `cat-file` and `hash-object` read one name a line: a name with a newline in it
            // cannot be asked about (git itself writes such names quoted).
            if path.contains(&b'\n') {
                continue;
            }
            let what = match std::fs::symlink_metadata(root.join(os_path(path))) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Expected::Absent,
                Ok(meta) if meta.is_file() => {
                    to_hash.extend_from_slice(path);
                    to_hash.push(b'\n');
                    Expected::Blob(String::new())
                }
                // A symlink, a submodule, or a file that cannot be read: present.
                _ => Expected::Present,
            };
            expected.push((path.to_vec(), what));
        }
        if !to_hash.is_empty() {
            // `--stdin-paths` applies the file's attributes (`.gitattributes` filters, line
            // endings) as `git add` does.
            let out =
                self.run_with_input(root, &["hash-object", "--stdin-paths"], Some(&to_hash))?;
            let mut oids = out.split(|&b| b == b'\n').filter(|l| !l.is_empty());
            for (_, what) in &mut expected {
                if let Expected::Blob(oid) = what {
                    *oid = oids
                        .next()
                        .map(|l| String::from_utf8_lossy(l).into_owned())
                        .unwrap_or_default();
                }
            }
        }
        Ok(expected)
    }

    /// The listed paths the new `HEAD` does not hold as `expected` says, named for a person.
    fn lacking_in_head(
        &self,
        root: &Path,
        expected: &[(Vec<u8>, Expected)],
    ) -> Result<Vec<String>, ReviewError> {
        if expected.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for (path, _) in expected {
            input.extend_from_slice(b"HEAD:");
            input.extend_from_slice(path);
            input.push(0);
        }
        let args = ["cat-file", "--batch-check=%(objectname)", "-z"];
        let out = self.run_with_input(root, &args, Some(&input))?;
        let answers: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        let mut lacking = Vec::new();
        for (i, (path, what)) in expected.iter().enumerate() {
            let answer = answers.get(i).copied().unwrap_or_default();
            let in_head = !answer.is_empty() && !answer.ends_with(b" missing");
            let holds = match what {
                Expected::Absent => !in_head,
                Expected::Present => in_head,
                Expected::Blob(oid) => in_head && answer == oid.as_bytes(),
            };
            if !holds {
                lacking.push(String::from_utf8_lossy(path).into_owned());
            }
        }
        Ok(lacking)
    }
}

/// What the work tree holds at a listed path when the commit starts.
#[derive(Debug)]
enum Expected {
    /// Nothing: the commit must not hold the path.
    Absent,
    /// A file with this blob (git's hash of its content, filters applied).
    Blob(String),
    /// Something git records but `hash-object` does not read (a symlink, a submodule).
    Present,
}

/// Copies the real index to `to`, the copy keeping the real one's modification time.
///
/// Git trusts an index entry's stat data (same size, same modification time: unchanged)
/// only when the entry is older than the index file itself; an entry whose file was written
/// in the same second as the index (or later) is *racy*, and git reads that file's bytes.
/// A copy with a fresh modification time would make every such entry look older than its
/// index, so a file rewritten with the same size in the same second as the last commit
/// would be taken as unchanged and left out of the commit. With the real index's time, the
/// copy's bytes and time are exactly what git would judge in the real index, so git's
/// answer for each entry is the one it would give there. (Refreshing the entries instead
/// would hash every file of a large work tree.)
fn copy_index(real: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(real, to)?;
    let modified = std::fs::metadata(real)?.modified()?;
    let copy = std::fs::OpenOptions::new().write(true).open(to)?;
    copy.set_times(std::fs::FileTimes::new().set_modified(modified))
}
