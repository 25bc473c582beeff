//! The shapes of the uncommitted diff of a work tree, for a person to review (`diff_read.rs`
//! reads it): `git diff HEAD` (against the empty tree in a repository without commits) plus
//! every untracked file as a new file, as files → hunks → lines with their old and new line
//! numbers.
//!
//! Git runs with `--no-color --no-ext-diff --no-textconv`, fixed `a/`/`b/` prefixes and
//! `--submodule=short`, so the person's diff settings never change what is parsed. A path git
//! quotes (a tab, a newline, a quote) is unquoted; every path keeps its exact bytes.
//!
//! What no commit here can take is not listed: a repository or worktree nested in the work
//! tree (it is named in [`Review::nested`]), a submodule whose only change is inside it. With
//! `status.showUntrackedFiles=no` untracked files are not listed either, as `git status`
//! does.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A diff of more lines than this is summarised until the person asks for it.
pub const MAX_SHOWN_LINES: usize = 5_000;
/// A file larger than this (bytes, in the work tree) is summarised until the person asks.
pub const MAX_SHOWN_BYTES: u64 = 1024 * 1024;
/// Git's hash of the empty tree: what a repository without commits is compared with.
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// What happened to a file, as the review panel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    Modified,
    /// New: staged or untracked.
    New,
    Deleted,
    /// Moved (maybe edited too); [`FileDiff::old_path`] holds where from.
    Renamed,
    /// Changed between a file and a symlink.
    TypeChanged,
}

impl DiffKind {
    /// The change in words: `modified`, `new`, `deleted`, `renamed`, `type changed`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Modified => "modified",
            Self::New => "new",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
            Self::TypeChanged => "type changed",
        }
    }
}

/// Which side of the diff a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// Unchanged, on both sides.
    Context,
    Added,
    Removed,
}

impl LineKind {
    /// The unified diff's marker: ` `, `+` or `-`.
    pub fn marker(self) -> char {
        match self {
            Self::Context => ' ',
            Self::Added => '+',
            Self::Removed => '-',
        }
    }
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// Its number in the old file (context and removed lines).
    pub old: Option<u32>,
    /// Its number in the new file (context and added lines).
    pub new: Option<u32>,
    /// The text as shown: without the marker and the line ending, decoded lossily.
    pub text: String,
    /// Git's `\ No newline at end of file` follows this line.
    pub no_newline: bool,
}

/// One hunk: its header and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The whole `@@ -a,b +c,d @@ …` line.
    pub header: String,
    pub old_start: u32,
    pub old_count: u32,
    pub new_start: u32,
    pub new_count: u32,
    pub lines: Vec<DiffLine>,
    /// The hunk exactly as git printed it, header line included (empty for a hunk that is
    /// not git's: an untracked file, a binary file's bytes): what a revert applies.
    pub raw: Vec<u8>,
}

/// Why a file's diff is shown as one line until the person asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    Binary,
    /// Its diff has this many lines (more than [`MAX_SHOWN_LINES`]).
    ManyLines(usize),
    /// The file has this many bytes (more than [`MAX_SHOWN_BYTES`]).
    LargeFile(u64),
    /// An untracked file past what one reading reads (many new files); read when asked.
    Unread,
}

impl Summary {
    /// The summary in words, e.g. `binary file` or `diff of 12,000 lines`.
    pub fn describe(self) -> String {
        match self {
            Self::Binary => "binary file".to_owned(),
            Self::ManyLines(n) => format!("diff of {} lines", crate::thousands(n)),
            Self::LargeFile(bytes) => format!("file of {} KiB", crate::thousands(kib(bytes))),
            Self::Unread => "new file, not read yet (one of many)".to_owned(),
        }
    }
}

fn kib(bytes: u64) -> usize {
    usize::try_from(bytes / 1024).unwrap_or(usize::MAX)
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path now (for a deletion, the path it had), relative to the repository's root,
    /// as shown (decoded lossily).
    pub path: String,
    /// Where a renamed file came from, as shown.
    pub old_path: Option<String>,
    /// `path`'s exact bytes: what reverts and commits name (a name need not be UTF-8).
    pub path_bytes: Vec<u8>,
    /// `old_path`'s exact bytes.
    pub old_path_bytes: Option<Vec<u8>>,
    pub kind: DiffKind,
    /// Not yet known to git (deleting it is the only way to revert it).
    pub untracked: bool,
    /// The index holds an unresolved merge conflict for it.
    pub conflicted: bool,
    /// A submodule whose recorded commit changed (its own changes are inside it).
    pub submodule: bool,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    pub hunks: Vec<Hunk>,
    /// Set when the diff is shown as one line unless asked for.
    pub summary: Option<Summary>,
    /// The blob the file had at the base (the diff's `index` line), for its bytes.
    pub old_blob: Option<String>,
    /// An untracked file's size and modification and change times when it was read (none
    /// when they were too recent to trust, see [`cp_base::racy`]): the next reading takes
    /// it as it is when all three are the same.
    pub stamp: Option<(u64, i128, i128)>,
}

impl FileDiff {
    /// A modified file at `path` (bytes), nothing known yet.
    pub(crate) fn named(path: Vec<u8>) -> Self {
        Self {
            path: String::from_utf8_lossy(&path).into_owned(),
            old_path: None,
            path_bytes: path,
            old_path_bytes: None,
            kind: DiffKind::Modified,
            untracked: false,
            conflicted: false,
            submodule: false,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
            summary: None,
            old_blob: None,
            stamp: None,
        }
    }

    pub(crate) fn set_path(&mut self, path: Vec<u8>) {
        self.path = String::from_utf8_lossy(&path).into_owned();
        self.path_bytes = path;
    }

    pub(crate) fn set_old_path(&mut self, path: Vec<u8>) {
        self.old_path = Some(String::from_utf8_lossy(&path).into_owned());
        self.old_path_bytes = Some(path);
    }

    /// The number of hunk lines (headers not counted).
    pub fn line_count(&self) -> usize {
        self.hunks.iter().map(|h| h.lines.len()).sum()
    }

    /// The file in the work tree under `root`, by its exact bytes.
    pub fn full_path(&self, root: &Path) -> std::path::PathBuf {
        root.join(os_path(&self.path_bytes))
    }

    /// The paths a commit of this file names: its path, and for a rename where it came from.
    pub fn commit_paths(&self) -> impl Iterator<Item = &[u8]> {
        std::iter::once(self.path_bytes.as_slice()).chain(self.old_path_bytes.as_deref())
    }
}

/// A path's bytes as a path of this system.
pub(crate) fn os_path(bytes: &[u8]) -> &Path {
    Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes))
}

/// What to read, and what an earlier reading already read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions<'a> {
    /// Diff against this commit instead of `HEAD` (a workflow phase's start).
    pub base: Option<&'a str>,
    /// The last reading's files: an untracked file whose size and modification and change
    /// times did not change (and were not racy then) is taken from there instead of being
    /// read again.
    pub previous: &'a [FileDiff],
    /// Paths the person asked to see in full (`l`): an unread new file is read, a binary file
    /// is shown as text when it is UTF-8, else as bytes.
    pub load: &'a [String],
}

/// One reading of a work tree's changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// The changed files, sorted by path.
    pub files: Vec<FileDiff>,
    /// Repositories and worktrees inside the work tree (`vendor/`): never a change of this one.
    pub nested: Vec<String>,
    /// Untracked files are not listed (`status.showUntrackedFiles=no`).
    pub untracked_hidden: bool,
    /// Untracked files read (not taken from the previous reading) and their bytes.
    pub read_files: usize,
    pub read_bytes: u64,
}
