//! The private parts of `.context-pilot/`: `run/`, `logs/` and `state/` hold console output,
//! sockets and session state that other users of the machine must not read.
//!
//! Their directories are 0700 and their files 0600, and they are *created* with those modes,
//! whatever the umask of the process that creates them (TUI, MCP server, hook, console
//! server): every creation site goes through [`create_dir_all`] and [`open_options`] (or
//! [`file_mode`]), which pick the mode from where the path lies, so nothing is ever
//! world-readable, not even for a moment. [`secure_private_dir`] fixes what already exists
//! with looser modes (an older version created them 0755/0644), and runs when a project's
//! layout is ensured and when a console server starts.
//!
//! ```
//! use std::os::unix::fs::PermissionsExt;
//! let tmp = tempfile::tempdir()?;
//! let locks = tmp.path().join(".context-pilot/run/locks");
//! cp_base::private::create_dir_all(&locks)?;
//! let lock = locks.join("a.lock");
//! cp_base::private::open_options(&lock).write(true).create(true).open(&lock)?;
//! let mode = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
//! assert_eq!(mode(&locks)?, 0o700);
//! assert_eq!(mode(&tmp.path().join(".context-pilot/run"))?, 0o700);
//! assert_eq!(mode(&lock)?, 0o600);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

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

/// The private directory `path` lies in or is (`<root>/.context-pilot/run`, `…/logs` or
/// `…/state`), if any.
fn private_root(path: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    let mut after_state_dir = false;
    for comp in path.components() {
        prefix.push(comp);
        if after_state_dir && PRIVATE_DIRS.iter().any(|d| comp.as_os_str() == *d) {
            return Some(prefix);
        }
        after_state_dir = comp.as_os_str() == STATE_DIR;
    }
    None
}

/// Like [`fs::create_dir_all`], except that the directories it creates inside a private
/// directory, and the private directory itself, are created 0700 whatever the umask.
/// Directories elsewhere (`.context-pilot/` itself included) get the usual mode.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let Some(root) = private_root(dir) else {
        return fs::create_dir_all(dir);
    };
    if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR_MODE)
        .create(dir)
}

/// The permission bits a new file at `path` is created with: 0600 inside a private
/// directory, else 0666 (which the umask narrows as usual).
pub fn file_mode(path: &Path) -> u32 {
    if is_private(path) {
        PRIVATE_FILE_MODE
    } else {
        0o666
    }
}

/// [`fs::OpenOptions`] that create a missing `path` with its [`file_mode`]; add the access
/// and creation flags as usual.
pub fn open_options(path: &Path) -> fs::OpenOptions {
    let mut options = fs::OpenOptions::new();
    options.mode(file_mode(path));
    options
}

/// Creates `dir` (and its parents) if needed, then makes it and every directory below it
/// 0700 and every file below it 0600. Symbolic links are left alone (chmod would follow
/// them out of the tree).
pub fn secure_private_dir(dir: &Path) -> io::Result<()> {
    if private_root(dir).is_some() {
        create_dir_all(dir)?;
    } else {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(PRIVATE_DIR_MODE)
            .create(dir)?;
    }
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
    fn the_private_root_is_found_and_dot_context_pilot_is_not_private() {
        assert_eq!(
            private_root(Path::new("/p/.context-pilot/run/locks/a")),
            Some(PathBuf::from("/p/.context-pilot/run"))
        );
        assert_eq!(
            private_root(Path::new(".context-pilot/state")),
            Some(PathBuf::from(".context-pilot/state"))
        );
        assert_eq!(private_root(Path::new("/p/.context-pilot/runs/x")), None);
        assert_eq!(private_root(Path::new("/p/.context-pilot")), None);
        assert_eq!(file_mode(Path::new("/p/.context-pilot/logs/x.log")), 0o600);
        assert_eq!(file_mode(Path::new("/p/.context-pilot/config.json")), 0o666);
    }

    #[test]
    fn create_dir_all_makes_only_the_private_part_private() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("project/.context-pilot/state/main/sub");
        create_dir_all(&deep).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        for dir in ["state", "state/main", "state/main/sub"] {
            let path = tmp.path().join("project/.context-pilot").join(dir);
            assert_eq!(mode(&path), 0o700, "{}", path.display());
        }
        // Outside the private tree, the ordinary mode (0777 less the umask), as a control
        // directory made by std gets.
        let control = tmp.path().join("control");
        fs::create_dir(&control).unwrap();
        let ordinary = mode(&control);
        assert_eq!(mode(&tmp.path().join("project/.context-pilot")), ordinary);
        let elsewhere = tmp.path().join("project/.context-pilot/runs/r1");
        create_dir_all(&elsewhere).unwrap();
        assert_eq!(mode(&elsewhere), ordinary);
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
