//! Reading `git diff` output into files → hunks → lines, byte for byte.
//!
//! The output is split at `\n` only and never decoded as a whole: each hunk keeps the exact
//! bytes git printed (a `\r` before the newline, bytes that are not UTF-8, `\ No newline at
//! end of file`), so a hunk is reverted with the very patch git gave, and each path keeps its
//! bytes (a name need not be UTF-8). Only the text shown to a person is decoded, lossily.

use crate::diff::{DiffKind, DiffLine, FileDiff, Hunk, LineKind, Summary};

/// Parses the output of `git diff` (unified, with `a/` and `b/` prefixes) into files. A path
/// that changed between a file and a symlink (git prints a deletion and an addition) is one
/// file, [`DiffKind::TypeChanged`].
pub fn parse_diff(out: impl AsRef<[u8]>) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut old_no = 0u32;
    let mut new_no = 0u32;
    let out = out.as_ref();
    for raw in out.split_inclusive(|b| *b == b'\n') {
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        if let Some(rest) = line.strip_prefix(b"diff --git ") {
            files.push(FileDiff::named(git_line_path(rest)));
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if line.starts_with(b"@@ ") {
            if let Some(hunk) = parse_hunk_header(line, raw) {
                old_no = hunk.old_start;
                new_no = hunk.new_start;
                file.hunks.push(hunk);
            }
            continue;
        }
        let Some(hunk) = file.hunks.last_mut() else {
            header_line(file, line);
            continue;
        };
        let (kind, body) = match line.first() {
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'\\') => {
                if let Some(last) = hunk.lines.last_mut() {
                    last.no_newline = true;
                }
                hunk.raw.extend_from_slice(raw);
                continue;
            }
            // An empty context line (`diff.suppressBlankEmpty` strips the space).
            None => (LineKind::Context, line),
            Some(_) => continue,
        };
        hunk.raw.extend_from_slice(raw);
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
            text: shown(body),
            no_newline: false,
        });
    }
    merge_type_changes(files)
}

/// A line as a person reads it: decoded lossily, without the `\r` of a CRLF ending.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Git prints a path that became a symlink (or the reverse) as a deletion followed by an
/// addition of the same path: one file whose type changed.
fn merge_type_changes(files: Vec<FileDiff>) -> Vec<FileDiff> {
    let mut out: Vec<FileDiff> = Vec::with_capacity(files.len());
    for file in files {
        if let Some(last) = out.last_mut()
            && last.path_bytes == file.path_bytes
            && last.kind == DiffKind::Deleted
            && file.kind == DiffKind::New
        {
            last.kind = DiffKind::TypeChanged;
            last.added += file.added;
            last.hunks.extend(file.hunks);
            last.summary = last.summary.or(file.summary);
            last.submodule |= file.submodule;
            continue;
        }
        out.push(file);
    }
    out
}

/// A header line between `diff --git` and the first hunk.
fn header_line(file: &mut FileDiff, line: &[u8]) {
    if line.starts_with(b"new file mode") {
        file.kind = DiffKind::New;
        file.submodule |= line.ends_with(b" 160000");
    } else if line.starts_with(b"deleted file mode") {
        file.kind = DiffKind::Deleted;
        file.submodule |= line.ends_with(b" 160000");
    } else if let Some(rest) = line.strip_prefix(b"index ") {
        file.submodule |= rest.ends_with(b" 160000");
        let blobs = rest.split(|b| *b == b' ').next().unwrap_or_default();
        if let Some(at) = blobs.windows(2).position(|w| w == b"..") {
            let old = String::from_utf8_lossy(&blobs[..at]).into_owned();
            file.old_blob = (!old.is_empty() && !old.bytes().all(|b| b == b'0')).then_some(old);
        }
    } else if let Some(from) = line.strip_prefix(b"rename from ") {
        file.kind = DiffKind::Renamed;
        file.set_old_path(unquote(from));
    } else if let Some(to) = line.strip_prefix(b"rename to ") {
        file.kind = DiffKind::Renamed;
        file.set_path(unquote(to));
    } else if line.starts_with(b"Binary files ") || line == b"GIT binary patch" {
        file.summary = Some(Summary::Binary);
    } else if let Some(path) = line.strip_prefix(b"+++ ") {
        if path != b"/dev/null" {
            file.set_path(strip_prefix_path(&unquote(path), b"b/"));
        }
    } else if let Some(path) = line.strip_prefix(b"--- ")
        && path != b"/dev/null"
        && file.kind == DiffKind::Deleted
    {
        file.set_path(strip_prefix_path(&unquote(path), b"a/"));
    }
}

/// `@@ -a,b +c,d @@ section`; `raw` is the whole line with its newline.
fn parse_hunk_header(line: &[u8], raw: &[u8]) -> Option<Hunk> {
    let text = std::str::from_utf8(line.get(3..)?).ok().or_else(|| {
        // The section text after the second `@@` may be in any encoding.
        let end = line.windows(2).skip(3).position(|w| w == b"@@")? + 3;
        std::str::from_utf8(&line[3..end]).ok()
    })?;
    let mut parts = text.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let (old_start, old_count) = range(old)?;
    let (new_start, new_count) = range(new)?;
    Some(Hunk {
        header: shown(line),
        old_start,
        old_count,
        new_start,
        new_count,
        lines: Vec::new(),
        raw: raw.to_vec(),
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
fn git_line_path(rest: &[u8]) -> Vec<u8> {
    if rest.starts_with(b"\"")
        && let Some(start) = rest.windows(2).rposition(|w| w == b" \"")
    {
        // `"a/x y" "b/x y"`: the second quoted word.
        return strip_prefix_path(&unquote(&rest[start + 1..]), b"b/");
    }
    if rest.ends_with(b"\"")
        && let Some(start) = rest.windows(2).rposition(|w| w == b" \"")
    {
        return strip_prefix_path(&unquote(&rest[start + 1..]), b"b/");
    }
    // Same path twice: `a/` + P + ` b/` + P.
    let len = rest.len();
    if len >= 5 && (len - 5).is_multiple_of(2) {
        let half = (len - 5) / 2;
        if rest.get(half + 2..half + 5) == Some(b" b/")
            && rest.get(2..half + 2) == rest.get(half + 5..)
        {
            return rest[2..half + 2].to_vec();
        }
    }
    match rest.windows(3).position(|w| w == b" b/") {
        Some(at) => rest[at + 3..].to_vec(),
        None => rest.to_vec(),
    }
}

fn strip_prefix_path(path: &[u8], prefix: &[u8]) -> Vec<u8> {
    // `--- a/x y\t`: git ends the name with a tab when it holds a space.
    let path = path.strip_suffix(b"\t").unwrap_or(path);
    path.strip_prefix(prefix).unwrap_or(path).to_vec()
}

/// Undoes git's C-style quoting of a path (`"a\tb"`); an unquoted path is returned as is.
pub(crate) fn unquote(text: &[u8]) -> Vec<u8> {
    let Some(inner) = text.strip_prefix(b"\"").and_then(|t| t.strip_suffix(b"\"")) else {
        return text.to_vec();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.iter().copied().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(0x07),
            Some(b'b') => bytes.push(0x08),
            Some(b'f') => bytes.push(0x0c),
            Some(b'v') => bytes.push(0x0b),
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
    bytes
}

/// `prefix` + `path` in git's C-style quotes, every byte outside printable ASCII as an octal
/// escape: what `git apply` reads back exactly, whatever the name holds (a tab, a quote, a
/// space, bytes that are not UTF-8).
pub(crate) fn quote(prefix: &[u8], path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len() + prefix.len() + 2);
    out.push(b'"');
    for &b in prefix.iter().chain(path) {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
        }
    }
    out.push(b'"');
    out
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
        let summary: Vec<(&str, DiffKind, usize, usize)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.kind, f.added, f.removed))
            .collect();
        assert_eq!(
            summary,
            [
                ("src/lib.rs", DiffKind::Modified, 3, 2),
                ("gone.txt", DiffKind::Deleted, 0, 1),
                ("new name.md", DiffKind::Renamed, 0, 0),
                ("logo.png", DiffKind::New, 0, 0),
            ]
        );
        assert_eq!(files[2].old_path.as_deref(), Some("old name.md"));
        assert_eq!(files[3].summary, Some(Summary::Binary));
        assert_eq!(files[0].old_blob.as_deref(), Some("1111111"));
        assert_eq!(files[3].old_blob, None);
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
        assert_eq!(
            second.raw,
            b"@@ -10 +11 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn hunks_keep_their_bytes_and_paths_theirs() {
        let raw = b"diff --git \"a/caf\\351\\tx\" \"b/caf\\351\\tx\"\nindex 1..2 100644\n\
                    --- \"a/caf\\351\\tx\"\n+++ \"b/caf\\351\\tx\"\n@@ -1 +1 @@\n-caf\xe9\r\n+cafe\n";
        let files = parse_diff(raw);
        assert_eq!(files[0].path_bytes, b"caf\xe9\tx");
        assert_eq!(files[0].path, "caf\u{fffd}\tx");
        let hunk = &files[0].hunks[0];
        assert_eq!(hunk.raw, b"@@ -1 +1 @@\n-caf\xe9\r\n+cafe\n");
        assert_eq!(hunk.lines[0].text, "caf\u{fffd}");
    }

    #[test]
    fn a_file_that_became_a_symlink_is_one_type_change() {
        let diff = "diff --git a/tc.txt b/tc.txt
deleted file mode 100644
index ce01362..0000000
--- a/tc.txt
+++ /dev/null
@@ -1 +0,0 @@
-hello
diff --git a/tc.txt b/tc.txt
new file mode 120000
index 0000000..8ce4f79
--- /dev/null
+++ b/tc.txt
@@ -0,0 +1 @@
+a.py
\\ No newline at end of file
";
        let files = parse_diff(diff);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].kind, DiffKind::TypeChanged);
        assert_eq!((files[0].added, files[0].removed), (1, 1));
        assert_eq!(files[0].hunks.len(), 2);
    }

    #[test]
    fn quoted_paths_are_unquoted_and_quoted_back() {
        assert_eq!(unquote(b"\"a\\tb\\303\\251\""), "a\tbé".as_bytes());
        assert_eq!(git_line_path(b"\"a/x\\ty\" \"b/x\\ty\""), b"x\ty");
        assert_eq!(git_line_path(b"a/a b/c b/a b/c"), b"a b/c");
        for path in [&b"tab\tname.txt"[..], b"caf\xe9 au \"lait\"\\", b"plain.rs"] {
            let quoted = quote(b"a/", path);
            assert_eq!(unquote(&quoted), [b"a/", path].concat());
        }
    }
}
