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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::git::{Git, GitError, TOP, succeeded, top_of};
use crate::head::Head;

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

/// Parses `git status --porcelain=v2 -z --branch`: the `# branch.oid` and `# branch.head`
/// headers, and the records `1 XY sub mH mI mW hH hI path`, `2 XY sub … Xscore path\0orig`,
/// `u XY sub … path` and `? path`. An untracked directory keeps its trailing `/`.
pub fn parse_porcelain_v2(out: &[u8]) -> (Head, Vec<ChangedFile>) {
    let mut head = Head {
        commit: None,
        branch: None,
    };
    // Records are read as bytes: only a path becomes text (a record of a tracked file is
    // mostly object names, and there may be tens of thousands of records).
    let mut records = nul_separated(out);
    let mut files = Vec::new();
    while let Some(record) = records.next() {
        if let Some(header) = record.strip_prefix(b"# ") {
            let header = String::from_utf8_lossy(header);
            if let Some(oid) = header.strip_prefix("branch.oid ") {
                head.commit = (oid != "(initial)").then(|| oid.to_owned());
            } else if let Some(branch) = header.strip_prefix("branch.head ") {
                head.branch = (branch != "(detached)").then(|| branch.to_owned());
            }
            continue;
        }
        let parsed = match record.first() {
            Some(b'?') => record
                .strip_prefix(b"? ")
                .map(|path| ChangedFile::new(text(path), FileStatus::Untracked)),
            Some(b'1') => tracked::<8>(record, None),
            Some(b'2') => {
                let from = records.next().map(text);
                tracked::<9>(record, from)
            }
            Some(b'u') => tracked::<10>(record, None),
            // `!` (ignored) is never asked for; anything else is not a record we know.
            _ => None,
        };
        if let Some(file) = parsed {
            files.push(file);
        } else {
            tracing::debug!(record = %String::from_utf8_lossy(record), "unexpected git status record");
        }
    }
    (head, files)
}

/// The non-empty records of NUL-separated output.
fn nul_separated(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = out;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let end = memchr::memchr(0, rest).unwrap_or(rest.len());
            let record = rest.get(..end).unwrap_or_default();
            rest = rest.get(end + 1..).unwrap_or_default();
            if !record.is_empty() {
                return Some(record);
            }
        }
        None
    })
}

/// The first `n` space-separated fields of `record`, and the rest (which may hold spaces).
fn fields<const N: usize>(record: &[u8]) -> Option<([&[u8]; N], &[u8])> {
    let mut fields: [&[u8]; N] = [&[]; N];
    let mut rest = record;
    for field in &mut fields {
        let end = memchr::memchr(b' ', rest)?;
        *field = rest.get(..end)?;
        rest = rest.get(end + 1..)?;
    }
    Some((fields, rest))
}

/// A path as git wrote it, as text (bytes that are not UTF-8 become U+FFFD).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A tracked entry: `N` space-separated fields (the kind of record, `XY`, the submodule
/// state, then modes and object names), then the path (which may hold spaces).
fn tracked<const N: usize>(record: &[u8], renamed_from: Option<String>) -> Option<ChangedFile> {
    let (fields, path) = fields::<N>(record)?;
    let [kind_of_record, xy, sub, ..] = fields.as_slice() else {
        return None;
    };
    let (&index, &tree) = (xy.first()?, xy.get(1)?);
    let status = if *kind_of_record == b"u" {
        FileStatus::Conflicted
    } else {
        status_of(index, tree)
    };
    let kind = match sub {
        [b'S', commit, modified, untracked] => EntryKind::Submodule(SubmoduleChange {
            new_commits: *commit == b'C',
            modified_content: *modified == b'M',
            untracked_content: *untracked == b'U',
            staged: index != b'.',
        }),
        _ => EntryKind::File,
    };
    Some(ChangedFile {
        path: text(path),
        status,
        renamed_from,
        kind,
    })
}

fn status_of(x: u8, y: u8) -> FileStatus {
    match (x, y) {
        (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => FileStatus::Conflicted,
        (b'R', _) | (_, b'R') => FileStatus::Renamed,
        (b'C', _) | (_, b'C') => FileStatus::Copied,
        (b'D', _) | (_, b'D') => FileStatus::Deleted,
        (b'A', _) => FileStatus::Added,
        (b'T', _) | (_, b'T') => FileStatus::TypeChanged,
        _ => FileStatus::Modified,
    }
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
    fn parses_every_record_kind_without_quoting() {
        let raw = b"# branch.oid 1111111111111111111111111111111111111111\0# branch.head main\0\
1 .M N... 100644 100644 100644 aaaa aaaa src/a b.rs\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 new name.py\0old name.py\0\
? d\xc3\xa9j\xc3\xa0.txt\0\
1 .D N... 100644 100644 000000 aaaa aaaa gone.rs\0\
1 A. N... 000000 100644 100644 0000 aaaa added.rs\0\
u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.rs\0\
1 MD N... 100644 100644 000000 aaaa bbbb half.rs\0\
1 .T N... 100644 100644 120000 aaaa aaaa link\0\
1 .M S..U 160000 160000 160000 cccc cccc lib/sub\0\
? vendor/\0";
        let (head, files) = parse_porcelain_v2(raw);
        assert_eq!(
            head,
            Head {
                commit: Some("1111111111111111111111111111111111111111".into()),
                branch: Some("main".into())
            }
        );
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
                ("lib/sub", FileStatus::Modified, None),
                ("vendor/", FileStatus::Untracked, None),
            ]
        );
        let sub = &files[8];
        assert_eq!(
            sub.kind,
            EntryKind::Submodule(SubmoduleChange {
                untracked_content: true,
                ..SubmoduleChange::default()
            })
        );
        assert!(
            !sub.is_own(),
            "only untracked files inside: no commit here records them"
        );
        assert_eq!(sub.describe(), "submodule lib/sub (untracked files inside)");
        assert!(files[..8].iter().all(ChangedFile::is_own));
    }

    #[test]
    fn an_unborn_or_detached_head_and_malformed_records() {
        let (head, files) =
            parse_porcelain_v2(b"# branch.oid (initial)\0# branch.head (detached)\0garbage\0\0");
        assert_eq!(
            head,
            Head {
                commit: None,
                branch: None
            }
        );
        assert!(files.is_empty());
    }

    #[test]
    fn a_submodule_with_new_commits_is_a_change_of_this_repository() {
        let (_, files) = parse_porcelain_v2(b"1 .M SC.U 160000 160000 160000 a a sub\0");
        assert!(files[0].is_own());
        assert_eq!(
            files[0].describe(),
            "submodule sub (new commits, untracked files inside)"
        );
        let (_, staged) = parse_porcelain_v2(b"1 M. S..U 160000 160000 160000 a b sub\0");
        assert!(staged[0].is_own(), "the index records a change");
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
