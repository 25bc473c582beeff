//! Acting on a reviewed diff: revert one hunk, revert a whole file.
//!
//! All of it goes through `git` itself. A hunk is reverted with `git apply --reverse` of the
//! very bytes git printed for it (a CRLF ending, a byte that is not UTF-8, a last line
//! without a newline all come back), under paths quoted so any name is read back exactly;
//! it is checked first with `--check`, so a hunk that no longer applies changes nothing.
//! When the index holds the hunk too (it was staged), it is taken out of the index as well.
//!
//! Paths are given to git through standard input (`--pathspec-from-file`, NUL-separated,
//! `--literal-pathspecs`), so a name that is not UTF-8 or looks like a glob names that file
//! and no other.

use std::path::{Path, PathBuf};

use crate::diff::{DiffKind, FileDiff, Hunk};
use crate::git::{Git, GitError};
use crate::parse::quote;

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
    /// The index holds unresolved merge conflicts.
    #[error(
        "unresolved conflicts in {}: resolve them (edit, then `git add`) or abort \
         (`git merge --abort`, `git rebase --abort`, `git cherry-pick --abort`) first; \
         nothing was committed",
        .0.join(", ")
    )]
    Unmerged(Vec<String>),
    /// The file has an unresolved merge conflict: reverting it would pick a side silently.
    #[error(
        "{0} has an unresolved merge conflict: resolve it, or take one side with \
         `git checkout --ours|--theirs -- {0}`; nothing was reverted"
    )]
    Conflicted(String),
    /// A submodule's changes are inside it: this repository only records its commit.
    #[error(
        "{0} is a submodule: its changes are made inside it; to go back to the commit this \
         repository records, run `git submodule update -- {0}`; nothing was reverted"
    )]
    Submodule(String),
    /// The commit was made, but it does not hold these listed files as the work tree had
    /// them.
    #[error(
        "committed {head}, but without {} as the work tree has it: git left it out; \
         review the changes and commit it again",
        .files.join(", ")
    )]
    Incomplete { head: String, files: Vec<String> },
    /// Nothing to commit: no file is listed.
    #[error("nothing to commit")]
    NothingToCommit,
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

/// The patch of one hunk of `file`, as `git apply` reads it: the hunk's own bytes under a
/// header naming the file in quotes (any name reads back exactly, a tab included).
pub fn hunk_patch(file: &FileDiff, hunk: &Hunk) -> Vec<u8> {
    let old = file.old_path_bytes.as_deref().unwrap_or(&file.path_bytes);
    let (a, b) = (quote(b"a/", old), quote(b"b/", &file.path_bytes));
    let mut out = Vec::with_capacity(hunk.raw.len() + 3 * (a.len() + b.len()) + 32);
    for part in [
        &b"diff --git "[..],
        &a,
        b" ",
        &b,
        b"\n--- ",
        &a,
        b"\n+++ ",
        &b,
        b"\n",
    ] {
        out.extend_from_slice(part);
    }
    out.extend_from_slice(&hunk.raw);
    out
}

/// A hunk's lines without its `@@` header (which says where they sit).
fn hunk_body(hunk: &Hunk) -> &[u8] {
    hunk.raw
        .iter()
        .position(|b| *b == b'\n')
        .map_or(&[][..], |end| &hunk.raw[end + 1..])
}

/// NUL-separated paths, for `--pathspec-from-file=- --pathspec-file-nul`.
pub(crate) fn pathspec_input<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}

impl Git {
    /// Reverts one hunk of `file` in the work tree of the repository at `root` (and in the
    /// index when it was staged). A hunk of a new, deleted, renamed or binary file reverts
    /// the whole file (see [`Git::revert_file`]).
    pub fn revert_hunk(
        &self,
        root: &Path,
        file: &FileDiff,
        hunk: &Hunk,
    ) -> Result<(), ReviewError> {
        self.revert_hunk_to(root, file, hunk, None)
    }

    /// Like [`Git::revert_hunk`], for a diff against commit `base` when given (a workflow
    /// phase's start): the work tree goes back to `base` there, and the index, which holds
    /// what was committed since, is left alone.
    pub fn revert_hunk_to(
        &self,
        root: &Path,
        file: &FileDiff,
        hunk: &Hunk,
        base: Option<&str>,
    ) -> Result<(), ReviewError> {
        refuse_unrevertable(file)?;
        if file.untracked || file.kind != DiffKind::Modified || hunk.raw.is_empty() {
            return self.revert_file_to(root, file, base);
        }
        let patch = hunk_patch(file, hunk);
        let apply = ["apply", "--reverse", "--whitespace=nowarn", "-"];
        let check = ["apply", "--check", "--reverse", "--whitespace=nowarn", "-"];
        self.run_with_input(root, &check, Some(&patch))?;
        // The index is changed only when it holds this very hunk (staged whole, as the
        // work tree has it). Whether the reverse patch merely applies to the index is no
        // proof: with repeated lines it applies at an offset to an index that never held it.
        let staged = match base {
            None => self.staged_patch(root, file, hunk)?,
            Some(_) => None,
        };
        let check_index = [
            "apply",
            "--cached",
            "--check",
            "--reverse",
            "--whitespace=nowarn",
            "-",
        ];
        let staged = staged.filter(|staged| {
            self.run_with_input(root, &check_index, Some(staged))
                .is_ok()
        });
        self.run_with_input(root, &apply, Some(&patch))?;
        if let Some(staged) = staged {
            let apply_index = ["apply", "--cached", "--reverse", "--whitespace=nowarn", "-"];
            self.run_with_input(root, &apply_index, Some(&staged))?;
        }
        Ok(())
    }

    /// The hunk of what is staged (the index against `HEAD`) with the same lines as `hunk`,
    /// as a patch against the index; none when the index does not hold that change whole.
    fn staged_patch(
        &self,
        root: &Path,
        file: &FileDiff,
        hunk: &Hunk,
    ) -> Result<Option<Vec<u8>>, ReviewError> {
        let staged = self.staged(root)?;
        let Some(staged_file) = staged
            .iter()
            .find(|f| f.path_bytes == file.path_bytes && f.kind == DiffKind::Modified)
        else {
            return Ok(None);
        };
        Ok(staged_file
            .hunks
            .iter()
            .find(|h| hunk_body(h) == hunk_body(hunk))
            .map(|h| hunk_patch(staged_file, h)))
    }

    /// Reverts `file` to the last commit: a tracked file is checked out from `HEAD` (a
    /// file that became a symlink comes back as the file), a new file is deleted (and
    /// dropped from the index), a renamed one comes back under its old name.
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
        refuse_unrevertable(file)?;
        let base = base.unwrap_or("HEAD");
        match file.kind {
            DiffKind::Modified | DiffKind::Deleted | DiffKind::TypeChanged => {
                self.checkout(root, base, [file.path_bytes.as_slice()])?;
            }
            DiffKind::New => {
                if !file.untracked {
                    self.untrack(root, [file.path_bytes.as_slice()])?;
                }
                delete(&file.full_path(root))?;
            }
            DiffKind::Renamed => {
                if let Some(old) = &file.old_path_bytes {
                    self.checkout(root, base, [old.as_slice()])?;
                }
                self.untrack(root, [file.path_bytes.as_slice()])?;
                delete(&file.full_path(root))?;
            }
        }
        Ok(())
    }

    /// `git checkout base -- paths`, the paths given exactly.
    fn checkout<'a>(
        &self,
        root: &Path,
        base: &str,
        paths: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<(), ReviewError> {
        let args = [
            "--literal-pathspecs",
            "checkout",
            base,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        self.run_with_input(root, &args, Some(&pathspec_input(paths)))?;
        Ok(())
    }

    /// Drops `paths` from the index (the files stay).
    fn untrack<'a>(
        &self,
        root: &Path,
        paths: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<(), ReviewError> {
        let args = [
            "--literal-pathspecs",
            "rm",
            "--cached",
            "-q",
            "-f",
            "--ignore-unmatch",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        self.run_with_input(root, &args, Some(&pathspec_input(paths)))?;
        Ok(())
    }
}

/// A conflicted file or a submodule is not reverted from the panel: say why.
fn refuse_unrevertable(file: &FileDiff) -> Result<(), ReviewError> {
    if file.conflicted {
        return Err(ReviewError::Conflicted(file.path.clone()));
    }
    if file.submodule {
        return Err(ReviewError::Submodule(file.path.clone()));
    }
    Ok(())
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
