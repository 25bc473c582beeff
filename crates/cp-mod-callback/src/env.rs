//! The changed-file lists a run gets: `CP_CHANGED_FILES` and `CP_CHANGED_FILES0`.
//!
//! `CP_CHANGED_FILES` is newline-separated, so a file whose name holds a newline (`x\n/etc/passwd`)
//! would read as two paths, one of them outside the project. Such names are left out of it
//! (the run's result says so). An environment variable cannot hold a NUL byte, so the complete
//! list goes into a file, NUL-separated, whose path is `CP_CHANGED_FILES0`
//! (`xargs -0 -a "$CP_CHANGED_FILES0" …`). The file lives in this user's private directory on
//! a RAM-backed file system ([`cp_base::scratch::ram_dir`]), else under
//! `.context-pilot/run/callbacks/`, and is removed when the run is reported.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use cp_base::{Project, StoreError, private};
use uuid::Uuid;

/// The value of `CP_CHANGED_FILES`: the files whose names hold no newline, one a line.
pub fn newline_list(files: &[String]) -> String {
    files
        .iter()
        .filter(|f| !f.contains(['\n', '\r']))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files left out of `CP_CHANGED_FILES`.
pub fn unlisted(files: &[String]) -> impl Iterator<Item = &String> {
    files.iter().filter(|f| f.contains(['\n', '\r']))
}

/// Where the NUL-separated list of run `run_id` is written: in RAM when this user has a
/// private directory there (the run's id, random, is unique across projects), else in the
/// project's `run/callbacks/`.
pub fn nul_list_path(project: &Project, run_id: Uuid) -> PathBuf {
    let name = format!("{run_id}.files0");
    match cp_base::scratch::ram_dir() {
        Some(dir) => dir.join(name),
        None => project.run_dir().join("callbacks").join(name),
    }
}

/// Writes the complete NUL-separated list (each name followed by a NUL) and returns its path.
///
/// A scratch file, private (0600, in a 0700 directory): written whole before the script
/// starts and removed when the run is reported, so it needs no temp-and-rename and no fsync
/// (after a crash the run it belonged to is gone too). Those two fsyncs cost 2–8 ms per run
/// on a busy disk, more than the rest of the callback path together; creating the file on
/// disk at all cost a tenth of a millisecond on the benchmark machine, hence RAM first.
pub fn write_nul_list(
    project: &Project,
    run_id: Uuid,
    files: &[String],
) -> Result<PathBuf, StoreError> {
    let path = nul_list_path(project, run_id);
    let mut bytes = Vec::new();
    for f in files {
        bytes.extend_from_slice(f.as_bytes());
        bytes.push(0);
    }
    if let Some(dir) = path.parent() {
        private::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    }
    std::fs::OpenOptions::new()
        .mode(private::PRIVATE_FILE_MODE)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .and_then(|mut file| file.write_all(&bytes))
        .map_err(|e| StoreError::io(&path, e))?;
    Ok(path)
}

/// Removes a run's list; a missing file is fine.
pub fn remove_nul_list(path: &Path) {
    if let Err(e) = std::fs::remove_file(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newline_never_makes_another_path() {
        let files = vec![
            "a.rs".to_owned(),
            "x\n/etc/passwd".to_owned(),
            "b.rs".to_owned(),
        ];
        assert_eq!(newline_list(&files), "a.rs\nb.rs");
        assert_eq!(unlisted(&files).count(), 1);
    }

    #[test]
    fn the_list_is_private_complete_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let project = Project::at(tmp.path());
        let run = Uuid::new_v4();
        let files = vec!["a.rs".to_owned(), "x\ny.rs".to_owned()];
        let path = write_nul_list(&project, run, &files).unwrap();
        assert_eq!(path, nul_list_path(&project, run));
        assert_eq!(std::fs::read(&path).unwrap(), b"a.rs\0x\ny.rs\0");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        remove_nul_list(&path);
        assert!(!path.exists());
        remove_nul_list(&path);
    }
}
