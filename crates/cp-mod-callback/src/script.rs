//! Callback scripts: `.context-pilot/scripts/{name}.sh`, executable, with a documented header.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use cp_base::{Project, StoreError, write_atomic};

/// The line that marks a script as carrying our header, so it is added only once.
const HEADER_MARK: &str = "# Context Pilot callback script.";

/// The comment block prepended to every script on create (after the shebang).
pub const SCRIPT_HEADER: &str =
    "# Context Pilot callback script. It runs after the agent edits matching files.
# Environment:
#   CP_CHANGED_FILES  matched files, one per line, relative to CP_PROJECT_ROOT
#                     (a name holding a newline is left out; see CP_CHANGED_FILES0)
#   CP_CHANGED_FILES0 path of a file listing every matched file, each followed by a NUL
#                     byte (complete and safe for any name): xargs -0 -a \"$CP_CHANGED_FILES0\"
#   CP_PROJECT_ROOT   absolute path of the project root
#   CP_CALLBACK_NAME  name of this callback
#   CP_RUN_ID         UUID of this run (its console output can be reopened by it)
# Exit status 0 reports success; anything else is a failure shown to the agent.
";

/// The default interpreter line.
pub const SHEBANG: &str = "#!/usr/bin/env bash";

/// Where a callback's script lives.
pub fn script_path(project: &Project, name: &str) -> PathBuf {
    project.scripts_dir().join(format!("{name}.sh"))
}

/// The full script text for `body`: shebang, header, body. A body that already has the
/// header is kept as is; a body with its own `#!` line keeps it.
pub fn with_header(body: &str) -> String {
    if body.contains(HEADER_MARK) {
        return ensure_newline(body.to_owned());
    }
    let (shebang, rest) = match body.strip_prefix("#!") {
        Some(_) => match body.split_once('\n') {
            Some((first, rest)) => (first.to_owned(), rest),
            None => (body.to_owned(), ""),
        },
        None => (SHEBANG.to_owned(), body),
    };
    ensure_newline(format!("{shebang}\n{SCRIPT_HEADER}\n{rest}"))
}

fn ensure_newline(mut s: String) -> String {
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Writes a script atomically and makes it executable (0755).
pub fn write_script(path: &Path, text: &str) -> Result<(), StoreError> {
    write_atomic(path, text.as_bytes())?;
    set_executable(path)
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| StoreError::io(path, e))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> Result<(), StoreError> {
    Ok(())
}

/// Reads a script; a missing file reads as `None`.
pub fn read_script(path: &Path) -> Result<Option<String>, StoreError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Deletes a script; a missing file is fine.
pub fn remove_script(path: &Path) -> Result<(), StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// The script with 1-based line numbers, as the editor shows it.
pub fn numbered(text: &str) -> String {
    let width = text.lines().count().max(1).to_string().len();
    let mut out = String::with_capacity(text.len() + 8 * width);
    for (i, line) in text.lines().enumerate() {
        let _ = writeln!(out, "{:>width$} | {line}", i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_added_once_after_the_shebang() {
        let t = with_header("cargo check");
        assert!(t.starts_with("#!/usr/bin/env bash\n# Context Pilot callback script."));
        assert!(t.contains("CP_CHANGED_FILES") && t.contains("CP_RUN_ID"));
        assert!(t.ends_with("\ncargo check\n"));
        assert_eq!(with_header(&t), t);
        let own = with_header("#!/bin/sh\necho hi");
        assert!(own.starts_with("#!/bin/sh\n# Context Pilot"));
        assert_eq!(own.matches("#!").count(), 1);
    }

    #[test]
    fn scripts_are_executable() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("s/x.sh");
        write_script(&p, "#!/usr/bin/env bash\n").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(read_script(&tmp.path().join("none.sh")).unwrap(), None);
        remove_script(&p).unwrap();
        remove_script(&p).unwrap();
    }

    #[test]
    fn numbers_lines() {
        assert_eq!(numbered("a\nb\n"), "1 | a\n2 | b\n");
    }
}
