//! `File_write`: create or replace a whole file, creating parent directories.

use std::path::Path;

use cp_base::{Args, ChangeKind, FileChange, ToolResult};
use serde_json::Value;

use super::confine;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, String> {
    const TOOL: &str = "File_write";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path").map_err(|e| e.text)?, TOOL)?;
    let content = args.str("content").map_err(|e| e.text)?;
    if path.absolute.is_dir() {
        return Err(format!("{TOOL}: '{}' is a directory", path.relative));
    }
    let existed = path.absolute.exists();
    if let Some(parent) = path.absolute.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            format!(
                "{TOOL}: cannot create the directory of '{}': {e}",
                path.relative
            )
        })?;
    }
    std::fs::write(&path.absolute, content)
        .map_err(|e| format!("{TOOL}: cannot write '{}': {e}", path.relative))?;
    let (kind, verb) = if existed {
        (ChangeKind::Modified, "Overwrote")
    } else {
        (ChangeKind::Created, "Created")
    };
    let lines = content.lines().count();
    Ok(ToolResult::ok(format!(
        "{verb} {} ({lines} lines, {} bytes).",
        path.relative,
        content.len()
    ))
    .with_change(FileChange::new(path.relative, kind)))
}
