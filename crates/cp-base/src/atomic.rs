//! Atomic file replacement, the one low-level write every store in this crate uses: a temp
//! file in the same directory, fsync, rename over the target, fsync of the directory. A
//! reader or a crash sees the old file or the new one, never a mix.
//!
//! This file depends on nothing else in the crate, so the project store, the trust store and
//! the private-mode rules can all build on it.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use cap_std::fs::OpenOptionsExt as _;

/// The permission bits a replaced file ends up with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// An existing file keeps its own bits; a new one is created with these (before the
    /// umask).
    KeepOr(u32),
    /// Always these bits, whatever the existing file had (files that must stay private).
    Force(u32),
}

/// Writes `bytes` as the file `name` of the open directory `dir`, atomically: a temp file in
/// the same directory, fsync, rename over `name`, fsync of the directory. An existing file
/// keeps its permission bits. On any failure the temp file is removed and `name` is left as
/// it was (byte-identical, or absent). `name` is replaced, not written through: a hard link
/// elsewhere keeps the old content.
///
/// Working on a directory handle rather than a path means a concurrent rename of a parent
/// directory cannot redirect the write elsewhere.
pub fn write_atomic_in(dir: &cap_std::fs::Dir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    write_in_mode(dir, name, bytes, Mode::KeepOr(0o666))
}

/// Whether a replacement is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// fsync of the file before the rename and of the directory after it.
    Synced,
    /// Neither: still atomic for readers, but a crash of the machine may leave the old file,
    /// or an empty one. For caches whose readers rebuild what they cannot read.
    Unsynced,
}

/// [`write_atomic_in`], with the permission bits `mode` says.
pub(crate) fn write_in_mode(
    dir: &cap_std::fs::Dir,
    name: &OsStr,
    bytes: &[u8],
    mode: Mode,
) -> io::Result<()> {
    write_as(dir, name, bytes, mode, Durability::Synced)
}

/// [`write_in_mode`], synced or not.
pub(crate) fn write_as(
    dir: &cap_std::fs::Dir,
    name: &OsStr,
    bytes: &[u8],
    mode: Mode,
    durability: Durability,
) -> io::Result<()> {
    remove_stale_temps(dir);
    // The name part is shortened so a long file name still leaves room for the suffix.
    let name_text = name.to_string_lossy();
    let short: String = name_text.chars().take(64).collect();
    let tmp = format!(
        ".{short}{TEMP_MARK}{}.{}",
        std::process::id(),
        unique_suffix()
    );
    let (new_file_mode, kept) = match mode {
        Mode::KeepOr(bits) => (
            bits,
            dir.metadata(name)
                .ok()
                .filter(cap_std::fs::Metadata::is_file)
                .map(|m| m.permissions()),
        ),
        Mode::Force(bits) => (bits, None),
    };
    let result = (|| {
        let mut file = dir.open_with(
            &tmp,
            cap_std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(new_file_mode),
        )?;
        if let Some(kept) = kept {
            file.set_permissions(kept)?;
        }
        file.write_all(bytes)?;
        if durability == Durability::Unsynced {
            drop(file);
            return dir.rename(&tmp, dir, name);
        }
        file.sync_all()?;
        drop(file);
        dir.rename(&tmp, dir, name)?;
        // Make the rename itself durable. (The handle itself may be `O_PATH`, which cannot
        // be synced, so the directory is opened again for reading.)
        dir.open_with(".", cap_std::fs::OpenOptions::new().read(true))?
            .sync_all()
    })();
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

/// What tells our temp files apart: distinctive, because the sweep below also runs in
/// project directories, where a user's own `.x.tmp.1.2` must be left alone.
const TEMP_MARK: &str = ".cp.tmp.";

fn unique_suffix() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    nanos ^ u128::from(COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Removes the temp files that writers killed mid-write left in `dir`: files named like
/// [`write_atomic_in`]'s temps (`.{name}.cp.tmp.{pid}.{n}`) whose process no longer exists.
/// The whole directory is swept, so the temp of a file nobody writes again (a new callback
/// script whose writer died) goes too.
pub(crate) fn remove_stale_temps(dir: &cap_std::fs::Dir) {
    let Ok(entries) = dir.entries() else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(temp_writer_pid) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists();
        if !alive {
            let _ = dir.remove_file(&file_name);
        }
    }
}

/// The writer's pid, if `file_name` is a temp file of [`write_atomic_in`].
fn temp_writer_pid(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix('.')?;
    let (_, suffix) = rest.rsplit_once(TEMP_MARK)?;
    let (pid, n) = suffix.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Replaces the file at `path` (whose directory must exist) atomically, with `mode`.
pub(crate) fn replace_file(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path names no file"))?;
    let handle = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())?;
    write_in_mode(&handle, name, bytes, mode)
}
