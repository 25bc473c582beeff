//! `File_write`: create or replace a whole file atomically, creating parent directories.

use std::path::Path;

use cp_base::{Args, ChangeKind, FileChange, ToolResult};
use serde_json::Value;

use super::beneath::{Beneath, lock};
use super::confine::confine;
use super::error::FileError;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    const TOOL: &str = "File_write";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path")?, TOOL)?;
    let content = args.str("content")?;
    let beneath = Beneath::open(root, TOOL)?;
    let existed = {
        let _lock = lock(root, &path, TOOL)?;
        beneath.write(&path, content.as_bytes(), TOOL)?
    };
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
