//! Where the console server keeps its socket, pid, locks and console files.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use uuid::Uuid;

use crate::ConsoleError;
use crate::sys;

/// A Unix socket path must fit in `sun_path` (108 bytes on Linux, 104 on macOS, NUL included).
/// Stay well below both.
const MAX_SOCKET_PATH: usize = 100;

/// The files of one project's console server, all derived from the project root.
#[derive(Debug, Clone)]
pub struct RunPaths {
    root: PathBuf,
    run_dir: PathBuf,
    consoles_dir: PathBuf,
    socket: PathBuf,
}

impl RunPaths {
    /// Computes the paths for `root`, which should be canonical so that every client of one
    /// project agrees on the socket. Creates nothing.
    pub fn new(root: &Path) -> Self {
        let run_dir = root.join(".context-pilot").join("run");
        let consoles_dir = run_dir.join("consoles");
        let socket = socket_path(root, &run_dir);
        Self {
            root: root.to_path_buf(),
            run_dir,
            consoles_dir,
            socket,
        }
    }

    /// Creates the run directories (and the short socket directory when it is needed).
    pub fn create_dirs(&self) -> Result<(), ConsoleError> {
        cp_base::private::create_dir_all(&self.consoles_dir).map_err(ConsoleError::io(
            "creating console directory",
            &self.consoles_dir,
        ))?;
        if let Some(dir) = self.socket.parent()
            && !dir.starts_with(&self.run_dir)
        {
            ensure_private_dir(dir)?;
        }
        Ok(())
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `.context-pilot/run/`.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }
    /// `.context-pilot/run/consoles/`.
    pub fn consoles_dir(&self) -> &Path {
        &self.consoles_dir
    }
    /// The server's Unix socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
    /// The server's pid file.
    pub fn pid_file(&self) -> PathBuf {
        self.run_dir.join("console-server.pid")
    }
    /// Held (flock) by the running server for its whole life: at most one server a project.
    pub fn server_lock(&self) -> PathBuf {
        self.run_dir.join("console-server.lock")
    }
    /// Held by a client while it starts a server, so racing clients start only one.
    pub fn launch_lock(&self) -> PathBuf {
        self.run_dir.join("console-launch.lock")
    }
    /// The server's own diagnostics (stderr).
    pub fn server_log(&self) -> PathBuf {
        self.run_dir.join("console-server.log")
    }
    /// The byte-exact output of a console.
    pub fn log_file(&self, id: Uuid) -> PathBuf {
        self.consoles_dir.join(format!("{id}.log"))
    }
    /// Opens `path` for writing, created 0600 whatever the umask (see `cp_base::private`):
    /// everything under `run/` is for this user only.
    pub(crate) fn private_file(path: &Path, append: bool) -> std::io::Result<fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .append(append)
            .truncate(false)
            .mode(cp_base::private::PRIVATE_FILE_MODE)
            .open(path)
    }
    /// The metadata of a console.
    pub fn meta_file(&self, id: Uuid) -> PathBuf {
        self.consoles_dir.join(format!("{id}.json"))
    }
}

/// `.context-pilot/run/console.sock` when it fits, else a short per-user runtime path named
/// after a stable hash of the project root.
fn socket_path(root: &Path, run_dir: &Path) -> PathBuf {
    let local = run_dir.join("console.sock");
    if local.as_os_str().len() <= MAX_SOCKET_PATH {
        return local;
    }
    let name = format!(
        "cp-{:016x}.sock",
        fnv1a(root.as_os_str().as_encoded_bytes())
    );
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR") {
        let candidate = PathBuf::from(runtime).join(&name);
        if candidate.is_absolute()
            && candidate.as_os_str().len() <= MAX_SOCKET_PATH
            && candidate.parent().is_some_and(Path::is_dir)
        {
            return candidate;
        }
    }
    PathBuf::from(format!("/tmp/cp-{}", sys::current_uid())).join(name)
}

/// FNV-1a: a hash that, unlike std's `DefaultHasher`, is stable across Rust releases, so an
/// old server and a new client agree on the socket name.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Creates `dir` with mode 0700 if needed, and refuses one that another user could tamper
/// with (it is under the shared /tmp).
fn ensure_private_dir(dir: &Path) -> Result<(), ConsoleError> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(ConsoleError::io("creating socket directory", dir)(e)),
    }
    let meta =
        fs::symlink_metadata(dir).map_err(ConsoleError::io("checking socket directory", dir))?;
    if !meta.is_dir() || meta.uid() != sys::current_uid() {
        return Err(ConsoleError::Io {
            context: "socket directory is not a directory owned by this user; remove it",
            path: dir.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(ConsoleError::io("restricting socket directory", dir))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_root_keeps_socket_in_project() {
        let paths = RunPaths::new(Path::new("/home/me/proj"));
        assert_eq!(
            paths.socket(),
            Path::new("/home/me/proj/.context-pilot/run/console.sock")
        );
    }

    #[test]
    fn long_root_moves_socket_to_short_path() {
        let long = format!("/home/me/{}", "x".repeat(150));
        let paths = RunPaths::new(Path::new(&long));
        assert!(paths.socket().as_os_str().len() <= MAX_SOCKET_PATH);
        assert!(!paths.socket().starts_with(&long));
        // Stable: the same root always gives the same socket.
        assert_eq!(paths.socket(), RunPaths::new(Path::new(&long)).socket());
        let other = RunPaths::new(Path::new(&format!("{long}y")));
        assert_ne!(paths.socket(), other.socket());
    }
}
