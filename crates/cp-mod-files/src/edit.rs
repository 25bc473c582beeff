//! `File_edit`: exact string replacement, refusing ambiguous or missing matches. The file is
//! rewritten atomically, under a per-file lock shared with other processes.

use std::path::Path;

use cp_base::{Args, ChangeKind, FileChange, ToolResult};
use serde_json::Value;

use super::beneath::{Beneath, lock};
use super::confine::confine;
use super::error::{FileError, refused};
use super::read::read_text;

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    const TOOL: &str = "File_edit";
    let args = Args::new(TOOL, args);
    let path = confine(root, args.str("file_path")?, TOOL)?;
    let old = args.str("old_string")?;
    let new = args.str("new_string")?;
    let all = args.opt_bool("replace_all")?.unwrap_or(false);
    if old == new {
        return Err(refused!(
            "{TOOL}: 'old_string' and 'new_string' are identical; nothing to do"
        ));
    }
    let beneath = Beneath::open(root, TOOL)?;
    // Read, replace and write under the file's lock, so a concurrent edit from another
    // process is neither lost nor makes this one miss its `old_string`.
    let _lock = lock(root, &path, TOOL)?;
    let text = read_text(&beneath, &path, TOOL)?;
    let count = text.matches(old).count();
    match count {
        0 => {
            return Err(refused!(
                "{TOOL}: 'old_string' was not found in '{}'; read the file again and copy the \
                 exact text, including whitespace",
                path.relative
            ));
        }
        1 => {}
        n if !all => {
            return Err(refused!(
                "{TOOL}: 'old_string' occurs {n} times in '{}'; add surrounding lines to make \
                 it unique, or set replace_all to true",
                path.relative
            ));
        }
        _ => {}
    }
    let updated = if all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    beneath.write(&path, updated.as_bytes(), TOOL)?;
    let what = if count == 1 {
        "1 occurrence".to_owned()
    } else {
        format!("{count} occurrences")
    };
    Ok(
        ToolResult::ok(format!("Edited {}: replaced {what}.", path.relative))
            .with_change(FileChange::new(path.relative, ChangeKind::Modified)),
    )
}
