//! File operations through a handle on the project root, resolved beneath it in one step.
//!
//! [`super::confine`] checks a path and names it; this module is what actually keeps the tools
//! inside the project. Every lookup goes through a [`cap_std::fs::Dir`] opened on the root:
//! on Linux cap-std resolves with `openat2(RESOLVE_BENEATH)`, and elsewhere (or on kernels
//! before 5.6) it walks the path one component at a time with `O_NOFOLLOW`, refusing any
//! step that leaves the root. So a directory swapped for an escaping symlink between the check
//! and the operation makes the operation fail; it never reaches a file outside.
//!
//! Writes are atomic ([`cp_base::write_atomic_in`]) and read-modify-write cycles of one file
//! are serialized across processes with an advisory lock ([`lock`]).

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _};
use cp_base::{FileLock, Project};

use super::confine::{ConfinedPath, confine};
use super::error::{FileError, refused};

/// The project root, opened as a capability.
pub(super) struct Beneath {
    root: Dir,
}

impl Beneath {
    pub(super) fn open(root: &Path, tool: &str) -> Result<Self, FileError> {
        let root = Dir::open_ambient_dir(root, cap_std::ambient_authority()).map_err(|source| {
            FileError::Root {
                tool: tool.to_owned(),
                root: root.to_path_buf(),
                source,
            }
        })?;
        Ok(Self { root })
    }

    /// Opens an existing regular file for reading. FIFOs, sockets, devices and directories are
    /// refused after opening, on the opened descriptor; the open itself is non-blocking, so a
    /// FIFO with no writer cannot hang the server.
    pub(super) fn open_regular(
        &self,
        path: &ConfinedPath,
        tool: &str,
    ) -> Result<std::fs::File, FileError> {
        let file = self
            .root
            .open_with(
                &path.relative,
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY),
            )
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => refused!(
                    "{tool}: '{}' does not exist; create it with File_write",
                    path.relative
                ),
                _ => FileError::io(tool, "open", &path.relative, e),
            })?
            .into_std();
        let meta = file
            .metadata()
            .map_err(|e| FileError::io(tool, "inspect", &path.relative, e))?;
        if meta.is_dir() {
            return Err(refused!("{tool}: '{}' is a directory", path.relative));
        }
        if !meta.is_file() {
            return Err(refused!(
                "{tool}: '{}' is not a regular file (a FIFO, socket or device); only regular \
                 files can be read or edited",
                path.relative
            ));
        }
        Ok(file)
    }

    /// Replaces the file atomically with `bytes`, creating missing parent directories.
    /// Returns whether the file existed. On failure the old file is byte-identical, and a new
    /// file leaves nothing behind: no temp file and none of the directories created for it.
    pub(super) fn write(
        &self,
        path: &ConfinedPath,
        bytes: &[u8],
        tool: &str,
    ) -> Result<bool, FileError> {
        let (parent, name) = split(&path.relative);
        let created = self
            .create_parents(&parent)
            .map_err(|e| FileError::io(tool, "create the directory of", &path.relative, e))?;
        let result = self.write_in(&parent, name, bytes, path, tool);
        if result.is_err() {
            for dir in created.iter().rev() {
                let _ = self.root.remove_dir(dir);
            }
        }
        result
    }

    fn write_in(
        &self,
        parent: &Path,
        name: &OsStr,
        bytes: &[u8],
        path: &ConfinedPath,
        tool: &str,
    ) -> Result<bool, FileError> {
        let dir = self
            .dir(parent)
            .map_err(|e| FileError::io(tool, "open the directory of", &path.relative, e))?;
        let existing = dir.symlink_metadata(name).ok();
        if existing.as_ref().is_some_and(cap_std::fs::Metadata::is_dir) {
            return Err(refused!("{tool}: '{}' is a directory", path.relative));
        }
        cp_base::write_atomic_in(&dir, name, bytes).map_err(|source| FileError::Io {
            tool: tool.to_owned(),
            action: "write",
            path: path.relative.clone(),
            outcome: if existing.is_some() {
                "; the file was left unchanged"
            } else {
                "; nothing was created"
            },
            source,
        })?;
        Ok(existing.is_some())
    }

    /// Removes the directory entry itself: a symlink is removed, its target is left alone.
    pub(super) fn delete(&self, path: &ConfinedPath, tool: &str) -> Result<(), FileError> {
        let (parent, name) = split(&path.relative);
        let not_found = || refused!("{tool}: '{}' does not exist", path.relative);
        let dir = self.dir(&parent).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => not_found(),
            _ => FileError::io(tool, "open the directory of", &path.relative, e),
        })?;
        let meta = dir.symlink_metadata(name).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => not_found(),
            _ => FileError::io(tool, "inspect", &path.relative, e),
        })?;
        if meta.is_dir() {
            return Err(refused!(
                "{tool}: '{}' is a directory; only files can be deleted",
                path.relative
            ));
        }
        dir.remove_file(name)
            .map_err(|e| FileError::io(tool, "delete", &path.relative, e))
    }

    fn dir(&self, relative: &Path) -> io::Result<Dir> {
        if relative.as_os_str().is_empty() {
            self.root.try_clone()
        } else {
            self.root.open_dir(relative)
        }
    }

    /// Creates the missing directories of `parent`, returning those it created, outermost
    /// first.
    fn create_parents(&self, parent: &Path) -> io::Result<Vec<PathBuf>> {
        let mut created = Vec::new();
        let mut prefix = PathBuf::new();
        for comp in parent.components() {
            prefix.push(comp);
            match self.root.create_dir(&prefix) {
                Ok(()) => created.push(prefix.clone()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    for dir in created.iter().rev() {
                        let _ = self.root.remove_dir(dir);
                    }
                    return Err(e);
                }
            }
        }
        Ok(created)
    }
}

/// Splits a project-relative path into its directory and its file name.
fn split(relative: &str) -> (PathBuf, &OsStr) {
    let path = Path::new(relative);
    let name = path.file_name().unwrap_or(OsStr::new(relative));
    let parent = path
        .components()
        .take(path.components().count().saturating_sub(1))
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    (parent, name)
}

/// Holds the advisory lock that serializes changes to one file across processes (two MCP
/// servers editing the same file). The lock file lives under `.context-pilot/run/locks/`,
/// keyed by the file's project-relative path, not beside the file: the file itself is
/// replaced by rename, so a lock on its inode would not be stable.
pub(super) fn lock(root: &Path, path: &ConfinedPath, tool: &str) -> Result<FileLock, FileError> {
    let lock = Project::at(root).locks_dir().join(format!(
        "file-{:016x}.lock",
        fnv1a(path.relative.as_bytes())
    ));
    FileLock::acquire(&lock).map_err(|source| FileError::Lock {
        tool: tool.to_owned(),
        path: path.relative.clone(),
        source,
    })
}

/// FNV-1a: a hash that is stable across builds and processes, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Opens the regular file `relative` beneath `root` for reading, resolved without a
/// check-then-use race, with the same refusals as `File_read` (a FIFO, socket, device or
/// directory is an error, and opening never blocks). For other front-ends that show files.
pub fn open_regular(
    root: &std::path::Path,
    relative: &str,
    tool: &str,
) -> Result<(ConfinedPath, std::fs::File), FileError> {
    let confined = confine(root, relative, tool)?;
    let file = Beneath::open(root, tool)?.open_regular(&confined, tool)?;
    Ok((confined, file))
}
