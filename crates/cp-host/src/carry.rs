//! Module state carried from one short-lived process of a worker to the next.
//!
//! A hook process lives for one event and an MCP server for one client session, while the
//! background callback runs they start keep going in the console server. Whatever a module
//! still watches when its process ends ([`cp_base::Module::save_state`]) is kept in
//! `.context-pilot/state/<worker>/hook-modules.json`, and the next hook or MCP process of that
//! worker hands it to its own modules ([`cp_base::Module::load_state`]). The callback module then
//! re-attaches to each run's console and reports the runs that ended meanwhile, so a
//! background result reaches the agent on its next hook call even though the hook that
//! started the run is gone. The TUI's own session (`session.json`) is never touched.
//!
//! One process at a time: a hook holds the worker's lock (`.hook.lock`) for its whole call,
//! so parallel hooks of one worker (an agent's parallel tool calls) never load the same runs
//! twice. An MCP server holds it only while taking the saved state at start and while saving
//! at the end; the runs it took are its own meanwhile.
//!
//! Exactly once: a run reports either before the save, and then is not saved, or after it,
//! and then it is saved *and* its notification may already sit in this process's queue. Such
//! a notification names the run's id, which the saved state holds too; it is dropped, and the
//! process that loads the state reports the run again from its console log.
//!
//! The file holds a list of snapshots (one per saving process since the last load), each a
//! map from module id to saved state. Only states that differ from what a fresh module saves
//! are kept, so a worker with nothing in flight has no file and pays no wait.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cp_base::{FileLock, Notice, Notification, write_atomic};
use serde_json::Value;

use crate::Host;
use crate::outbox::Deliveries;

/// File name of the carried module states under `.context-pilot/state/<worker>/`.
pub const MODULES_FILE: &str = "hook-modules.json";
/// The per-worker lock that serializes hook processes (and MCP saves) of one worker.
pub const LOCK_FILE: &str = ".hook.lock";
const KEY: &str = "snapshots";

/// How long a loading process waits, at most, for runs that ended while no process watched
/// them to report. Measured (debug build, idle machine): three ended runs had all reported
/// 12 ms after the load; a hook with runs still going pays the quiet period, ~100 ms.
pub const SETTLE_CAP: Duration = Duration::from_millis(300);
/// The wait ends early once no notification arrived for this long (about 8× the measured
/// report time, for a loaded machine).
const SETTLE_QUIET: Duration = Duration::from_millis(100);
const SETTLE_POLL: Duration = Duration::from_millis(5);

/// Module id → saved state.
type Snapshot = BTreeMap<String, Value>;

/// The carried state of one worker, loaded into a host's modules, until it is saved back.
#[derive(Debug)]
pub struct Carried {
    path: PathBuf,
    lock_path: PathBuf,
    lock: Option<FileLock>,
    /// What each module saves when it carries nothing: states equal to it are not kept.
    fresh: Snapshot,
    /// Snapshots were read from the file (this process took them over).
    took: bool,
    /// A loaded state refers to something running (a run or a console, by UUID) that may
    /// report at once.
    watching: bool,
    /// Problems with the carried state, for stderr; never fatal.
    problems: Vec<String>,
}

impl Carried {
    /// Takes the worker's lock, then loads what earlier processes saved into `host`'s modules.
    /// A file that cannot be read is set aside (renamed) and reported in [`Carried::take_problems`].
    pub fn resume(host: &Host) -> Self {
        let dir = host.project().state_dir(host.worker());
        let mut carried = Self {
            path: dir.join(MODULES_FILE),
            lock_path: dir.join(LOCK_FILE),
            lock: None,
            fresh: snapshot(host),
            took: false,
            watching: false,
            problems: Vec::new(),
        };
        carried.lock();
        let snapshots = carried.read();
        carried.took = !snapshots.is_empty();
        for saved in &snapshots {
            carried.watching |= !uuids(saved).is_empty();
            host.registry().load_states(saved, host.env());
        }
        if !snapshots.is_empty() {
            tracing::info!(
                snapshots = snapshots.len(),
                "carried module state loaded from {}",
                carried.path.display()
            );
        }
        carried
    }

    /// What went wrong with the carried state so far (already logged), for the person.
    pub fn take_problems(&mut self) -> Vec<String> {
        std::mem::take(&mut self.problems)
    }

    /// Gives runs that ended while no process watched them a moment to report: returns once
    /// notifications stop arriving, after [`SETTLE_CAP`] at most, at once if nothing running
    /// was loaded. The notifications stay queued for the caller.
    pub fn settle(&self, host: &Host) {
        if !self.watching {
            return;
        }
        let start = Instant::now();
        let mut last = start;
        let mut seen = Vec::new();
        loop {
            let now = Instant::now();
            if now.duration_since(start) >= SETTLE_CAP || now.duration_since(last) >= SETTLE_QUIET {
                break;
            }
            std::thread::sleep(SETTLE_POLL);
            let arrived = host.notifier().drain();
            if arrived.iter().any(|n| matches!(n, Notice::Notify(_))) {
                last = Instant::now();
            }
            seen.extend(arrived);
        }
        tracing::debug!(
            waited_ms = start.elapsed().as_millis(),
            notices = seen.len(),
            "waited for carried runs that had ended"
        );
        host.notifier().restore(seen);
    }

    /// Lets other processes of the worker go on while this one runs: the loaded state is now
    /// this process's own, so it is removed from the file. Used by the long-lived MCP server.
    pub fn release(&mut self) {
        if self.took
            && let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            self.problem(format!(
                "cannot remove {} after loading it ({e}); its runs may be reported twice",
                self.path.display()
            ));
        }
        self.lock = None;
    }

    /// Saves what the modules still watch, keeps the notifications nobody took in the
    /// worker's outbox for the next call, and releases the lock. Returns the problems not
    /// taken yet (already logged), for the person.
    pub fn suspend(mut self, host: &Host) -> Vec<String> {
        if !host.project().root().exists() {
            // The project was deleted while this process ran (its agent killed with it, an
            // MCP server seeing its stdin close): nothing to save, and its directories are
            // not made again under a path that is no longer the person's project.
            self.lock = None;
            return self.problems;
        }
        let released = self.lock.is_none();
        self.lock();
        let ours: Snapshot = snapshot(host)
            .into_iter()
            .filter(|(id, state)| self.fresh.get(id) != Some(state))
            .collect();
        // After the save: a run that reported since is in `ours` and in the queue.
        let saved_ids = uuids(&ours);
        let deliveries = Deliveries::new(host.project(), host.worker(), host.notifier());
        let notes: Vec<Notification> = host
            .notifier()
            .drain()
            .into_iter()
            .filter_map(|n| match n {
                Notice::Notify(note) => Some(note),
                Notice::OpenPanel(_) | Notice::Refresh => None,
            })
            .filter(|note| !mentions_any(&note.text, &saved_ids))
            .collect();
        deliveries.keep(&notes);
        // A released process took the file's snapshots: others saved since then are kept.
        let mut snapshots = if released { self.read() } else { Vec::new() };
        if !ours.is_empty() {
            snapshots.push(ours);
        }
        self.write(&snapshots);
        self.lock = None;
        self.problems
    }

    fn lock(&mut self) {
        if self.lock.is_some() {
            return;
        }
        match FileLock::acquire(&self.lock_path) {
            Ok(lock) => self.lock = Some(lock),
            Err(e) => self.problem(format!(
                "cannot lock {} ({e}); going on without it",
                self.lock_path.display()
            )),
        }
    }

    /// The saved snapshots; an unreadable file is set aside.
    fn read(&mut self) -> Vec<Snapshot> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.set_aside(&e.to_string());
                return Vec::new();
            }
        };
        match parse(&text) {
            Ok(snapshots) => snapshots,
            Err(why) => {
                self.set_aside(&why.to_string());
                Vec::new()
            }
        }
    }

    fn write(&mut self, snapshots: &[Snapshot]) {
        if snapshots.is_empty() {
            if let Err(e) = std::fs::remove_file(&self.path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                self.problem(format!("cannot remove {}: {e}", self.path.display()));
            }
            return;
        }
        let doc = serde_json::json!({ KEY: snapshots });
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        if let Err(e) = write_atomic(&self.path, text.as_bytes()) {
            self.problem(format!(
                "background callback runs still going were not saved ({e}); their results will not be reported, their output is in .context-pilot/run/consoles/"
            ));
        }
    }

    /// Renames an unreadable file so it is neither lost nor read again.
    fn set_aside(&mut self, why: &str) {
        let aside = aside_path(&self.path);
        let kept = match std::fs::rename(&self.path, &aside) {
            Ok(()) => format!("set aside as {}", aside.display()),
            Err(e) => format!("could not be set aside ({e})"),
        };
        self.problem(format!(
            "{} is unreadable ({why}); {kept}. The background callback runs it listed will not be reported; their output is in .context-pilot/run/consoles/",
            self.path.display()
        ));
    }

    fn problem(&mut self, text: String) {
        tracing::warn!("{text}");
        self.problems.push(text);
    }
}

/// Every module's saved state, by module id.
fn snapshot(host: &Host) -> Snapshot {
    host.registry().saved_states()
}

/// Why the carried-state file cannot be read.
#[derive(Debug, thiserror::Error)]
enum CarryFileError {
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("no '{KEY}' list")]
    NoList,
    #[error("'{KEY}' is not a list of objects: {0}")]
    NotObjects(#[source] serde_json::Error),
}

fn parse(text: &str) -> Result<Vec<Snapshot>, CarryFileError> {
    let doc: Value = serde_json::from_str(text).map_err(CarryFileError::Json)?;
    let list = doc.get(KEY).ok_or(CarryFileError::NoList)?.clone();
    serde_json::from_value(list).map_err(CarryFileError::NotObjects)
}

fn aside_path(path: &Path) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".unreadable-{stamp}"));
    path.with_file_name(name)
}

/// The UUIDs (run ids, console ids) anywhere in `snapshot`.
fn uuids(snapshot: &Snapshot) -> BTreeSet<String> {
    fn walk(value: &Value, out: &mut BTreeSet<String>) {
        match value {
            Value::String(s) if is_uuid(s) => {
                out.insert(s.to_ascii_lowercase());
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for value in snapshot.values() {
        walk(value, &mut out);
    }
    out
}

/// The hyphenated form, `8-4-4-4-12` hex digits.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn mentions_any(text: &str, ids: &BTreeSet<String>) -> bool {
    !ids.is_empty() && {
        let text = text.to_ascii_lowercase();
        ids.iter().any(|id| text.contains(id.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_found_anywhere_and_matched_in_text() {
        let snap: Snapshot = [(
            "callback".to_owned(),
            serde_json::json!({"runs": {"runs": [{"run_id": "0A1b2c3d-0000-4000-8000-00000000000f",
                "files": ["src/0a1b2c3d.rs"]}]}, "editor": null}),
        )]
        .into();
        let ids = uuids(&snap);
        assert_eq!(ids.len(), 1);
        assert!(mentions_any(
            "Callback 'x' passed (run 0a1b2c3d-0000-4000-8000-00000000000f, 1.5s)",
            &ids
        ));
        assert!(!mentions_any(
            "Callback 'x' passed (run 1a1b2c3d-0000-4000-8000-00000000000f)",
            &ids
        ));
        assert!(!mentions_any("anything", &BTreeSet::new()));
    }

    #[test]
    fn a_bad_file_is_described() {
        assert!(
            parse("{")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(
            parse("{}")
                .unwrap_err()
                .to_string()
                .contains("no 'snapshots'")
        );
        assert!(
            parse(r#"{"snapshots": [1]}"#)
                .unwrap_err()
                .to_string()
                .contains("list of objects")
        );
        let ok = parse(r#"{"snapshots": [{"callback": {"runs": {}}}]}"#).unwrap();
        assert_eq!(ok.len(), 1);
        assert!(ok[0].contains_key("callback"));
    }
}
