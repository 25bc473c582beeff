//! Stat data that cannot tell two states of a file apart: git's *racy* rule, in one place.
//!
//! Size, inode, mode and the modification and change times say "unchanged" without reading a
//! file, with one gap: a write within the clock tick of the last one, with the same size,
//! leaves them all as they were. File times come from the kernel's coarse clock (a tick of
//! 1–4 ms) and some file systems keep whole seconds only. So stat data taken at a moment
//! tells a later write apart only for a file whose times are older than that moment by more
//! than a tick; a file whose modification or change time is not is *racy*, as git calls its
//! index entries in the same case (`is_racy_timestamp` in git's `read-cache.c`), and whoever
//! decides "unchanged" from its stat data reads its bytes instead.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! use cp_base::racy::{Stamp, is_racy};
//!
//! let started = SystemTime::now();
//! let just_now = Stamp::of(started);
//! let long_ago = Stamp::of(started - Duration::from_secs(60));
//! assert!(is_racy(started, just_now, long_ago));
//! assert!(!is_racy(started, long_ago, long_ago));
//! ```

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How far a file's time may lag the clock on a file system with sub-second times: a few
/// ticks of the kernel's coarse clock.
pub const SUBSECOND_SLACK: Duration = Duration::from_millis(50);

/// A file time as `stat` gives it: seconds and nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub secs: i64,
    pub nanos: i64,
}

impl Stamp {
    /// The stamp of a moment (before the epoch: the epoch).
    #[must_use]
    pub fn of(time: SystemTime) -> Self {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        Self {
            secs: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            nanos: i64::from(since.subsec_nanos()),
        }
    }

    /// A file's modification and change times.
    #[must_use]
    pub fn times(meta: &std::fs::Metadata) -> (Self, Self) {
        use std::os::unix::fs::MetadataExt as _;
        (
            Self {
                secs: meta.mtime(),
                nanos: meta.mtime_nsec(),
            },
            Self {
                secs: meta.ctime(),
                nanos: meta.ctime_nsec(),
            },
        )
    }

    /// Whether this file time is not older than `started` by more than a tick: a write at
    /// or after `started` could have left it as it is.
    #[must_use]
    pub fn not_older_than(self, started: SystemTime) -> bool {
        let (Ok(secs), Ok(nanos)) = (u64::try_from(self.secs), u32::try_from(self.nanos)) else {
            // Before the epoch, or garbage: nothing can be concluded from it.
            return true;
        };
        let Some(stamp) = UNIX_EPOCH.checked_add(Duration::new(secs, nanos)) else {
            return true;
        };
        // A file system that keeps whole seconds: the whole second is the tick.
        let slack = if nanos == 0 {
            Duration::from_secs(1)
        } else {
            SUBSECOND_SLACK
        };
        stamp.checked_add(slack).is_none_or(|late| late >= started)
    }
}

/// Whether stat data with these modification and change times, taken at `started` (before
/// the `stat` call), may say "unchanged" about a file whose bytes changed since: either
/// time is not older than `started`.
#[must_use]
pub fn is_racy(started: SystemTime, mtime: Stamp, ctime: Stamp) -> bool {
    mtime.not_older_than(started) || ctime.not_older_than(started)
}

/// The content of the file at `path`, as its stat data stands for it: its bytes, or a
/// symlink's target (a final symlink is not followed); `None` when it cannot be read.
#[must_use]
pub fn content(path: &Path) -> Option<Vec<u8>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(path)
            .ok()
            .map(|t| t.into_os_string().into_encoded_bytes()),
        Ok(meta) if meta.is_file() => std::fs::read(path).ok(),
        _ => None,
    }
}

/// A digest of [`content`] that stays the same across builds and machines (64-bit FNV-1a),
/// for stat data kept on disk: `None` when the file cannot be read.
#[must_use]
pub fn content_digest(path: &Path) -> Option<u64> {
    let bytes = content(path)?;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in (bytes.len() as u64).to_le_bytes().iter().chain(&bytes) {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_within_a_tick_of_the_start_or_after_it_is_racy() {
        let started = SystemTime::now();
        let old = Stamp::of(started - Duration::from_secs(2));
        assert!(!is_racy(started, old, old));
        for recent in [
            started,
            started + Duration::from_secs(5),
            started - Duration::from_millis(10),
        ] {
            assert!(is_racy(started, Stamp::of(recent), old));
            assert!(is_racy(started, old, Stamp::of(recent)));
        }
        // Whole seconds: anything in the start's second.
        let second = Stamp {
            secs: Stamp::of(started).secs,
            nanos: 0,
        };
        assert!(is_racy(started, second, old));
        assert!(is_racy(started, Stamp { secs: -1, nanos: 0 }, old));
    }

    #[test]
    fn content_is_the_bytes_or_a_symlink_s_target() {
        let dir = tempfile::tempdir().unwrap();
        let digest = |name: &str| content(&dir.path().join(name));
        std::fs::write(dir.path().join("a"), "x = 1\n").unwrap();
        let one = digest("a");
        std::fs::write(dir.path().join("a"), "x = 2\n").unwrap();
        assert!(one.is_some());
        assert_ne!(one, digest("a"));
        std::os::unix::fs::symlink("a", dir.path().join("l")).unwrap();
        assert!(digest("l").is_some());
        assert_ne!(digest("l"), digest("a"));
        assert_eq!(digest("missing"), None);
        assert_eq!(
            content_digest(&dir.path().join("a")),
            content_digest(&dir.path().join("a"))
        );
        assert_ne!(
            content_digest(&dir.path().join("a")),
            content_digest(&dir.path().join("l"))
        );
    }
}
