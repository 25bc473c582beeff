//! Atomic file replacement: write a temp file beside the target, fsync, rename.
//!
//! Readers therefore see either the old or the new content, never a torn write, even when
//! several hook processes and the TUI touch the same project at once.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::CheckpointError;

/// Replaces `path` with `bytes` atomically, creating parent directories as needed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(|e| CheckpointError::io("creating directory", dir, e))?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    // The temp name is unique per call so concurrent writers never share a temp file.
    let tmp = dir.join(format!(".{name}.tmp-{}", uuid::Uuid::new_v4().simple()));
    let result = write_and_sync(&tmp, bytes).and_then(|()| {
        fs::rename(&tmp, path).map_err(|e| CheckpointError::io("renaming into place", path, e))
    });
    if result.is_err() {
        // Best effort: a leftover temp file is harmless but untidy.
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // fsync the directory so the rename itself survives a crash.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn write_and_sync(tmp: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| CheckpointError::io("creating", tmp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| CheckpointError::io("writing", tmp, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let entries: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(entries.len(), 1, "temp files left behind: {entries:?}");
    }
}
