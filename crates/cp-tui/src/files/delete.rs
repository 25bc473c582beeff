//! `File_delete`: remove one file.

use std::path::Path;

use cp_base::{Args, ChangeKind, FileChange, ToolResult};
use serde_json::Value;

use super::confine;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, String> {
    const TOOL: &str = "File_delete";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path").map_err(|e| e.text)?, TOOL)?;
    if path.absolute.is_dir() {
        return Err(format!(
            "{TOOL}: '{}' is a directory; only files can be deleted",
            path.relative
        ));
    }
    std::fs::remove_file(&path.absolute).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{TOOL}: '{}' does not exist", path.relative),
        _ => format!("{TOOL}: cannot delete '{}': {e}", path.relative),
    })?;
    Ok(ToolResult::ok(format!("Deleted {}.", path.relative))
        .with_change(FileChange::new(path.relative, ChangeKind::Deleted)))
}
