//! A changed file as git reports it: its path, how it differs from the last commit
//! ([`FileStatus`]), and what the entry is ([`EntryKind`]: a file, a submodule and how it
//! differs, or a directory with a repository of its own).

use std::fmt::Write as _;

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

/// What a listed path is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A file (or symlink) of the repository: the project's own change.
    #[default]
    File,
    /// A submodule, and how it differs.
    Submodule(SubmoduleChange),
    /// An untracked directory with a repository of its own (`vendor/` with its own `.git`).
    /// Git does not look into it, and committing it here would record a broken gitlink.
    NestedRepository,
    /// An untracked directory that is a worktree (`git worktree add wt`, Claude Code's
    /// `.claude/worktrees/agent-…`): another checkout, committed on its own branch.
    Worktree,
}

impl EntryKind {
    /// Whether this is a plain file.
    pub fn is_file(&self) -> bool {
        matches!(self, Self::File)
    }
}

/// How a submodule differs, as `git status` says (`S<c><m><u>`).
#[expect(
    clippy::struct_excessive_bools,
    reason = "git's independent flags of a submodule, each a fact of its own"
)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubmoduleChange {
    /// Its checked-out commit is not the one recorded here (a commit here records it).
    #[serde(default)]
    pub new_commits: bool,
    /// Files git tracks inside it changed (commit inside it first, then here).
    #[serde(default)]
    pub modified_content: bool,
    /// Untracked files inside it; no commit of this repository can record them.
    #[serde(default)]
    pub untracked_content: bool,
    /// This repository's index already holds a change for it (`git add sub`).
    #[serde(default)]
    pub staged: bool,
}

/// One uncommitted change. Paths are relative to the repository root with `/` separators
/// (a nested repository or worktree without its trailing `/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// The file's current path (for a deletion, the path it had).
    pub path: String,
    /// What happened to it.
    pub status: FileStatus,
    /// The previous path of a rename or copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// What the path is: a file, a submodule, a nested repository or a worktree.
    #[serde(default, skip_serializing_if = "EntryKind::is_file")]
    pub kind: EntryKind,
}

impl ChangedFile {
    /// A file at `path` with `status`.
    pub fn new(path: impl Into<String>, status: FileStatus) -> Self {
        Self {
            path: path.into(),
            status,
            renamed_from: None,
            kind: EntryKind::File,
        }
    }

    /// `path` or `old → new` for messages; a nested repository or worktree ends with `/`.
    pub fn display_path(&self) -> String {
        match (&self.renamed_from, self.kind) {
            (Some(from), _) => format!("{from} → {}", self.path),
            (None, EntryKind::NestedRepository | EntryKind::Worktree) => format!("{}/", self.path),
            (None, _) => self.path.clone(),
        }
    }

    /// Whether this is a change of the repository itself, one a commit here records: a file,
    /// or a submodule whose commit or tracked content changed. A nested repository, a
    /// worktree, and a submodule with only untracked files inside are not.
    pub fn is_own(&self) -> bool {
        match self.kind {
            EntryKind::File => true,
            EntryKind::Submodule(sub) => {
                sub.staged
                    || sub.new_commits
                    || sub.modified_content
                    || self.status != FileStatus::Modified
            }
            EntryKind::NestedRepository | EntryKind::Worktree => false,
        }
    }

    /// The change in words, by kind: the status's word for a file (`modified`, `new`, …),
    /// else `submodule`, `nested repository` or `worktree`.
    pub fn word(&self) -> &'static str {
        match self.kind {
            EntryKind::File => self.status.word(),
            EntryKind::Submodule(_) => "submodule",
            EntryKind::NestedRepository => "nested repository",
            EntryKind::Worktree => "worktree",
        }
    }

    /// What the entry is and how it changed, for lists: `modified src/a.rs`, `submodule lib
    /// (new commits, untracked files inside)`, `nested repository vendor/`, `worktree wt/`.
    pub fn describe(&self) -> String {
        let mut line = format!("{} {}", self.word(), self.display_path());
        if let EntryKind::Submodule(sub) = self.kind {
            let mut how = Vec::new();
            if self.status != FileStatus::Modified {
                how.push(self.status.word());
            }
            if sub.new_commits {
                how.push("new commits");
            }
            if sub.modified_content {
                how.push("modified content: commit inside it first");
            }
            if sub.untracked_content {
                how.push("untracked files inside");
            }
            if !how.is_empty() {
                let _ = write!(line, " ({})", how.join(", "));
            }
        }
        line
    }
}
