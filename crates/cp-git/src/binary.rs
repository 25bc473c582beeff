//! A binary file shown anyway (`l` in the Changes panel): its sizes before and after, and
//! then its text when both sides are UTF-8 (a file git calls binary for a NUL byte or a
//! `binary` attribute), else a hex view of the changed region (the bytes between the common
//! start and the common end, sixteen a row, each side at most [`HEX_ROWS`] rows).
//!
//! The result is hunks like a text file's, so the panel lays it out, scrolls and searches it
//! the same way; they carry no patch (`Hunk::raw` is empty), so a binary file is only ever
//! reverted whole.

use std::fmt::Write as _;
use std::path::Path;

use crate::diff::{DiffKind, DiffLine, FileDiff, Hunk, LineKind};
use crate::git::Git;
use crate::untracked::MAX_READ_BYTES;

/// Rows of hex the view shows of each side.
pub const HEX_ROWS: usize = 32;
/// Bytes a hex row shows.
const ROW: usize = 16;
/// Lines of context around each change of a text view.
const CONTEXT: usize = 3;

impl Git {
    /// Fills the hunks of the binary `file` with what a person can read of it: its sizes,
    /// and its text or a hex view of the changed region. `base` is what the diff compares
    /// with.
    pub(crate) fn show_binary(&self, root: &Path, file: &mut FileDiff, base: &str) {
        let old = match (&file.old_blob, file.untracked) {
            (Some(blob), false) => self.blob(root, blob, base, file),
            _ => Side::Absent,
        };
        let new = if file.kind == DiffKind::Deleted {
            Side::Absent
        } else {
            read_side(&file.full_path(root))
        };
        file.hunks = view(&old, &new);
    }

    /// The bytes of blob `blob` (size checked first, so a huge one is not read).
    fn blob(&self, root: &Path, blob: &str, base: &str, file: &FileDiff) -> Side {
        let size = self
            .run(root, &["cat-file", "-s", blob])
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out).trim().parse::<u64>().ok());
        match size {
            Some(size) if size > MAX_READ_BYTES => Side::TooLarge(size),
            Some(_) => self
                .run(root, &["cat-file", "blob", blob])
                .map_or(Side::Absent, Side::Bytes),
            None => {
                tracing::debug!(path = %file.path, base, blob, "the old blob is not readable");
                Side::Absent
            }
        }
    }
}

/// One side of the comparison.
enum Side {
    Absent,
    Bytes(Vec<u8>),
    TooLarge(u64),
}

impl Side {
    fn len(&self) -> Option<u64> {
        match self {
            Self::Absent => None,
            Self::Bytes(b) => Some(b.len() as u64),
            Self::TooLarge(n) => Some(*n),
        }
    }

    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(b) => Some(b),
            Self::Absent => Some(&[]),
            Self::TooLarge(_) => None,
        }
    }
}

fn read_side(path: &Path) -> Side {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.len() > MAX_READ_BYTES => Side::TooLarge(meta.len()),
        Ok(_) => std::fs::read(path).map_or(Side::Absent, Side::Bytes),
        Err(_) => Side::Absent,
    }
}

/// `1,204 bytes`, or `none` for a side that does not exist.
fn size(side: &Side) -> String {
    side.len().map_or_else(
        || "none".to_owned(),
        |n| {
            format!(
                "{} bytes",
                crate::thousands(usize::try_from(n).unwrap_or(usize::MAX))
            )
        },
    )
}

fn view(old: &Side, new: &Side) -> Vec<Hunk> {
    let sizes = format!("{} → {}", size(old), size(new));
    let (Some(a), Some(b)) = (old.bytes(), new.bytes()) else {
        return vec![hunk(
            format!("@@ {sizes} · too large to show @@"),
            Vec::new(),
        )];
    };
    if a == b {
        return vec![hunk(
            format!("@@ {sizes} · the bytes are the same @@"),
            Vec::new(),
        )];
    }
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(a), Ok(b)) => text_view(&sizes, a, b),
        _ => vec![hex_view(&sizes, a, b)],
    }
}

fn hunk(header: String, lines: Vec<DiffLine>) -> Hunk {
    Hunk {
        header,
        old_start: 0,
        old_count: 0,
        new_start: 0,
        new_count: 0,
        lines,
        raw: Vec::new(),
    }
}

/// The text of both sides as hunks, numbered like a text file's.
fn text_view(sizes: &str, old: &str, new: &str) -> Vec<Hunk> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut hunks = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        let mut lines = Vec::new();
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    similar::ChangeTag::Equal => LineKind::Context,
                    similar::ChangeTag::Delete => LineKind::Removed,
                    similar::ChangeTag::Insert => LineKind::Added,
                };
                let number = |n: Option<usize>| n.and_then(|n| u32::try_from(n + 1).ok());
                let text = change.value();
                lines.push(DiffLine {
                    kind,
                    old: number(change.old_index()),
                    new: number(change.new_index()),
                    text: crate::parse::shown(text.strip_suffix('\n').unwrap_or(text).as_bytes()),
                    no_newline: !text.ends_with('\n'),
                });
            }
        }
        let header = if i == 0 {
            format!("@@ {sizes} · shown as text (UTF-8) @@")
        } else {
            "@@ … @@".to_owned()
        };
        hunks.push(hunk(header, lines));
    }
    hunks
}

/// The changed region of both sides in hex: from the row holding the first differing byte to
/// the row holding the last one of each side.
fn hex_view(sizes: &str, old: &[u8], new: &[u8]) -> Hunk {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let start = prefix / ROW * ROW;
    let mut lines = Vec::new();
    for (bytes, kind) in [(old, LineKind::Removed), (new, LineKind::Added)] {
        let end = bytes.len() - suffix;
        let rows = (end.saturating_sub(start))
            .div_ceil(ROW)
            .max(usize::from(end > start));
        for row in 0..rows.min(HEX_ROWS) {
            let at = start + row * ROW;
            let chunk = &bytes[at..(at + ROW).min(bytes.len())];
            lines.push(DiffLine {
                kind,
                old: None,
                new: None,
                text: hex_row(at, chunk),
                no_newline: false,
            });
        }
        if rows > HEX_ROWS {
            let more = end - (start + HEX_ROWS * ROW);
            lines.push(DiffLine {
                kind,
                old: None,
                new: None,
                text: format!("… {} more changed byte(s)", crate::thousands(more)),
                no_newline: false,
            });
        }
    }
    hunk(
        format!("@@ {sizes} · bytes differ from offset 0x{prefix:x} · hex @@"),
        lines,
    )
}

/// `000001a0  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|`
fn hex_row(offset: usize, bytes: &[u8]) -> String {
    let mut out = format!("{offset:08x} ");
    for i in 0..ROW {
        if i % 8 == 0 {
            out.push(' ');
        }
        match bytes.get(i) {
            Some(b) => {
                let _ = write!(out, "{b:02x} ");
            }
            None => out.push_str("   "),
        }
    }
    out.push(' ');
    out.push('|');
    out.extend(bytes.iter().map(|&b| {
        if b.is_ascii_graphic() || b == b' ' {
            char::from(b)
        } else {
            '.'
        }
    }));
    out.push('|');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_shows_the_changed_rows_of_each_side_with_sizes() {
        let old: Vec<u8> = (0..64u8).collect();
        let mut new = old.clone();
        new[20] = 0xff;
        new.push(0);
        let hunks = view(&Side::Bytes(old), &Side::Bytes(new));
        assert_eq!(hunks.len(), 1);
        let hunk = &hunks[0];
        assert_eq!(
            hunk.header,
            "@@ 64 bytes → 65 bytes · bytes differ from offset 0x14 · hex @@"
        );
        let text: Vec<(char, &str)> = hunk
            .lines
            .iter()
            .map(|l| (l.kind.marker(), &l.text[..10]))
            .collect();
        // From the row of byte 0x14 to the end of each side (the added byte moved the end).
        assert_eq!(
            text,
            [
                ('-', "00000010  "),
                ('-', "00000020  "),
                ('-', "00000030  "),
                ('+', "00000010  "),
                ('+', "00000020  "),
                ('+', "00000030  "),
                ('+', "00000040  "),
            ]
        );
        assert!(
            hunk.lines[3]
                .text
                .starts_with("00000010  10 11 12 13 ff 15"),
            "{}",
            hunk.lines[3].text
        );
        assert!(hunk.lines[0].text.ends_with("|................|"));
    }

    #[test]
    fn utf8_on_both_sides_is_shown_as_text() {
        let hunks = view(
            &Side::Bytes(b"one\0\ntwo\nthree\n".to_vec()),
            &Side::Bytes(b"one\0\nTWO\nthree\n".to_vec()),
        );
        let lines: Vec<(char, &str)> = hunks[0]
            .lines
            .iter()
            .map(|l| (l.kind.marker(), l.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            [(' ', "one\0"), ('-', "two"), ('+', "TWO"), (' ', "three")]
        );
        assert!(
            hunks[0].header.contains("15 bytes → 15 bytes"),
            "{}",
            hunks[0].header
        );
    }

    #[test]
    fn a_new_or_huge_file_says_so() {
        let hunks = view(&Side::Absent, &Side::Bytes(vec![0, 1, 2]));
        assert!(
            hunks[0].header.starts_with("@@ none → 3 bytes"),
            "{}",
            hunks[0].header
        );
        assert_eq!(hunks[0].lines.len(), 1);
        let hunks = view(&Side::TooLarge(40 << 20), &Side::Bytes(vec![1]));
        assert!(
            hunks[0].header.contains("too large to show"),
            "{}",
            hunks[0].header
        );
    }
}
