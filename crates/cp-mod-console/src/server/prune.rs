//! Pruning the logs of finished consoles, so `run/consoles/` does not grow without bound:
//! a finished console's log and metadata go once they are older than the age limit, and the
//! oldest finished ones go while all logs together exceed the size limit. Running consoles
//! are never touched.

use std::collections::HashSet;
use std::fs;
use std::time::{Duration, UNIX_EPOCH};

use cp_base::now_ms;
use uuid::Uuid;

use crate::console_info::ConsoleInfo;
use crate::meta;
use crate::paths::RunPaths;

/// Default age after which a finished console's log is deleted.
pub const DEFAULT_LOGS_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Default limit of the total size of a project's console logs.
pub const DEFAULT_LOGS_MAX_BYTES: u64 = 200 * 1024 * 1024;

/// Deletes the logs (and metadata) of finished consoles that are older than `max_age`, then
/// the oldest finished ones while the logs together are larger than `max_bytes`. `live` are
/// the consoles this server runs (their records may still say running; never pruned).
pub(super) fn prune_logs(
    paths: &RunPaths,
    live: &HashSet<Uuid>,
    max_age: Duration,
    max_bytes: u64,
) {
    let now = now_ms();
    let max_age_ms = u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX);
    let mut total: u64 = 0;
    // (ended at, id, bytes) of every prunable console.
    let mut finished: Vec<(u64, Uuid, u64)> = Vec::new();
    for info in meta::list_metas(paths) {
        let bytes = file_len(paths, &info);
        total += bytes;
        if info.status.is_running() || live.contains(&info.id) {
            continue;
        }
        finished.push((ended_ms(paths, &info), info.id, bytes));
    }
    finished.sort_unstable();
    for (ended, id, bytes) in finished {
        let too_old = now.saturating_sub(ended) > max_age_ms;
        if !too_old && total <= max_bytes {
            continue;
        }
        remove(paths, id);
        total = total.saturating_sub(bytes);
    }
}

fn remove(paths: &RunPaths, id: Uuid) {
    for path in [paths.log_file(id), paths.meta_file(id)] {
        if let Err(e) = fs::remove_file(&path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("pruning console log {}: {e}", path.display());
        }
    }
}

fn file_len(paths: &RunPaths, info: &ConsoleInfo) -> u64 {
    fs::metadata(paths.log_file(info.id)).map_or(0, |m| m.len())
}

/// When the console ended; for one a crashed server left without an end time, when its log
/// was last written.
fn ended_ms(paths: &RunPaths, info: &ConsoleInfo) -> u64 {
    info.ended_at_ms.unwrap_or_else(|| {
        fs::metadata(paths.log_file(info.id))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .and_then(|d| u64::try_from(d.as_millis()).ok())
            .unwrap_or(info.started_at_ms)
    })
}
