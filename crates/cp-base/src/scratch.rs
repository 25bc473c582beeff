//! A place for scratch files that live as long as one run (a callback's list of changed
//! files): a directory of this user's on a RAM-backed file system, when there is one.
//!
//! Creating and removing a file there costs microseconds. On disk it can cost a tenth of a
//! millisecond each (an ext4 without a journal looks for a free inode past every one freed
//! in the last seconds), which a blocking callback pays before its script can start.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::private::PRIVATE_DIR_MODE;

/// This user's private directory on a RAM-backed file system: `$XDG_RUNTIME_DIR/context-pilot`
/// (in the directory the session manager keeps for this user), else
/// `/dev/shm/context-pilot-<uid>`. Made 0700 on first use, and used only when it is as it must
/// be: a real directory (not a link), owned by this user, closed to everyone else (one another
/// user made first is never used). `None` when neither is: scratch files then go to disk.
/// Looked for once a process.
pub fn ram_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(find).clone()
}

fn find() -> Option<PathBuf> {
    // SAFETY: `geteuid` cannot fail and has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("context-pilot"));
    let shm = Path::new("/dev/shm").join(format!("context-pilot-{uid}"));
    runtime
        .into_iter()
        .chain([shm])
        .find(|dir| usable(dir, uid))
}

/// Makes `dir` if its parent is there, then checks it, whoever made it.
fn usable(dir: &Path, uid: u32) -> bool {
    if !dir.parent().is_some_and(Path::is_dir) {
        return false;
    }
    // Already there (made by an earlier process, or by someone else): checked below.
    let _ = fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(dir);
    fs::symlink_metadata(dir).is_ok_and(|meta| {
        // Nothing granted beyond 0700: no one else may list, read or add a file.
        let mode = meta.permissions().mode() & 0o777;
        meta.is_dir() && meta.uid() == uid && mode | PRIVATE_DIR_MODE == PRIVATE_DIR_MODE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_private_directory_of_this_users_is_used() {
        // SAFETY: `geteuid` cannot fail and has no preconditions.
        let uid = unsafe { libc::geteuid() };
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("fresh");
        assert!(usable(&fresh, uid));
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(usable(&fresh, uid), "found again");
        let open = tmp.path().join("open");
        fs::DirBuilder::new().mode(0o755).create(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!usable(&open, uid), "others may read it");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        assert!(!usable(&link, uid), "a link, wherever it leads");
        assert!(!usable(&fresh, uid.wrapping_add(1)), "another user's");
        assert!(!usable(&tmp.path().join("no/such/parent"), uid));
    }
}
