//! The private parts of `.context-pilot/`: `run/`, `logs/` and `state/` hold console output,
//! sockets and session state that other users of the machine must not read.
//!
//! Their directories are 0700 and their files 0600. New files get that mode when they are
//! created ([`is_private`] tells the atomic writes and the console server which paths
//! need it); [`secure_private_dir`] fixes what already exists with looser modes (an older
//! version created them 0755/0644), and runs when a project's layout is ensured and when a
//! console server starts.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path};

use crate::layout::STATE_DIR;

/// Mode of the private directories.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of the files in them.
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// The private directories directly under `.context-pilot/`.
pub const PRIVATE_DIRS: [&str; 3] = ["run", "logs", "state"];

/// Whether `path` lies inside one of the private directories of a `.context-pilot/`.
pub fn is_private(path: &Path) -> bool {
    let parts: Vec<Component<'_>> = path.components().collect();
    parts.windows(3).any(|w| {
        w[0].as_os_str() == STATE_DIR && PRIVATE_DIRS.iter().any(|d| w[1].as_os_str() == *d)
    })
}

/// Creates `dir` (and its parents) if needed, then makes it and every directory below it
/// 0700 and every file below it 0600. Symbolic links are left alone (chmod would follow
/// them out of the tree).
pub fn secure_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(dir)?;
    restrict(dir, PRIVATE_DIR_MODE)?;
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        // Entries can vanish while we walk (a session ending, a temp file renamed).
        let result = if kind.is_dir() {
            secure_private_dir(&path)
        } else if kind.is_symlink() {
            Ok(())
        } else {
            restrict(&path, PRIVATE_FILE_MODE)
        };
        match result {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Sets `mode` on `path` unless it already has no more than that.
fn restrict(path: &Path, mode: u32) -> io::Result<()> {
    let current = fs::symlink_metadata(path)?.permissions().mode() & 0o7777;
    if current & !mode != 0 {
        fs::set_permissions(path, fs::Permissions::from_mode(current & mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_paths_are_recognised() {
        assert!(is_private(Path::new("/p/.context-pilot/state/main/x.json")));
        assert!(is_private(Path::new(
            "/p/.context-pilot/run/consoles/a.log"
        )));
        assert!(is_private(Path::new(
            ".context-pilot/logs/context-pilot.log"
        )));
        assert!(!is_private(Path::new("/p/.context-pilot/config.json")));
        assert!(!is_private(Path::new("/p/state/run/x")));
    }

    #[test]
    fn loose_modes_are_fixed() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join(".context-pilot/run");
        fs::create_dir_all(run.join("consoles")).unwrap();
        fs::write(run.join("consoles/a.log"), "x").unwrap();
        fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(
            run.join("consoles/a.log"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        secure_private_dir(&run).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&run), 0o700);
        assert_eq!(mode(&run.join("consoles")), 0o700);
        assert_eq!(mode(&run.join("consoles/a.log")), 0o600);
    }
}
