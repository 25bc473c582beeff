//! `File_delete`: remove one file. A symlink is removed itself; its target stays.

use std::path::Path;

use cp_base::{Args, ChangeKind, FileChange, ToolResult};
use serde_json::Value;

use super::beneath::{Beneath, lock};
use super::confine::confine_link;
use super::error::FileError;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    const TOOL: &str = "File_delete";
    let args = Args::new(TOOL, args);
    let path = confine_link(root, args.str("file_path")?, TOOL)?;
    let beneath = Beneath::open(root, TOOL)?;
    {
        let _lock = lock(root, &path, TOOL)?;
        beneath.delete(&path, TOOL)?;
    }
    Ok(ToolResult::ok(format!("Deleted {}.", path.relative))
        .with_change(FileChange::new(path.relative, ChangeKind::Deleted)))
}
