//! `File_read`: numbered lines of a text file, a window at a time.

use std::fmt::Write as _;
use std::path::Path;

use cp_base::{Args, ToolResult};
use serde_json::Value;

use super::{confine, read_text};

const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut so one minified file cannot flood the model's context.
const MAX_LINE_CHARS: usize = 2000;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, String> {
    const TOOL: &str = "File_read";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path").map_err(|e| e.text)?, TOOL)?;
    let text = read_text(&path, TOOL)?;
    let offset = usize::try_from(args.opt_u64("offset").map_err(|e| e.text)?.unwrap_or(1))
        .unwrap_or(usize::MAX)
        .max(1);
    let limit = usize::try_from(
        args.opt_u64("limit")
            .map_err(|e| e.text)?
            .unwrap_or(DEFAULT_LIMIT as u64),
    )
    .unwrap_or(DEFAULT_LIMIT);
    let total = text.lines().count();
    if total == 0 {
        return Ok(ToolResult::ok(format!("{} is empty.", path.relative)));
    }
    if offset > total {
        return Err(format!(
            "{TOOL}: 'offset' {offset} is past the end of '{}' ({total} lines)",
            path.relative
        ));
    }
    let mut out = String::new();
    for (n, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        let shown: String = line.chars().take(MAX_LINE_CHARS).collect();
        let cut = if shown.len() < line.len() {
            " […line cut]"
        } else {
            ""
        };
        let _ = writeln!(out, "{:>6}\t{shown}{cut}", n + 1);
    }
    let last = (offset - 1 + limit).min(total);
    if last < total {
        let _ = write!(
            out,
            "[lines {offset}-{last} of {total}; use offset={} to read on]",
            last + 1
        );
    }
    Ok(ToolResult::ok(out))
}
