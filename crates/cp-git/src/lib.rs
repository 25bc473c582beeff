//! Git as Context Pilot reads it: which files changed in a work tree and where HEAD is
//! ([`Git::status`], one `git status --porcelain=v2 -z` call, the host's own runtime files left
//! out, nested repositories, worktrees and submodules named for what they are), what a session
//! committed since it began ([`Git::committed_since`]), which files were edited between two
//! moments ([`WorkTreeSnapshot`], for edits made through a shell), and how to show a long list
//! of them without flooding an agent's context ([`write_bounded`]); and the worktrees and
//! merges of phases that run side by side ([`Repository`]: a conflict is aborted and named),
//! and the lock files a killed git left ([`Repository::clear_stale_locks`], for a resumed run);
//! and the proof a merge keeps as a git note ([`Repository::add_note`], under [`NOTES_REF`]).
//!
//! For a person reviewing the agent's work: the uncommitted diff as files → hunks → lines
//! ([`Git::diff`], [`Git::review`]: byte for byte, an untracked file read again only when it
//! changed), and reverting a hunk or a file or committing exactly the listed files, all
//! through `git` ([`Git::revert_hunk`], [`Git::revert_file`], [`Git::commit_files`]: a refused
//! commit leaves the index as it was).
//!
//! The stop gate, smart restart's fallback handoff and auto-commit, and the restart prompt
//! all read the work tree through this crate, so they agree on what "changed" means.
//!
//! ```
//! use cp_git::{EntryKind, FileStatus, ListedFile, parse_porcelain_v2, write_bounded};
//!
//! // `git status --porcelain=v2 -z --branch` output: one modified file, one new one, and a
//! // directory with a repository of its own.
//! let (head, files) = parse_porcelain_v2(
//!     b"# branch.oid (initial)\0# branch.head main\0\
//!       1 .M N... 100644 100644 100644 0a0a 0a0a src/lib.rs\0? notes.md\0? vendor/\0",
//! );
//! assert_eq!((head.commit, head.branch.as_deref()), (None, Some("main")));
//! assert_eq!(files[0].status, FileStatus::Modified);
//! assert_eq!(files[1].status, FileStatus::Untracked);
//! // `Git::status` looks into `vendor/`: with a `.git` of its own it is a nested repository,
//! // never the project's own new file.
//! assert_eq!(files[0].kind, EntryKind::File);
//!
//! let listed: Vec<ListedFile> = files[..2]
//!     .iter()
//!     .map(|f| ListedFile { path: f.path.clone(), kind: f.word(), line: f.display_path() })
//!     .collect();
//! let mut out = String::new();
//! write_bounded(&mut out, &listed, "  ");
//! assert_eq!(out, "  src/lib.rs\n  notes.md\n");
//! ```

mod binary;
mod changed_file;
mod commit;
mod committed;
mod diff;
mod diff_read;
mod file_list;
mod git;
mod head;
mod locks;
mod notes;
mod parse;
mod porcelain;
mod review;
mod snapshot;
mod status;
#[cfg(test)]
mod test_repo;
mod untracked;
mod worktree;

pub use binary::HEX_ROWS;
pub use changed_file::{ChangedFile, EntryKind, FileStatus, SubmoduleChange};
pub use commit::{CommitMessage, Pending};
pub use committed::Committed;
pub use diff::{
    DiffKind, DiffLine, FileDiff, Hunk, LineKind, MAX_SHOWN_BYTES, MAX_SHOWN_LINES, ReadOptions,
    Review, Summary,
};
pub use file_list::{LISTED_FILES, ListedFile, thousands, write_bounded};
pub use git::{Git, GitError};
pub use head::Head;
pub use notes::NOTES_REF;
pub use parse::parse_diff;
pub use porcelain::parse_porcelain_v2;
pub use review::{ReviewError, hunk_patch};
pub use snapshot::{Stamp, WorkTreeSnapshot};
pub use status::WorkTreeStatus;
pub use untracked::{KEPT_BYTES, READ_PER_READING};
pub use worktree::{MergeOutcome, Repository, WorktreeError};
