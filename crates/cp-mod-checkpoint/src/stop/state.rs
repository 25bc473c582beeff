//! Per-worker stop gate state: the fingerprint of the working tree the agent was last told
//! about, the last test run, the consecutive blocks of each agent session, and the last
//! report (for the panel).
//!
//! Kept in `.context-pilot/state/<worker>/checkpoint.json`, which git ignores, written
//! atomically: each hook call is a new process, so this file is the gate's memory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::report::{StopReport, TestOutcome, one_or_many};

/// Sessions remembered at most; the oldest are forgotten first.
const MAX_SESSIONS: usize = 64;

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct CheckpointState {
    /// Fingerprint of the changed set when the worker last stopped.
    pub(crate) fingerprint: String,
    pub(crate) last_report: Option<StopReport>,
    /// The last test run and the fingerprint of the tree it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_tests: Option<LastTests>,
    /// Consecutive blocks by agent session id (Claude Code's and Gemini CLI's `session_id`,
    /// or the TUI's turn).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) sessions: BTreeMap<String, SessionBlocks>,
}

/// The last test runs (one a project), remembered so a failure is not forgotten on the
/// next stop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LastTests {
    pub(crate) fingerprint: String,
    /// Saved as `outcome`, one run, before repositories with several projects.
    #[serde(alias = "outcome", deserialize_with = "one_or_many")]
    pub(crate) outcomes: Vec<TestOutcome>,
}

impl LastTests {
    /// Whether any project's tests were red.
    pub(crate) fn failed(&self) -> bool {
        self.outcomes.iter().any(|o| !o.passed)
    }

    /// Whether any project's tests hold the agent ([`super::TestOutcome::holds`]): red, with a
    /// failure that did not predate the session (or `hold_existing`).
    pub(crate) fn holds(&self, hold_existing: bool) -> bool {
        self.outcomes.iter().any(|o| o.holds(hold_existing))
    }
}

/// How many stops of one session were blocked in a row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SessionBlocks {
    pub(crate) blocks: u32,
    /// RFC 3339 time of the last block; used to forget old sessions.
    pub(crate) at: String,
}

impl CheckpointState {
    /// Blocks in a row so far for `session`.
    pub(crate) fn blocks(&self, session: &str) -> u32 {
        self.sessions.get(session).map_or(0, |s| s.blocks)
    }

    /// Records the count for `session`; 0 forgets it. Keeps at most [`MAX_SESSIONS`].
    pub(crate) fn set_blocks(&mut self, session: &str, blocks: u32, at: &str) {
        if blocks == 0 {
            self.sessions.remove(session);
            return;
        }
        self.sessions.insert(
            session.to_owned(),
            SessionBlocks {
                blocks,
                at: at.to_owned(),
            },
        );
        forget_oldest(&mut self.sessions, MAX_SESSIONS, |s| &s.at);
    }
}

/// Keeps the `max` entries of `map` whose `at` (an RFC 3339 time, which orders as text) is
/// the latest: the oldest sessions are forgotten first.
pub(crate) fn forget_oldest<V>(
    map: &mut BTreeMap<String, V>,
    max: usize,
    at: impl Fn(&V) -> &String,
) {
    while map.len() > max {
        let oldest = map
            .iter()
            .min_by(|a, b| at(a.1).cmp(at(b.1)))
            .map(|(key, _)| key.clone());
        match oldest {
            Some(key) => map.remove(&key),
            None => break,
        };
    }
}

pub(crate) struct StateFile {
    path: PathBuf,
}

impl StateFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// The saved state. A missing file is `None`; an unreadable or corrupt one is moved
    /// aside (so it is not silently overwritten), logged, and treated as missing.
    pub(crate) fn load(&self) -> Option<CheckpointState> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot read checkpoint state: {e}");
                return None;
            }
        };
        match serde_json::from_str(&text) {
            Ok(state) => Some(state),
            Err(e) => {
                let aside = self.path.with_extension("json.corrupt");
                let moved = std::fs::rename(&self.path, &aside);
                tracing::warn!(
                    path = %self.path.display(),
                    moved_to = %aside.display(),
                    moved = moved.is_ok(),
                    "checkpoint state is not valid JSON ({e}); starting fresh"
                );
                None
            }
        }
    }

    /// Saves the state; failure is logged, since a lost fingerprint only costs one extra
    /// stop gate message.
    pub(crate) fn save(&self, state: &CheckpointState) {
        self.write(&Saved::of(state, state.last_report.as_ref()));
    }

    /// Saves the state with `report` as its last report, which the caller keeps: a report
    /// of thousands of files is not copied to be saved.
    pub(crate) fn save_with_report(&self, state: &CheckpointState, report: &StopReport) {
        self.write(&Saved::of(state, Some(report)));
    }

    fn write(&self, saved: &Saved<'_>) {
        // Compact: with thousands of changed files the pretty form is several times larger.
        // Written as it is serialized: a state of thousands of files is never a buffer whole.
        let result = write_replace_with(&self.path, |file| {
            serde_json::to_writer(file, saved).map_err(std::io::Error::from)
        })
        .map_err(|e| e.to_string());
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), "cannot save checkpoint state: {e}");
        }
    }
}

/// What a [`CheckpointState`] is saved as, its last report borrowed: the one shape written
/// (read back as a `CheckpointState`).
#[derive(Serialize)]
struct Saved<'a> {
    fingerprint: &'a str,
    last_report: Option<&'a StopReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_tests: Option<&'a LastTests>,
    #[serde(skip_serializing_if = "no_sessions")]
    sessions: &'a BTreeMap<String, SessionBlocks>,
}

impl<'a> Saved<'a> {
    fn of(state: &'a CheckpointState, last_report: Option<&'a StopReport>) -> Self {
        let CheckpointState {
            fingerprint,
            last_report: _,
            last_tests,
            sessions,
        } = state;
        Self {
            fingerprint,
            last_report,
            last_tests: last_tests.as_ref(),
            sessions,
        }
    }
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes the field by reference"
)]
fn no_sessions(sessions: &&BTreeMap<String, SessionBlocks>) -> bool {
    sessions.is_empty()
}

/// Replaces `path` through a temporary file and a rename, so a reader sees the old or the
/// new state, never half of one. Unlike `cp_base::write_atomic` it does not fsync: this state
/// is a per-machine cache (a lost or empty file is moved aside by [`StateFile::load`] and
/// costs one extra stop gate message), and syncing megabytes on every stop of a big change
/// set was a large part of the stop gate's time (issue 15).
pub(super) fn write_replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_replace_with(path, |file| std::io::Write::write_all(file, bytes))
}

/// [`write_replace`] with the content written by `write`, through a buffer.
fn write_replace_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Under `state/`: private, whatever the umask (see `cp_base::private`).
    cp_base::private::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.tmp.{}.{nanos}", std::process::id()));
    let result = cp_base::private::open_options(&tmp)
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|file| {
            let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, file);
            write(&mut buffered)?;
            std::io::Write::flush(&mut buffered)
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_state_is_moved_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint.json");
        std::fs::write(&path, "{oops").unwrap();
        let file = StateFile::new(path.clone());
        assert!(file.load().is_none());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("checkpoint.json.corrupt")).unwrap(),
            "{oops"
        );
        file.save(&CheckpointState {
            fingerprint: "f".into(),
            ..CheckpointState::default()
        });
        assert_eq!(file.load().unwrap().fingerprint, "f");
    }

    #[test]
    fn session_counts_survive_a_reload_and_old_sessions_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(dir.path().join("checkpoint.json"));
        let mut state = CheckpointState::default();
        for i in 0..70 {
            state.set_blocks(&format!("s{i:02}"), 2, &format!("2026-01-01T00:00:{i:02}Z"));
        }
        state.set_blocks("s69", 3, "2026-01-01T00:01:00Z");
        file.save(&state);
        let loaded = file.load().unwrap();
        assert_eq!(loaded.sessions.len(), MAX_SESSIONS);
        assert_eq!(loaded.blocks("s69"), 3);
        assert_eq!(loaded.blocks("s00"), 0, "the oldest go first");
        let mut loaded = loaded;
        loaded.set_blocks("s69", 0, "");
        assert_eq!(loaded.blocks("s69"), 0);
    }

    #[test]
    fn a_report_saved_beside_the_state_is_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(dir.path().join("checkpoint.json"));
        let mut state = CheckpointState {
            fingerprint: "tree:base".into(),
            last_tests: Some(LastTests {
                fingerprint: "tree".into(),
                outcomes: Vec::new(),
            }),
            ..CheckpointState::default()
        };
        state.set_blocks("s1", 2, "2026-01-01T00:00:00Z");
        let mut report = StopReport::new(super::super::report::StopPhase::Second);
        report.message = Some("Commit your changes".into());
        report.uncommitted_gated = vec!["a.rs".into()];
        // An older report in the state is replaced by the one given.
        state.last_report = Some(StopReport::new(super::super::report::StopPhase::First));
        file.save_with_report(&state, &report);
        let loaded = file.load().unwrap();
        assert_eq!(loaded.fingerprint, "tree:base");
        assert_eq!(loaded.blocks("s1"), 2);
        assert_eq!(
            loaded.last_tests.map(|t| t.fingerprint).as_deref(),
            Some("tree")
        );
        let saved = loaded.last_report.unwrap();
        assert_eq!(
            serde_json::to_value(&saved).unwrap(),
            serde_json::to_value(&report).unwrap()
        );
        // Saved as the state itself, the same bytes.
        state.last_report = Some(report.clone());
        let with = std::fs::read(dir.path().join("checkpoint.json")).unwrap();
        file.save(&state);
        assert_eq!(
            std::fs::read(dir.path().join("checkpoint.json")).unwrap(),
            with
        );
    }
}
