//! Which files changed: `git status` of the whole repository, parsed from `-z` output.
//!
//! `git status --porcelain=v1 -z --untracked-files=all` gives in one call what the stop gate asks
//! for (`git diff --name-only HEAD` plus untracked, non-ignored files), also works in a
//! repository without commits, reports renames with both paths, and never quotes paths.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

/// How a file differs from the last commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// New and staged.
    Added,
    /// Content changed.
    Modified,
    /// Removed.
    Deleted,
    /// Moved; `renamed_from` holds the old path.
    Renamed,
    /// Copied; `renamed_from` holds the source.
    Copied,
    /// Changed between file, symlink or submodule.
    TypeChanged,
    /// New and not yet added (and not ignored).
    Untracked,
    /// Has unresolved merge conflicts.
    Conflicted,
}

impl FileStatus {
    /// A short `git status`-like code for lists: `M`, `A`, `D`, `R`, `C`, `T`, `??`, `U`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Added => "A",
            Self::Modified => "M",
            Self::Deleted => "D",
            Self::Renamed => "R",
            Self::Copied => "C",
            Self::TypeChanged => "T",
            Self::Untracked => "??",
            Self::Conflicted => "U",
        }
    }
}

impl FileStatus {
    /// The change in words for messages and the panel: `modified`, `new` (added or
    /// untracked), `deleted`, `renamed`, `copied`, `type changed`, `conflicted`. (Git's one-letter
    /// codes would be read as its two-column short format, where `M ` means staged.)
    pub fn word(self) -> &'static str {
        match self {
            Self::Added | Self::Untracked => "new",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
            Self::Copied => "copied",
            Self::TypeChanged => "type changed",
            Self::Conflicted => "conflicted",
        }
    }
}

/// One uncommitted change. Paths are relative to the repository root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// The file's current path (for a deletion, the path it had).
    pub path: String,
    /// What happened to it.
    pub status: FileStatus,
    /// The previous path of a rename or copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
}

impl ChangedFile {
    /// `path` or `old → new` for messages.
    pub fn display_path(&self) -> String {
        match &self.renamed_from {
            Some(from) => format!("{from} → {}", self.path),
            None => self.path.clone(),
        }
    }
}

/// Why git could not tell us what changed. The stop gate fails open on all of these.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The `git` program could not be started.
    #[error("git is not available ({0}); the stop gate was skipped")]
    Missing(std::io::Error),
    /// The project is not inside a git work tree.
    #[error("{0} is not inside a git work tree; the stop gate was skipped")]
    NotARepository(PathBuf),
    /// Git ran but failed.
    #[error("`git {args}` failed in {dir}: {stderr}; the stop gate was skipped")]
    Failed {
        /// The arguments given.
        args: String,
        /// Where it ran.
        dir: PathBuf,
        /// What git said.
        stderr: String,
    },
}

/// Runs git with a clean, predictable environment.
#[derive(Debug, Clone)]
pub struct Git {
    /// Replaces `PATH` for git (and lets tests hide git).
    pub path_env: Option<OsString>,
}

impl Git {
    pub(crate) fn run(&self, dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
        self.run_with_input(dir, args, None)
    }

    /// Runs git with `input` on its standard input (none: `/dev/null`).
    pub(crate) fn run_with_input(
        &self,
        dir: &Path,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, GitError> {
        self.run_with_index(dir, args, input, None)
    }

    /// Like [`Git::run_with_input`], with git's index file replaced by `index` when given (a
    /// commit built aside, so a refused one leaves the real index as it was).
    pub(crate) fn run_with_index(
        &self,
        dir: &Path,
        args: &[&str],
        input: Option<&[u8]>,
        index: Option<&Path>,
    ) -> Result<Vec<u8>, GitError> {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(dir)
            .args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Never take the index lock: an agent may be committing at the same moment.
            .env("GIT_OPTIONAL_LOCKS", "0")
            // English messages, so "not a git repository" can be recognized.
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            // Inherited repository overrides (from a git hook, say) would point `-C` elsewhere.
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        if let Some(index) = index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(path) = &self.path_env {
            cmd.env("PATH", path);
        }
        let mut child = cmd.spawn().map_err(GitError::Missing)?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // A git that exits early closes the pipe; its status says why.
            let _ = std::io::Write::write_all(&mut stdin, input);
        }
        let out = child.wait_with_output().map_err(GitError::Missing)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(GitError::Failed {
                args: args.join(" "),
                dir: dir.to_path_buf(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    /// The top of the work tree containing `dir`.
    pub fn repo_root(&self, dir: &Path) -> Result<PathBuf, GitError> {
        match self.run(dir, &["rev-parse", "--show-toplevel"]) {
            Ok(out) => {
                let text = String::from_utf8_lossy(&out);
                Ok(PathBuf::from(text.trim_end_matches(['\n', '\r'])))
            }
            Err(GitError::Failed { stderr, .. }) if stderr.contains("not a git repository") => {
                Err(GitError::NotARepository(dir.to_path_buf()))
            }
            Err(e) => Err(e),
        }
    }

    /// Every uncommitted change in the repository at `root`, minus the host's own runtime
    /// files, sorted by path.
    pub fn changed_files(&self, root: &Path) -> Result<Vec<ChangedFile>, GitError> {
        let out = self.run(
            root,
            &[
                "-c",
                "core.quotePath=false",
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignore-submodules=none",
            ],
        )?;
        let mut files: Vec<ChangedFile> = parse_porcelain_z(&out)
            .into_iter()
            .filter(|f| !is_host_runtime(&f.path))
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

/// Parses `git status --porcelain=v1 -z`: records `XY path\0`, and for renames and copies
/// `XY new\0old\0`.
pub fn parse_porcelain_z(out: &[u8]) -> Vec<ChangedFile> {
    let mut records = out.split(|b| *b == 0).filter(|r| !r.is_empty());
    let mut files = Vec::new();
    while let Some(record) = records.next() {
        if record.len() < 4 || record[2] != b' ' {
            // Not a status record; skip rather than misread the rest.
            tracing::debug!(record = %String::from_utf8_lossy(record), "unexpected git status record");
            continue;
        }
        let (x, y) = (record[0], record[1]);
        let path = String::from_utf8_lossy(&record[3..]).into_owned();
        let moved = matches!(x, b'R' | b'C') || matches!(y, b'R' | b'C');
        let renamed_from = if moved {
            records
                .next()
                .map(|old| String::from_utf8_lossy(old).into_owned())
        } else {
            None
        };
        let Some(status) = status_of(x, y) else {
            continue;
        };
        files.push(ChangedFile {
            path,
            status,
            renamed_from,
        });
    }
    files
}

fn status_of(x: u8, y: u8) -> Option<FileStatus> {
    Some(match (x, y) {
        (b'!', b'!') => return None,
        (b'?', b'?') => FileStatus::Untracked,
        (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => FileStatus::Conflicted,
        (b'R', _) | (_, b'R') => FileStatus::Renamed,
        (b'C', _) | (_, b'C') => FileStatus::Copied,
        (b'D', _) | (_, b'D') => FileStatus::Deleted,
        (b'A', _) => FileStatus::Added,
        (b'T', _) | (_, b'T') => FileStatus::TypeChanged,
        _ => FileStatus::Modified,
    })
}

/// The host's own files are not the agent's changes: per-machine state
/// (`.context-pilot/state|run|logs/`, lock files), the `.context-pilot/.gitignore` written on
/// first start, and the records it keeps itself (`runs/`, `handoffs/`), even where no
/// `.gitignore` hides them.
pub(crate) fn is_host_runtime(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.windows(2).any(|w| {
        w[0] == cp_base::STATE_DIR
            && (matches!(
                w[1],
                "state" | "run" | "logs" | ".gitignore" | "runs" | "handoffs"
            ) || (w[1].starts_with('.')
                && std::path::Path::new(w[1])
                    .extension()
                    .is_some_and(|ext| ext == "lock"))
                || (w[1].starts_with('.') && w[1].contains(".tmp")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_record_kind_without_quoting() {
        let raw = b" M src/a b.rs\0R  new name.py\0old name.py\0?? d\xc3\xa9j\xc3\xa0.txt\0 D gone.rs\0A  added.rs\0UU both.rs\0MD half.rs\0 T link\0";
        let files = parse_porcelain_z(raw);
        let got: Vec<(&str, FileStatus, Option<&str>)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.status, f.renamed_from.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("src/a b.rs", FileStatus::Modified, None),
                ("new name.py", FileStatus::Renamed, Some("old name.py")),
                ("déjà.txt", FileStatus::Untracked, None),
                ("gone.rs", FileStatus::Deleted, None),
                ("added.rs", FileStatus::Added, None),
                ("both.rs", FileStatus::Conflicted, None),
                ("half.rs", FileStatus::Deleted, None),
                ("link", FileStatus::TypeChanged, None),
            ]
        );
    }

    #[test]
    fn skips_malformed_records() {
        assert!(parse_porcelain_z(b"garbage\0\0").is_empty());
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
