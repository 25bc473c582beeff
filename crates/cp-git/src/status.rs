//! Which files changed: `git status` of the whole repository, in one `--porcelain=v2 -z
//! --branch` call.
//!
//! That one call gives what the stop gate asks for (changes against HEAD, staged or not, plus
//! untracked files that are not ignored), where HEAD is ([`Head`]: its commit, none before the
//! first, and its branch), and what each entry is ([`EntryKind`]): a file, a submodule and how
//! it differs, or a directory with a repository of its own (a nested repository, or a worktree)
//! that git never looks into. It works in a repository without commits, reports renames with
//! both paths, and never quotes paths.
//!
//! The repository's own settings decide what counts as a change: `status.showUntrackedFiles`
//! (`no` lists no untracked file; with `normal`, git's default, a new directory is one entry,
//! which one `git ls-files` call opens), `submodule.<name>.ignore`, `diff.ignoreSubmodules` and
//! the ignore files.

use std::path::{Path, PathBuf};

use crate::changed_file::{ChangedFile, EntryKind, FileStatus};
use crate::git::{Git, GitError, TOP, succeeded, top_of};
use crate::head::Head;
use crate::porcelain::{nul_separated, parse_porcelain_v2, text};

/// What `git status` says of a work tree: where HEAD is, and every uncommitted change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTreeStatus {
    /// HEAD's commit and branch.
    pub head: Head,
    /// The changes, sorted by path, the host's own runtime files left out.
    pub files: Vec<ChangedFile>,
}

/// Above this many new directories to open, `git ls-files` lists every untracked file
/// rather than take each directory as an argument.
const OPEN_DIRS_BY_NAME: usize = 256;

impl Git {
    /// The top of the work tree containing `dir` and [`Git::status`] of that work tree, both
    /// asked of git at once: the status does not wait for the top to be found (its paths are
    /// relative to the top wherever git runs). An error is the top's first, as when asked one
    /// after the other.
    pub fn repo_status(&self, dir: &Path) -> Result<(PathBuf, WorkTreeStatus), GitError> {
        let top = self
            .command(dir, &TOP, false, None)
            .spawn()
            .map_err(GitError::Missing)?;
        let status = self.command(dir, &STATUS, false, None).spawn();
        // Both are waited for whatever happens, so neither is left a zombie.
        let top = top.wait_with_output().map_err(GitError::Missing);
        let status = status.and_then(std::process::Child::wait_with_output);
        let root = top_of(dir, top.and_then(|out| succeeded(dir, &TOP, out)))?;
        let out = succeeded(dir, &STATUS, status.map_err(GitError::Missing)?)?;
        let status = self.work_tree_status(&root, &out)?;
        Ok((root, status))
    }

    /// Every uncommitted change in the repository at `root`, minus the host's own runtime
    /// files, sorted by path (see [`Git::status`]).
    pub fn changed_files(&self, root: &Path) -> Result<Vec<ChangedFile>, GitError> {
        self.status(root).map(|status| status.files)
    }

    /// Where HEAD is and every uncommitted change in the repository at `root` (its top
    /// directory): one `git status`, and one `git ls-files` when a new directory must be
    /// opened. The host's own runtime files are left out; the rest is sorted by path.
    pub fn status(&self, root: &Path) -> Result<WorkTreeStatus, GitError> {
        let out = self.run(root, &STATUS)?;
        self.work_tree_status(root, &out)
    }

    /// What `git status` (with [`STATUS`]) wrote, read: untracked directories opened,
    /// nested repositories and worktrees told apart, the host's runtime files left out.
    fn work_tree_status(&self, root: &Path, out: &[u8]) -> Result<WorkTreeStatus, GitError> {
        // The new directories are found first, so `git ls-files` opens them while the rest of
        // the records is read (with tens of thousands of records, about as long).
        let new_dirs = new_directories(root, out);
        let to_open: Vec<String> = new_dirs
            .iter()
            .filter(|(_, kind)| kind.is_none())
            .map(|(dir, _)| format!("{dir}/"))
            .collect();
        let opening = if to_open.is_empty() {
            None
        } else {
            Some(self.untracked_in(root, &to_open)?)
        };
        let (head, entries) = parse_porcelain_v2(out);
        let mut kinds = new_dirs.into_iter().map(|(_, kind)| kind);
        let mut files = Vec::with_capacity(entries.len());
        for file in entries {
            match file.path.strip_suffix('/') {
                Some(dir) if file.status == FileStatus::Untracked => {
                    // A repository of its own is listed as one entry; any other new directory
                    // is opened by `git ls-files`.
                    if let Some(kind) = kinds.next().flatten() {
                        files.push(ChangedFile {
                            path: dir.to_owned(),
                            kind,
                            ..file
                        });
                    }
                }
                _ => files.push(file),
            }
        }
        if let Some(opening) = opening {
            files.extend(opening.listed(root)?);
        }
        files.retain(|f| !is_host_runtime(&f.path));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(WorkTreeStatus { head, files })
    }

    /// Starts listing the untracked files in the directories `dirs` (each ending with `/`),
    /// which `git status` listed as one entry each: files, and the repositories nested in
    /// them. [`Opening::listed`] waits for the list.
    fn untracked_in(&self, root: &Path, dirs: &[String]) -> Result<Opening, GitError> {
        let mut args = vec![
            "--literal-pathspecs",
            "-c",
            "core.quotePath=false",
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
        ];
        let by_name = dirs.len() <= OPEN_DIRS_BY_NAME;
        if by_name {
            args.push("--");
            args.extend(dirs.iter().map(String::as_str));
        }
        let child = self
            .command(root, &args, false, None)
            .spawn()
            .map_err(GitError::Missing)?;
        Ok(Opening {
            child,
            args: args.join(" "),
            dirs: (!by_name).then(|| dirs.to_vec()),
        })
    }
}

/// A `git ls-files` opening new directories, under way ([`Git::untracked_in`]).
struct Opening {
    child: std::process::Child,
    /// Its arguments, for an error.
    args: String,
    /// The directories asked for, when it lists every untracked file (too many to name):
    /// only the files in them are kept.
    dirs: Option<Vec<String>>,
}

impl Opening {
    /// The files it listed, once it is done.
    fn listed(self, root: &Path) -> Result<Vec<ChangedFile>, GitError> {
        let out = self.child.wait_with_output().map_err(GitError::Missing)?;
        let out = succeeded(root, &[self.args.as_str()], out)?;
        let dirs = self.dirs;
        Ok(nul_separated(&out)
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|path| {
                dirs.as_ref()
                    .is_none_or(|dirs| dirs.iter().any(|d| path.starts_with(d.as_str())))
            })
            .map(|path| match path.strip_suffix('/') {
                Some(dir) => ChangedFile {
                    kind: repository_at(root, dir).unwrap_or(EntryKind::NestedRepository),
                    ..ChangedFile::new(dir, FileStatus::Untracked)
                },
                None => ChangedFile::new(path, FileStatus::Untracked),
            })
            .collect())
    }
}

/// The new directories `git status` (porcelain v2, `-z`) listed as one entry each, in the
/// order of its records, each with what it is when it has a repository of its own (see
/// [`repository_at`]). Read as [`parse_porcelain_v2`] reads the records, the path a rename
/// came from included (never taken for a record of its own).
fn new_directories(root: &Path, out: &[u8]) -> Vec<(String, Option<EntryKind>)> {
    let mut records = nul_separated(out);
    let mut dirs = Vec::new();
    while let Some(record) = records.next() {
        match record.first() {
            Some(b'2') => {
                records.next();
            }
            Some(b'?') => {
                if let Some(dir) = record
                    .strip_prefix(b"? ")
                    .and_then(|path| path.strip_suffix(b"/"))
                {
                    let dir = text(dir);
                    let kind = repository_at(root, &dir);
                    dirs.push((dir, kind));
                }
            }
            _ => {}
        }
    }
    dirs
}

/// The one `git status` of a work tree: every change and where HEAD is, paths unquoted.
const STATUS: [&str; 7] = [
    "-c",
    "core.quotePath=false",
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--no-ahead-behind",
];

/// What the untracked directory `dir` holds when it has a `.git` of its own: a worktree (its
/// `.git` file points into a repository's `worktrees/`) or a nested repository.
fn repository_at(root: &Path, dir: &str) -> Option<EntryKind> {
    let dot_git = root.join(dir).join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(EntryKind::NestedRepository);
    }
    let text = std::fs::read_to_string(&dot_git).unwrap_or_default();
    let worktree = text
        .strip_prefix("gitdir:")
        .is_some_and(|to| to.trim().rsplit('/').nth(1) == Some("worktrees"));
    Some(if worktree {
        EntryKind::Worktree
    } else {
        EntryKind::NestedRepository
    })
}

/// The host's own files are not the agent's changes: per-machine state
/// (`.context-pilot/state|run|logs/`, lock files), the `.context-pilot/.gitignore` written on
/// first start, and the records it keeps itself (`runs/`, `handoffs/`), even where no
/// `.gitignore` hides them.
pub(crate) fn is_host_runtime(path: &str) -> bool {
    // Every changed path goes through here: most never name the host's directory.
    if memchr::memmem::find(path.as_bytes(), cp_base::STATE_DIR.as_bytes()).is_none() {
        return false;
    }
    let mut parts = path.split('/');
    let Some(mut before) = parts.next() else {
        return false;
    };
    for part in parts {
        if before == cp_base::STATE_DIR
            && (matches!(
                part,
                "state" | "run" | "logs" | ".gitignore" | "runs" | "handoffs"
            ) || (part.starts_with('.')
                && std::path::Path::new(part)
                    .extension()
                    .is_some_and(|ext| ext == "lock"))
                || (part.starts_with('.') && part.contains(".tmp")))
        {
            return true;
        }
        before = part;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_directories_are_found_as_the_records_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("vendor/lib/.git")).unwrap();
        // A rename from a path that looks like a record of a new directory, which it is not.
        let raw = b"# branch.oid (initial)\0? notes/\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 moved.txt\0? fake/\0\
? vendor/lib/\0? new.py\0";
        assert_eq!(
            new_directories(dir.path(), raw),
            [
                ("notes".to_owned(), None),
                ("vendor/lib".to_owned(), Some(EntryKind::NestedRepository)),
            ]
        );
        let (_, files) = parse_porcelain_v2(raw);
        assert_eq!(files[1].renamed_from.as_deref(), Some("? fake/"));
    }

    #[test]
    fn host_runtime_files_are_not_changes() {
        for p in [
            ".context-pilot/state/main/checkpoint.json",
            "sub/.context-pilot/run/x.sock",
            ".context-pilot/.config.json.lock",
            ".context-pilot/logs/host.log",
            ".context-pilot/.gitignore",
        ] {
            assert!(is_host_runtime(p), "{p}");
        }
        for p in [
            ".context-pilot/config.json",
            ".context-pilot/scripts/check.sh",
            "state/x.rs",
        ] {
            assert!(!is_host_runtime(p), "{p}");
        }
    }
}
