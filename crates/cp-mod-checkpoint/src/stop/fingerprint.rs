//! The fingerprint of a working tree: a digest of HEAD and of each uncommitted path, its
//! status and its file's state (stat data, and the bytes of a file written too recently for
//! its times to tell), so that equal fingerprints mean the agent changed nothing since.

use std::path::Path;

use super::categorize::CategorizedFile;
use cp_git::ChangedFile;

/// Above this many files the fingerprint's `lstat` calls are spread over threads, as git
/// spreads its own (`core.preloadIndex`).
const PARALLEL_FROM: usize = 2048;

/// A digest of the tree: HEAD's commit, and of the uncommitted set each path, its status and
/// the file's current state (see [`content_digest`]). Equal digests mean the agent changed
/// nothing since, committed or not: a test verdict belongs to the tree with its digest.
pub(crate) fn fingerprint(
    repo_root: &Path,
    head: Option<&str>,
    files: &[CategorizedFile],
) -> String {
    fingerprint_files(repo_root, head, files.iter().map(|f| &f.file))
}

pub(crate) fn fingerprint_files<'a>(
    repo_root: &Path,
    head: Option<&str>,
    files: impl Iterator<Item = &'a ChangedFile>,
) -> String {
    // The fingerprint's own start: a file whose times are not older is read (see
    // [`content_digest`]).
    let files: Vec<&ChangedFile> = files.collect();
    let (first, racy) = fingerprint_racy(repo_root, head, &files, std::time::SystemTime::now());
    if !racy {
        return first;
    }
    // A file was written within a tick of the start: its bytes went into this fingerprint,
    // which a later one of the same bytes, settled, would not equal (the same tree taken for
    // a changed one, its verdict not reused). Wait the tick out and take it again: settled,
    // the file gives the digest every later fingerprint of the same state gives. A file still
    // being written stays racy, and is told apart by its bytes as before.
    std::thread::sleep(RACY_WAIT);
    fingerprint_racy(repo_root, head, &files, std::time::SystemTime::now()).0
}

/// How long a stop waits for just-written files to settle before it fingerprints them again:
/// past the racy rule's slack on file systems with sub-second times.
const RACY_WAIT: std::time::Duration =
    cp_base::racy::SUBSECOND_SLACK.saturating_add(std::time::Duration::from_millis(10));

/// [`fingerprint_files`], started at `started`.
#[cfg(test)]
fn fingerprint_since<'a>(
    repo_root: &Path,
    head: Option<&str>,
    files: impl Iterator<Item = &'a ChangedFile>,
    started: std::time::SystemTime,
) -> String {
    let files: Vec<&ChangedFile> = files.collect();
    fingerprint_racy(repo_root, head, &files, started).0
}

/// The fingerprint of `files` started at `started`, and whether any of them was racy.
fn fingerprint_racy(
    repo_root: &Path,
    head: Option<&str>,
    files: &[&ChangedFile],
    started: std::time::SystemTime,
) -> (String, bool) {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let digest_all = |part: &[&ChangedFile]| -> (Vec<u64>, bool) {
        let mut stats = DirStats::new(repo_root, started);
        let digests = part.iter().map(|f| file_digest(&mut stats, f)).collect();
        (digests, stats.saw_racy)
    };
    let (digests, racy): (Vec<u64>, bool) = if files.len() < PARALLEL_FROM || threads < 2 {
        digest_all(files)
    } else {
        let chunk = files.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = files
                .chunks(chunk)
                .map(|part| {
                    let thread = std::thread::Builder::new()
                        .name("fingerprint".into())
                        .spawn_scoped(scope, move || digest_all(part));
                    (part, thread)
                })
                .collect();
            let mut all = Vec::with_capacity(files.len());
            let mut racy = false;
            for (part, thread) in handles {
                let (digests, part_racy) = match thread {
                    // A panicking digest thread loses only the fingerprint's precision.
                    Ok(thread) => thread.join().unwrap_or_default(),
                    // No thread to be had: this one does that part.
                    Err(_) => digest_all(part),
                };
                all.extend(digests);
                racy |= part_racy;
            }
            (all, racy)
        })
    };
    let mut hash = Fnv::new();
    hash.write(head.unwrap_or("unborn").as_bytes());
    hash.write(&[0]);
    for digest in digests {
        hash.write(&digest.to_le_bytes());
    }
    (format!("{:016x}", hash.finish()), racy)
}

/// [`fingerprint_files`] of `files`, taken on other threads while `work` runs on this one
/// when there are many (their `lstat` calls are then the longest part of a stop); one after
/// the other when there are few.
pub(crate) fn fingerprint_while<T>(
    repo_root: &Path,
    head: Option<&str>,
    files: &[ChangedFile],
    work: impl FnOnce() -> T,
) -> (String, T) {
    if files.len() < PARALLEL_FROM {
        let done = work();
        return (fingerprint_files(repo_root, head, files.iter()), done);
    }
    std::thread::scope(|scope| {
        let taken = std::thread::Builder::new()
            .name("fingerprint".into())
            .spawn_scoped(scope, || fingerprint_files(repo_root, head, files.iter()));
        let done = work();
        let fingerprint = match taken.map(std::thread::ScopedJoinHandle::join) {
            Ok(Ok(fingerprint)) => fingerprint,
            // No thread, or it panicked: taken here instead.
            _ => fingerprint_files(repo_root, head, files.iter()),
        };
        (fingerprint, done)
    })
}

/// One file's path, status and state.
fn file_digest(stats: &mut DirStats<'_>, file: &ChangedFile) -> u64 {
    let mut hash = Fnv::new();
    hash.write(file.path.as_bytes());
    hash.write(&[0]);
    hash.write(file.status.code().as_bytes());
    hash.write(file.renamed_from.as_deref().unwrap_or("").as_bytes());
    hash.write(&[0]);
    content_digest(stats, &file.path, &mut hash);
    hash.finish()
}

/// What a file is now, from one `lstat`: size, inode, mode, and modification and change
/// times to the nanosecond. Any write moves the change time (which no tool can set back), so
/// this tells one state of the file from the next without reading it: with 10,000 changed
/// files, reading each one cost more than `git status` itself (issue 15). A symlink is
/// identified by its target.
///
/// The one gap is a write with the same size within the clock tick of the last one, which
/// leaves every field as it was: a file whose modification or change time is not older than
/// the fingerprint's start is *racy* ([`cp_base::racy`]), and its bytes are digested too.
/// A later fingerprint, taken when the file is no longer racy, would then differ from this one
/// whatever it holds, so [`fingerprint_files`] waits a tick and takes it again first.
fn content_digest(stats: &mut DirStats<'_>, path: &str, hash: &mut Fnv) {
    let Some(now) = stats.lstat(path) else {
        hash.write(b"absent");
        return;
    };
    let full = stats.root.join(path);
    let target = || std::fs::read_link(&full).ok();
    state_digest(&now, target, || cp_base::racy::content(&full), hash);
}

/// The digest of a file in state `now`: its stat fields, a symlink's `target`, and the
/// `content` of a racy file.
fn state_digest(
    now: &FileState,
    target: impl FnOnce() -> Option<std::path::PathBuf>,
    content: impl FnOnce() -> Option<Vec<u8>>,
    hash: &mut Fnv,
) {
    if now.racy {
        match content() {
            Some(bytes) => {
                hash.write(b"racy");
                hash.write(&(bytes.len() as u64).to_le_bytes());
                hash.write(&bytes);
            }
            // Unreadable: a fingerprint no later one can equal.
            None => hash.write(&now_nanos().to_le_bytes()),
        }
    }
    if now.symlink
        && let Some(target) = target()
    {
        hash.write(target.as_os_str().as_encoded_bytes());
    }
    for field in now.fields {
        hash.write(&field.to_le_bytes());
    }
}

/// A file's state as [`content_digest`] takes it.
struct FileState {
    /// Size, inode, mode, mtime and its nanoseconds, ctime and its nanoseconds.
    fields: [u64; 7],
    symlink: bool,
    /// Whether the fields may not tell a write just after them apart.
    racy: bool,
}

/// Nanoseconds since the epoch, now.
fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// `lstat`s files of a repository beside a descriptor of their directory, opened once for
/// the files of one directory that come one after another (a changed set is sorted by path):
/// the kernel then looks up one name a file instead of walking its whole path again, which is
/// most of an `lstat`'s cost. The answers are those of `lstat` on the whole path.
struct DirStats<'r> {
    root: &'r Path,
    /// When the fingerprint began: what is not older is racy.
    started: std::time::SystemTime,
    /// The directory (relative to `root`) of the last file, and its descriptor (`None`: it
    /// could not be opened, so neither can a file in it be found).
    dir: Option<(String, Option<std::fs::File>)>,
    /// Whether a file found so far was racy.
    saw_racy: bool,
}

impl<'r> DirStats<'r> {
    fn new(root: &'r Path, started: std::time::SystemTime) -> Self {
        Self {
            root,
            started,
            dir: None,
            saw_racy: false,
        }
    }

    /// The state of the file at `path` (relative, `/`-separated), without following a final
    /// symlink; `None` when it cannot be had (it is gone, say).
    fn lstat(&mut self, path: &str) -> Option<FileState> {
        use std::os::fd::AsRawFd as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if self.dir.as_ref().is_none_or(|(open, _)| open != dir) {
            // O_PATH: a handle for lookups only, which needs no permission on the directory
            // itself; the path to it is walked as `lstat` walks it (symlinks followed).
            let opened = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                .open(self.root.join(dir))
                .ok();
            self.dir = Some((dir.to_owned(), opened));
        }
        let fd = self.dir.as_ref()?.1.as_ref()?.as_raw_fd();
        let name = std::ffi::CString::new(name).ok()?;
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `fd` is an open directory descriptor owned by `self.dir` for the whole
        // call, `name` is a NUL-terminated string that outlives it, and `stat` is a writable
        // `struct stat` that the call fills when it returns 0.
        let rc = unsafe {
            libc::fstatat(
                fd,
                name.as_ptr(),
                stat.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            return None;
        }
        // SAFETY: `fstatat` returned 0, so it initialised `stat`.
        let stat = unsafe { stat.assume_init() };
        let stamp = |secs: libc::time_t, nanos: i64| cp_base::racy::Stamp { secs, nanos };
        let racy = cp_base::racy::is_racy(
            self.started,
            stamp(stat.st_mtime, stat.st_mtime_nsec),
            stamp(stat.st_ctime, stat.st_ctime_nsec),
        );
        self.saw_racy |= racy;
        Some(FileState {
            racy,
            fields: [
                stat.st_size.cast_unsigned(),
                stat.st_ino,
                u64::from(stat.st_mode),
                stat.st_mtime.cast_unsigned(),
                stat.st_mtime_nsec.cast_unsigned(),
                stat.st_ctime.cast_unsigned(),
                stat.st_ctime_nsec.cast_unsigned(),
            ],
            symlink: stat.st_mode & libc::S_IFMT == libc::S_IFLNK,
        })
    }
}

/// 64-bit FNV-1a: tiny, stable across Rust versions (unlike `DefaultHasher`), and plenty to
/// tell one working tree state from the next. Not used for anything security-related.
pub(super) struct Fnv(u64);

impl Fnv {
    pub(super) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    pub(super) fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub(super) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_git::FileStatus;

    fn changed(path: &str) -> ChangedFile {
        ChangedFile::new(path, FileStatus::Modified)
    }

    /// The fingerprint as stat data alone takes it: begun long after every file's last write.
    fn settled<'a>(
        root: &Path,
        head: Option<&str>,
        files: impl Iterator<Item = &'a ChangedFile>,
    ) -> String {
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        fingerprint_since(root, head, files, later)
    }

    #[test]
    fn fingerprint_follows_content_not_just_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "one").unwrap();
        let files = [changed("a.rs")];
        let first = settled(dir.path(), None, files.iter());
        assert_eq!(first, settled(dir.path(), None, files.iter()));
        std::fs::write(dir.path().join("a.rs"), "two").unwrap();
        assert_ne!(first, settled(dir.path(), None, files.iter()));
        std::fs::remove_file(dir.path().join("a.rs")).unwrap();
        let gone = settled(dir.path(), None, files.iter());
        assert_ne!(first, gone);
        assert_ne!(gone, settled(dir.path(), None, std::iter::empty()));
        // A commit changes the tree even when nothing is uncommitted.
        assert_ne!(
            settled(dir.path(), Some("aaaa"), std::iter::empty()),
            settled(dir.path(), Some("bbbb"), std::iter::empty())
        );
    }

    #[test]
    fn many_files_are_fingerprinted_in_parallel_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<ChangedFile> = (0..PARALLEL_FROM + 10)
            .map(|i| changed(&format!("f{i}.rs")))
            .collect();
        for f in &files {
            std::fs::write(dir.path().join(&f.path), "x").unwrap();
        }
        let first = settled(dir.path(), None, files.iter());
        assert_eq!(first, settled(dir.path(), None, files.iter()));
        // The order of files is part of the digest; so is every file's state.
        assert_ne!(first, settled(dir.path(), None, files.iter().rev()));
        std::fs::write(dir.path().join("f2000.rs"), "y").unwrap();
        assert_ne!(first, settled(dir.path(), None, files.iter()));
    }

    /// Sets the modification time of `path` to `to`, to the nanosecond (`utimensat`).
    fn set_mtime(path: &Path, to: std::time::SystemTime) {
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_times(std::fs::FileTimes::new().set_modified(to))
            .unwrap();
    }

    #[test]
    fn a_racy_file_is_told_apart_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        let files = [changed("a.py")];
        let stamp = std::time::SystemTime::now();
        std::fs::write(&path, "x = 1\n").unwrap();
        set_mtime(&path, stamp);
        let before = fingerprint_since(dir.path(), None, files.iter(), stamp);
        std::fs::write(&path, "x = 2\n").unwrap();
        set_mtime(&path, stamp);
        assert_ne!(
            before,
            fingerprint_since(dir.path(), None, files.iter(), stamp)
        );
        // Read twice while racy, the same bytes give the same fingerprint.
        assert_eq!(
            fingerprint_since(dir.path(), None, files.iter(), stamp),
            fingerprint_since(dir.path(), None, files.iter(), stamp)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// Same-size rewrites at the same nanosecond: both modification times set with
        /// `utimensat`, and the change time equal too, as a kernel whose file times come
        /// from its coarse clock gives two writes within one tick (this one's multigrain
        /// times would not). Every stat field is then as it was; the digest taken when the
        /// file is racy still never takes the new bytes for the old.
        #[test]
        fn a_same_size_rewrite_at_the_same_nanosecond_is_never_taken_for_the_old_bytes(
            old in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
            flips in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
            secs in 0i64..4_000_000_000,
            nanos in 0i64..1_000_000_000,
            started_after_ns in 0u64..40_000_000,
        ) {
            let new: Vec<u8> = old
                .iter()
                .zip(flips.iter().cycle())
                .map(|(b, f)| b ^ f)
                .collect();
            proptest::prop_assume!(new != old);
            let at = cp_base::racy::Stamp { secs, nanos };
            // The fingerprint began within a tick of the writes' shared time.
            let started = std::time::UNIX_EPOCH
                + std::time::Duration::new(secs.cast_unsigned(), u32::try_from(nanos).unwrap())
                + std::time::Duration::from_nanos(started_after_ns);
            let state = FileState {
                fields: [old.len() as u64, 7, 0o100_644, secs.cast_unsigned(), nanos.cast_unsigned(),
                    secs.cast_unsigned(), nanos.cast_unsigned()],
                symlink: false,
                racy: cp_base::racy::is_racy(started, at, at),
            };
            let digest = |bytes: &[u8]| {
                let mut hash = Fnv::new();
                state_digest(&state, || None, || Some(bytes.to_vec()), &mut hash);
                hash.finish()
            };
            proptest::prop_assert_ne!(digest(&old), digest(&new));
        }

        /// The same on real files, with whatever change times this kernel gives.
        #[test]
        fn a_same_size_rewrite_of_a_real_file_changes_the_fingerprint(
            old in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
            flips in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..64),
            at_secs in 0u64..4_000_000_000,
            at_nanos in 0u32..1_000_000_000,
        ) {
            let new: Vec<u8> = old
                .iter()
                .zip(flips.iter().cycle())
                .map(|(b, f)| b ^ f)
                .collect();
            proptest::prop_assume!(new != old);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.rs");
            let files = [changed("f.rs")];
            let at = std::time::UNIX_EPOCH + std::time::Duration::new(at_secs, at_nanos);
            std::fs::write(&path, &old).unwrap();
            set_mtime(&path, at);
            let before = fingerprint_files(dir.path(), None, files.iter());
            std::fs::write(&path, &new).unwrap();
            set_mtime(&path, at);
            proptest::prop_assert_ne!(before, fingerprint_files(dir.path(), None, files.iter()));
        }
    }

    #[test]
    fn a_file_seen_beside_its_directory_is_the_file_lstat_sees() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("top.rs"), "a").unwrap();
        std::fs::write(root.join("src/deep/x.rs"), "bb").unwrap();
        std::fs::write(root.join("src/y.rs"), "ccc").unwrap();
        std::os::unix::fs::symlink("deep/x.rs", root.join("src/link")).unwrap();
        std::os::unix::fs::symlink("src/deep", root.join("via")).unwrap();
        let mut stats = DirStats::new(root, std::time::SystemTime::now());
        for path in [
            "top.rs",
            "src/deep/x.rs",
            "src/y.rs",
            "src/link",
            "via/x.rs",
            "src/deep",
            "src/gone.rs",
            "gone/x.rs",
            "top.rs/x",
        ] {
            let seen = stats.lstat(path);
            match std::fs::symlink_metadata(root.join(path)) {
                Ok(meta) => {
                    let seen = seen.unwrap_or_else(|| panic!("{path} not seen"));
                    assert_eq!(
                        seen.fields,
                        [
                            meta.len(),
                            meta.ino(),
                            u64::from(meta.mode()),
                            meta.mtime().cast_unsigned(),
                            meta.mtime_nsec().cast_unsigned(),
                            meta.ctime().cast_unsigned(),
                            meta.ctime_nsec().cast_unsigned(),
                        ],
                        "{path}"
                    );
                    assert_eq!(seen.symlink, meta.file_type().is_symlink(), "{path}");
                }
                Err(_) => assert!(seen.is_none(), "{path} seen but lstat fails"),
            }
        }
    }
}
