//! Console metadata on disk: `.context-pilot/run/consoles/<uuid>.json`, written atomically.

use std::fs;
use std::io::Write;
use std::path::Path;

use uuid::Uuid;

use crate::ConsoleError;
use crate::console_info::{ConsoleInfo, ConsoleStatus};
use crate::paths::RunPaths;

/// Why a console that was running is now lost, for people reading a status.
pub(crate) fn lost_reason(paths: &RunPaths, id: Uuid) -> String {
    format!(
        "the console server running it stopped (killed or crashed), and its processes ended with \
         it; the output up to that point is kept in {}",
        paths.log_file(id).display()
    )
}

/// Writes `info` to its metadata file: temp file, then rename, so readers see the old or
/// the new record, never half of one.
///
/// No fsync, on purpose: this runs twice per console (once its spawn is answered, and when it
/// ended), close to the spawn and exit paths, where an fsync costs 1–30 ms on a busy disk (it flushes the filesystem journal, including other
/// processes' writes), which dominated the latency of short commands. Durability buys
/// nothing here: the record only matters while the server runs or after it ended normally
/// (both see the page cache). After a power loss or kernel crash every process of the
/// console is gone anyway, so a record that reverted to an older state or went missing is
/// re-created as `Lost` by the next server ([`mark_orphans_lost`]) or skipped with a warning
/// ([`list_metas`]); the output itself is in the log file.
pub(crate) fn write_meta(paths: &RunPaths, info: &ConsoleInfo) -> Result<(), ConsoleError> {
    let path = paths.meta_file(info.id);
    let tmp = path.with_extension("json.tmp");
    let json = serde_json::to_vec_pretty(info)
        .map_err(|e| ConsoleError::Protocol(format!("encoding console metadata: {e}")))?;
    let mut file = RunPaths::private_file(&tmp, false)
        .and_then(|f| f.set_len(0).map(|()| f))
        .map_err(ConsoleError::io("writing console metadata", &tmp))?;
    file.write_all(&json)
        .map_err(ConsoleError::io("writing console metadata", &tmp))?;
    fs::rename(&tmp, &path).map_err(ConsoleError::io("saving console metadata", &path))
}

/// Reads one console's metadata; `Ok(None)` when the console is unknown.
pub(crate) fn read_meta(paths: &RunPaths, id: Uuid) -> Result<Option<ConsoleInfo>, ConsoleError> {
    read_meta_file(&paths.meta_file(id))
}

fn read_meta_file(path: &Path) -> Result<Option<ConsoleInfo>, ConsoleError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ConsoleError::io("reading console metadata", path)(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| ConsoleError::CorruptMeta {
            path: path.to_path_buf(),
            source,
        })
}

/// Every console recorded on disk, oldest first. Corrupt files are skipped with a warning
/// (and left in place for a person to inspect).
pub(crate) fn list_metas(paths: &RunPaths) -> Vec<ConsoleInfo> {
    let Ok(entries) = fs::read_dir(paths.consoles_dir()) else {
        return Vec::new();
    };
    let mut out: Vec<ConsoleInfo> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| match read_meta_file(&p) {
            Ok(info) => info,
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        })
        .collect();
    out.sort_by_key(|i| (i.started_at_ms, i.id));
    out
}

/// The status a client should show for `info` when no server runs it any more.
pub(crate) fn orphaned_view(paths: &RunPaths, mut info: ConsoleInfo) -> ConsoleInfo {
    if info.status.is_running() {
        info.status = ConsoleStatus::Lost {
            reason: lost_reason(paths, info.id),
        };
    }
    if let Ok(m) = fs::metadata(paths.log_file(info.id)) {
        info.output_len = m.len();
    }
    info
}

/// Marks as lost every console that a previous server left `Running`, and rewrites it.
pub(crate) fn mark_orphans_lost(paths: &RunPaths, instance: Uuid) {
    for info in list_metas(paths) {
        if info.status.is_running() && info.server_instance != instance {
            let mut lost = orphaned_view(paths, info);
            lost.ended_at_ms = None;
            if let Err(e) = write_meta(paths, &lost) {
                tracing::warn!("could not mark console {} lost: {e}", lost.id);
            }
        }
    }
}
