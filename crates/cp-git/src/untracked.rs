//! Untracked files as new files' diffs, read as little as possible: a file whose size and
//! modification time are those of the last reading is taken from it, and one reading reads
//! at most [`READ_PER_READING`] bytes of new files and keeps at most [`KEPT_BYTES`] in all.
//! A file past either is listed without its lines ([`Summary::Unread`]) until a later reading
//! reads it or the person asks for it; so a `node_modules/` of 60,000 files costs a `stat`
//! each per reading, not a read.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use crate::diff::{DiffKind, DiffLine, FileDiff, Hunk, LineKind, Summary, os_path};
use crate::parse::shown;

/// An untracked file larger than this is not read at all.
pub(crate) const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;
/// Bytes of untracked files one reading reads (files taken from the last reading are free).
pub const READ_PER_READING: u64 = 8 * 1024 * 1024;
/// Bytes of untracked files' content one reading holds in all.
pub const KEPT_BYTES: u64 = 64 * 1024 * 1024;

/// What one reading may still read, and what the last one read.
pub(crate) struct UntrackedBudget<'a> {
    previous: HashMap<&'a [u8], &'a FileDiff>,
    load: &'a [String],
    kept: u64,
    pub read_files: usize,
    pub read_bytes: u64,
}

impl<'a> UntrackedBudget<'a> {
    pub fn new(previous: &'a [FileDiff], load: &'a [String]) -> Self {
        Self {
            previous: previous
                .iter()
                .filter(|f| f.untracked && f.stamp.is_some())
                .map(|f| (f.path_bytes.as_slice(), f))
                .collect(),
            load,
            kept: 0,
            read_files: 0,
            read_bytes: 0,
        }
    }
}

/// The untracked file `path` (bytes, relative to `root`) as a new file's diff: every line
/// added, or a summary.
pub(crate) fn read(root: &Path, path: &[u8], budget: &mut UntrackedBudget<'_>) -> FileDiff {
    let mut file = FileDiff::named(path.to_vec());
    file.kind = DiffKind::New;
    file.untracked = true;
    let full = root.join(os_path(path));
    let started = std::time::SystemTime::now();
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(e) => {
            tracing::debug!(path = %full.display(), "untracked file went away: {e}");
            return file;
        }
    };
    let stamp = (
        meta.len(),
        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    );
    if let Some(old) = budget.previous.get(path)
        && old.stamp == Some(stamp)
        && old.summary != Some(Summary::Unread)
    {
        budget.kept += stamp.0;
        return (*old).clone();
    }
    let wanted = budget.load.contains(&file.path);
    // A racy file's stat data may stay as it is through its next write: it is read again
    // next time ([`cp_base::racy`]).
    let (mtime, ctime) = cp_base::racy::Stamp::times(&meta);
    file.stamp = (!cp_base::racy::is_racy(started, mtime, ctime)).then_some(stamp);
    if meta.is_symlink() {
        let target = std::fs::read_link(&full)
            .map_or_else(|_| Vec::new(), |t| t.into_os_string().into_encoded_bytes());
        file.hunks = vec![all_added(&target)];
        file.added = 1;
        return file;
    }
    if meta.len() > MAX_READ_BYTES {
        file.summary = Some(Summary::LargeFile(meta.len()));
        return file;
    }
    let over =
        budget.read_bytes + meta.len() > READ_PER_READING || budget.kept + meta.len() > KEPT_BYTES;
    if over && !wanted {
        file.summary = Some(Summary::Unread);
        return file;
    }
    let Ok(bytes) = std::fs::read(&full) else {
        return file;
    };
    budget.read_files += 1;
    budget.read_bytes += meta.len();
    budget.kept += meta.len();
    if bytes.iter().take(8000).any(|b| *b == 0) {
        file.summary = Some(Summary::Binary);
        return file;
    }
    if bytes.is_empty() {
        return file;
    }
    let hunk = all_added(&bytes);
    file.added = hunk.lines.len();
    file.hunks = vec![hunk];
    file
}

/// Every line of `bytes` added (a file that does not end in a newline says so).
pub(crate) fn all_added(bytes: &[u8]) -> Hunk {
    let no_newline = !bytes.ends_with(b"\n");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
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
                text: shown(text),
                no_newline: no_newline && i == last,
            })
            .collect(),
        raw: Vec::new(),
    }
}
