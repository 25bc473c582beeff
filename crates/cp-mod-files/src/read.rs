//! `File_read`: numbered lines of a text file, a window at a time.
//!
//! The file is streamed: lines before `offset` are skipped without being kept, lines in the
//! window are kept up to [`MAX_LINE_CHARS`], and reading stops after [`MAX_READ_BYTES`] with
//! a note, so a huge (or sparse) file costs a bounded amount of time and memory. Only regular
//! files are read (see [`Beneath::open_regular`]).

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use cp_base::{Args, ToolResult};
use serde_json::Value;

use super::beneath::Beneath;
use super::confine::{ConfinedPath, confine};
use super::error::{FileError, refused};

const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut so one minified file cannot flood the model's context.
const MAX_LINE_CHARS: usize = 2000;
/// Bytes kept of one line: enough for [`MAX_LINE_CHARS`] characters of any width.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;
/// Reading stops here, wherever the window is.
const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    const TOOL: &str = "File_read";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path")?, TOOL)?;
    let offset = usize::try_from(args.opt_u64("offset")?.unwrap_or(1))
        .unwrap_or(usize::MAX)
        .max(1);
    let limit = usize::try_from(args.opt_u64("limit")?.unwrap_or(DEFAULT_LIMIT as u64))
        .unwrap_or(DEFAULT_LIMIT);
    let file = Beneath::open(root, TOOL)?.open_regular(&path, TOOL)?;
    let scan = scan(BufReader::new(file.take(MAX_READ_BYTES)), offset, limit)
        .map_err(|e| FileError::io(TOOL, "read", &path.relative, e))?;
    let rel = &path.relative;
    if scan.lines.is_empty() {
        return Err(match scan.total {
            Some(0) => return Ok(ToolResult::ok(format!("{rel} is empty."))),
            Some(total) => {
                refused!("{TOOL}: 'offset' {offset} is past the end of '{rel}' ({total} lines)")
            }
            None => refused!(
                "{TOOL}: reading '{rel}' stopped after {} MiB, before line {offset}; lines \
                 that far in cannot be read with File_read (use a console command such as \
                 `sed -n` instead)",
                MAX_READ_BYTES >> 20
            ),
        });
    }
    let mut out = String::new();
    let mut last = offset;
    for (n, bytes, cut) in &scan.lines {
        let text = decode(bytes, *cut)
            .ok_or_else(|| refused!("{TOOL}: '{rel}' is not UTF-8 text (binary file?)"))?;
        let shown: String = text.chars().take(MAX_LINE_CHARS).collect();
        let mark = if *cut || shown.len() < text.len() {
            " […line cut]"
        } else {
            ""
        };
        let _ = writeln!(out, "{n:>6}\t{shown}{mark}");
        last = *n;
    }
    match scan.total {
        Some(total) if last < total => {
            let _ = write!(
                out,
                "[lines {offset}-{last} of {total}; use offset={} to read on]",
                last + 1
            );
        }
        Some(_) => {}
        None => {
            let _ = write!(
                out,
                "[lines {offset}-{last}; reading stopped after {} MiB, the file goes on; use \
                 offset={} to read on]",
                MAX_READ_BYTES >> 20,
                last + 1
            );
        }
    }
    Ok(ToolResult::ok(out))
}

/// What one pass over the file found.
struct Scan {
    /// The window: line number, kept bytes, whether the line was cut.
    lines: Vec<(usize, Vec<u8>, bool)>,
    /// The number of lines, when the end of the file was reached.
    total: Option<usize>,
}

/// Keeps lines `first..first + limit` (1-based) and counts the rest, until the end of `reader`
/// (which is cut at [`MAX_READ_BYTES`]: a reader that hit the cap leaves the total unknown).
fn scan(mut reader: impl BufRead, first: usize, limit: usize) -> std::io::Result<Scan> {
    let last = first.saturating_add(limit).saturating_sub(1);
    let mut lines = Vec::new();
    let mut line_no = 1;
    let mut current = Vec::new();
    let mut cut = false;
    let mut partial = false;
    let mut read: u64 = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        let mut rest = buf;
        while !rest.is_empty() {
            let in_window = (first..=last).contains(&line_no);
            let (segment, ends_line) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], Some(i + 1)),
                None => (rest, None),
            };
            if in_window {
                let room = MAX_LINE_BYTES.saturating_sub(current.len());
                current.extend_from_slice(&segment[..segment.len().min(room)]);
                cut |= segment.len() > room;
            }
            if let Some(used) = ends_line {
                if in_window {
                    lines.push((line_no, std::mem::take(&mut current), cut));
                    cut = false;
                }
                line_no += 1;
                partial = false;
                rest = &rest[used..];
            } else {
                partial = true;
                rest = &[];
            }
        }
        reader.consume(len);
        read += len as u64;
    }
    if partial && (first..=last).contains(&line_no) {
        lines.push((line_no, current, cut));
    }
    let lines_seen = line_no - 1 + usize::from(partial);
    let total = (read < MAX_READ_BYTES).then_some(lines_seen);
    Ok(Scan { lines, total })
}

/// The kept bytes of a line as text; `None` for binary content (invalid UTF-8 or NUL). A line
/// cut at [`MAX_LINE_BYTES`] may end inside a character, which is dropped.
fn decode(bytes: &[u8], cut: bool) -> Option<String> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if cut && e.error_len().is_none() => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()?
        }
        Err(_) => return None,
    };
    (!text.contains('\0')).then(|| text.to_owned())
}

/// Reads a whole regular file as UTF-8 text, with a clear error for binary files, directories
/// and special files.
pub(super) fn read_text(
    beneath: &Beneath,
    path: &ConfinedPath,
    tool: &str,
) -> Result<String, FileError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut beneath.open_regular(path, tool)?, &mut bytes)
        .map_err(|e| FileError::io(tool, "read", &path.relative, e))?;
    String::from_utf8(bytes).map_err(|_| {
        refused!(
            "{tool}: '{}' is not UTF-8 text (binary file?)",
            path.relative
        )
    })
}
