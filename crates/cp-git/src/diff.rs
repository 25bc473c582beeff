//! The uncommitted diff of a work tree, for a person to review: `git diff HEAD` (against the
//! empty tree in a repository without commits) plus every untracked file as a new file,
//! parsed into files → hunks → lines with their old and new line numbers.
//!
//! Git runs with `--no-color --no-ext-diff --no-textconv` and fixed `a/`/`b/` prefixes, so the
//! person's diff settings never change what is parsed. Paths are never quoted
//! (`core.quotePath=false`); a path git still quotes (a tab, a newline, a quote) is unquoted.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::status::{Git, GitError, is_host_runtime};

/// A diff of more lines than this is summarised until the person asks for it.
pub const MAX_SHOWN_LINES: usize = 5_000;
/// A file larger than this (bytes, in the work tree) is summarised until the person asks.
pub const MAX_SHOWN_BYTES: u64 = 1024 * 1024;
/// An untracked file larger than this is not read at all.
const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;
/// Git's hash of the empty tree: what a repository without commits is compared with.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// What happened to a file, as the review panel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Modified,
    /// New: staged or untracked.
    New,
    Deleted,
    /// Moved (maybe edited too); [`FileDiff::old_path`] holds where from.
    Renamed,
}

impl ChangeKind {
    /// The change in words: `modified`, `new`, `deleted`, `renamed`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Modified => "modified",
            Self::New => "new",
            Self::Deleted => "deleted",
            Self::Renamed => "renamed",
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
    /// The text, without the marker and the line ending.
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
}

/// Why a file's diff is shown as one line until the person asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    Binary,
    /// Its diff has this many lines (more than [`MAX_SHOWN_LINES`]).
    ManyLines(usize),
    /// The file has this many bytes (more than [`MAX_SHOWN_BYTES`]).
    LargeFile(u64),
}

impl Summary {
    /// The summary in words, e.g. `binary file` or `diff of 12,000 lines`.
    pub fn describe(self) -> String {
        match self {
            Self::Binary => "binary file".to_owned(),
            Self::ManyLines(n) => format!("diff of {} lines", crate::thousands(n)),
            Self::LargeFile(bytes) => format!("file of {} KiB", crate::thousands(kib(bytes))),
        }
    }
}

fn kib(bytes: u64) -> usize {
    usize::try_from(bytes / 1024).unwrap_or(usize::MAX)
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The path now (for a deletion, the path it had), relative to the repository's root.
    pub path: String,
    /// Where a renamed file came from.
    pub old_path: Option<String>,
    pub kind: ChangeKind,
    /// Not yet known to git (deleting it is the only way to revert it).
    pub untracked: bool,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    pub hunks: Vec<Hunk>,
    /// Set when the diff is shown as one line unless asked for.
    pub summary: Option<Summary>,
}

impl FileDiff {
    /// The number of hunk lines (headers not counted).
    pub fn line_count(&self) -> usize {
        self.hunks.iter().map(|h| h.lines.len()).sum()
    }
}

impl Git {
    /// The commit `HEAD` names now, if any.
    pub fn head(&self, root: &Path) -> Option<String> {
        self.run(root, &["rev-parse", "--verify", "-q", "HEAD"])
            .ok()
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The uncommitted diff of the repository at `root` (its top directory): tracked
    /// changes against `HEAD`, then untracked files as new files; sorted by path, the host's
    /// own runtime files left out.
    pub fn diff(&self, root: &Path) -> Result<Vec<FileDiff>, GitError> {
        self.diff_from(root, None)
    }

    /// Like [`Git::diff`], but against commit `base` when given (a workflow phase's changes,
    /// committed since `base` or not), instead of `HEAD`.
    pub fn diff_from(&self, root: &Path, base: Option<&str>) -> Result<Vec<FileDiff>, GitError> {
        let base = match base {
            Some(base) => base,
            None if self.head(root).is_some() => "HEAD",
            None => EMPTY_TREE,
        };
        let out = self.run(
            root,
            &[
                "-c",
                "core.quotePath=false",
                "-c",
                "diff.noprefix=false",
                "-c",
                "diff.mnemonicPrefix=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "-M",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                base,
                "--",
            ],
        )?;
        let mut files = parse_diff(&String::from_utf8_lossy(&out));
        let untracked = self.run(
            root,
            &[
                "-c",
                "core.quotePath=false",
                "ls-files",
                "--others",
                "--exclude-standard",
                "-z",
            ],
        )?;
        for path in untracked.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            files.push(untracked_file(root, path));
        }
        files.retain(|f| !is_host_runtime(&f.path));
        for file in &mut files {
            if file.summary.is_none() {
                file.summary = summary_of(root, file);
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

/// Whether a file's diff is summarised: too many lines, or too large a file.
fn summary_of(root: &Path, file: &FileDiff) -> Option<Summary> {
    let lines = file.line_count();
    if lines > MAX_SHOWN_LINES {
        return Some(Summary::ManyLines(lines));
    }
    let bytes = std::fs::symlink_metadata(root.join(&file.path)).map_or(0, |m| m.len());
    (bytes > MAX_SHOWN_BYTES).then_some(Summary::LargeFile(bytes))
}

/// An untracked file as a new file's diff: every line added.
fn untracked_file(root: &Path, path: String) -> FileDiff {
    let mut file = FileDiff {
        path,
        old_path: None,
        kind: ChangeKind::New,
        untracked: true,
        added: 0,
        removed: 0,
        hunks: Vec::new(),
        summary: None,
    };
    let full = root.join(&file.path);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(e) => {
            tracing::debug!(path = %full.display(), "untracked file went away: {e}");
            return file;
        }
    };
    if meta.is_symlink() {
        let target =
            std::fs::read_link(&full).map_or_else(|_| String::new(), |t| t.display().to_string());
        file.hunks = vec![all_added(vec![target], true)];
        file.added = 1;
        return file;
    }
    if meta.len() > MAX_READ_BYTES {
        file.summary = Some(Summary::LargeFile(meta.len()));
        return file;
    }
    let Ok(bytes) = std::fs::read(&full) else {
        return file;
    };
    if bytes.iter().take(8000).any(|b| *b == 0) {
        file.summary = Some(Summary::Binary);
        return file;
    }
    if bytes.is_empty() {
        return file;
    }
    let text = String::from_utf8_lossy(&bytes);
    let no_newline = !text.ends_with('\n');
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    file.added = lines.len();
    file.hunks = vec![all_added(lines, no_newline)];
    file
}

fn all_added(lines: Vec<String>, no_newline: bool) -> Hunk {
    let count = u32::try_from(lines.len()).unwrap_or(u32::MAX);
    let last = lines.len().saturating_sub(1);
    Hunk {
        header: format!("@@ -0,0 +1,{count} @@"),
        old_start: 0,
        old_count: 0,
        new_start: 1,
        new_count: count,
        lines: lines
            .into_iter()
            .enumerate()
            .map(|(i, text)| DiffLine {
                kind: LineKind::Added,
                old: None,
                new: Some(u32::try_from(i + 1).unwrap_or(u32::MAX)),
                text,
                no_newline: no_newline && i == last,
            })
            .collect(),
    }
}

/// Parses the output of `git diff` (unified, with `a/` and `b/` prefixes) into files.
pub fn parse_diff(out: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_no = 0u32;
    let mut new_no = 0u32;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(FileDiff {
                path: git_line_path(rest),
                old_path: None,
                kind: ChangeKind::Modified,
                untracked: false,
                added: 0,
                removed: 0,
                hunks: Vec::new(),
                summary: None,
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        let in_hunk = !file.hunks.is_empty();
        if let Some(header) = line.strip_prefix("@@ ") {
            if let Some(hunk) = parse_hunk_header(line, header) {
                old_no = hunk.old_start;
                new_no = hunk.new_start;
                file.hunks.push(hunk);
            }
            continue;
        }
        if !in_hunk {
            header_line(file, line);
            continue;
        }
        let Some(hunk) = file.hunks.last_mut() else {
            continue;
        };
        let (kind, text) = match line.chars().next() {
            Some('+') => (LineKind::Added, &line[1..]),
            Some('-') => (LineKind::Removed, &line[1..]),
            Some(' ') => (LineKind::Context, &line[1..]),
            Some('\\') => {
                if let Some(last) = hunk.lines.last_mut() {
                    last.no_newline = true;
                }
                continue;
            }
            // An empty context line (some tools strip the space) or anything else.
            None => (LineKind::Context, ""),
            Some(_) => continue,
        };
        let (old, new) = match kind {
            LineKind::Context => (Some(old_no), Some(new_no)),
            LineKind::Added => (None, Some(new_no)),
            LineKind::Removed => (Some(old_no), None),
        };
        if old.is_some() {
            old_no += 1;
        }
        if new.is_some() {
            new_no += 1;
        }
        match kind {
            LineKind::Added => file.added += 1,
            LineKind::Removed => file.removed += 1,
            LineKind::Context => {}
        }
        hunk.lines.push(DiffLine {
            kind,
            old,
            new,
            text: text.to_owned(),
            no_newline: false,
        });
    }
    files
}

/// A header line between `diff --git` and the first hunk.
fn header_line(file: &mut FileDiff, line: &str) {
    if line.starts_with("new file mode") {
        file.kind = ChangeKind::New;
    } else if line.starts_with("deleted file mode") {
        file.kind = ChangeKind::Deleted;
    } else if let Some(from) = line.strip_prefix("rename from ") {
        file.kind = ChangeKind::Renamed;
        file.old_path = Some(unquote(from));
    } else if let Some(to) = line.strip_prefix("rename to ") {
        file.kind = ChangeKind::Renamed;
        file.path = unquote(to);
    } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
        file.summary = Some(Summary::Binary);
    } else if let Some(path) = line.strip_prefix("+++ ") {
        if path != "/dev/null" {
            file.path = strip_prefix_path(&unquote(path), "b/");
        }
    } else if let Some(path) = line.strip_prefix("--- ")
        && path != "/dev/null"
        && file.kind == ChangeKind::Deleted
    {
        file.path = strip_prefix_path(&unquote(path), "a/");
    }
}

/// `@@ -a,b +c,d @@ section`.
fn parse_hunk_header(line: &str, after_at: &str) -> Option<Hunk> {
    let mut parts = after_at.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some(Hunk {
        header: line.to_owned(),
        old_start,
        old_count,
        new_start,
        new_count,
        lines: Vec::new(),
    })
}

fn range(text: &str) -> Option<(u32, u32)> {
    match text.split_once(',') {
        Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
        None => Some((text.parse().ok()?, 1)),
    }
}

/// The path of a `diff --git a/P b/P` line (the two halves are the same but for renames,
/// whose real paths come from the `rename` lines).
fn git_line_path(rest: &str) -> String {
    if rest.starts_with('"') {
        // `"a/x y" "b/x y"`: the second quoted word.
        if let Some(start) = rest.rfind(" \"") {
            return strip_prefix_path(&unquote(&rest[start + 1..]), "b/");
        }
    }
    // Same path twice: `a/` + P + ` b/` + P.
    let len = rest.len();
    if len >= 5 && (len - 5).is_multiple_of(2) {
        let half = (len - 5) / 2;
        if rest.is_char_boundary(half + 2)
            && rest.get(half + 2..half + 5) == Some(" b/")
            && rest.get(2..half + 2) == rest.get(half + 5..)
        {
            return rest[2..half + 2].to_owned();
        }
    }
    rest.split_once(" b/")
        .map_or_else(|| rest.to_owned(), |(_, b)| b.to_owned())
}

fn strip_prefix_path(path: &str, prefix: &str) -> String {
    // `--- a/x\t` can carry a trailing tab when the path has spaces.
    let path = path.trim_end_matches('\t');
    path.strip_prefix(prefix).unwrap_or(path).to_owned()
}

/// Undoes git's C-style quoting of a path (`"a\tb"`); an unquoted path is returned as is.
fn unquote(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(d @ b'0'..=b'7') => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        value = value * 8 + u32::from(n - b'0');
                        chars.next();
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@ fn main
 one
-two
+TWO
+three
 four
@@ -10 +11 @@
-x
\\ No newline at end of file
+y
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3333333..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.md b/new name.md
similarity index 90%
rename from old name.md
rename to new name.md
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..4444444
Binary files /dev/null and b/logo.png differ
";

    #[test]
    fn parses_files_hunks_and_line_numbers() {
        let files = parse_diff(SAMPLE);
        let summary: Vec<(&str, ChangeKind, usize, usize)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.kind, f.added, f.removed))
            .collect();
        assert_eq!(
            summary,
            [
                ("src/lib.rs", ChangeKind::Modified, 3, 2),
                ("gone.txt", ChangeKind::Deleted, 0, 1),
                ("new name.md", ChangeKind::Renamed, 0, 0),
                ("logo.png", ChangeKind::New, 0, 0),
            ]
        );
        assert_eq!(files[2].old_path.as_deref(), Some("old name.md"));
        assert_eq!(files[3].summary, Some(Summary::Binary));
        let hunk = &files[0].hunks[0];
        assert_eq!((hunk.old_start, hunk.new_start, hunk.new_count), (1, 1, 4));
        let numbered: Vec<(char, Option<u32>, Option<u32>, &str)> = hunk
            .lines
            .iter()
            .map(|l| (l.kind.marker(), l.old, l.new, l.text.as_str()))
            .collect();
        assert_eq!(
            numbered,
            [
                (' ', Some(1), Some(1), "one"),
                ('-', Some(2), None, "two"),
                ('+', None, Some(2), "TWO"),
                ('+', None, Some(3), "three"),
                (' ', Some(3), Some(4), "four"),
            ]
        );
        let second = &files[0].hunks[1];
        assert_eq!((second.old_count, second.new_start), (1, 11));
        assert!(second.lines.iter().all(|l| l.no_newline));
    }

    #[test]
    fn quoted_paths_are_unquoted() {
        assert_eq!(unquote("\"a\\tb\\303\\251\""), "a\tbé");
        assert_eq!(git_line_path("\"a/x\\ty\" \"b/x\\ty\""), "x\ty");
        assert_eq!(git_line_path("a/a b/c b/a b/c"), "a b/c");
    }
}
