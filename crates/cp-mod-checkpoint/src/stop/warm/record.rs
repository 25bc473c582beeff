//! The project's warm-run record: the newest warm run, from the edit that asked for it to its
//! end, and the verdicts of the last finished runs, each under the key of the tree and the
//! commands it tested ([`super::key`]).
//!
//! Kept in `.context-pilot/state/warm-run.json`. The warm run itself and the stop gate both
//! change it, so every change holds a lock (`run/locks/warm-run.json`) and replaces the file
//! at once (a temporary file renamed over it): a reader sees one state or the next. It is a
//! cache: a lost or unreadable file only loses verdicts, which then run afresh.

use std::path::PathBuf;

use cp_base::{FileLock, Project};
use serde::{Deserialize, Serialize};

use super::super::report::{TestOutcome, WarmUse};
use super::super::state::write_replace;

const FILE: &str = "warm-run.json";

/// Verdicts kept at most; the oldest go first.
const MAX_VERDICTS: usize = 8;

/// Base verdicts kept at most (one a command and commit); the oldest go first.
const MAX_BASES: usize = 16;

/// The newest warm run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmRun {
    /// Its console (a uuid), whose kill ends the run's whole process tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console: Option<String>,
    /// The edit that asked for it, e.g. `Edit src/app.py`.
    pub change: String,
    /// When it was asked for, in milliseconds since the Unix epoch.
    pub requested_at_ms: u64,
    /// Where it is.
    pub phase: WarmPhase,
    /// Set when a stop took (or waited for) its verdict: how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<WarmUse>,
}

/// Where a warm run is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum WarmPhase {
    /// Waiting for the edits to settle.
    Waiting,
    /// Testing the tree whose key this is, since `started_at_ms`.
    Running {
        /// The key of the tree and the commands.
        key: String,
        /// The commands, in order.
        commands: Vec<String>,
        /// When the tests started, in milliseconds since the Unix epoch.
        started_at_ms: u64,
    },
    /// Finished: its verdict is kept under `key`.
    Done {
        /// The key of the tree and the commands.
        key: String,
        /// Whether every run passed.
        passed: bool,
        /// How long the tests took.
        elapsed_ms: u64,
    },
    /// Finished, but its result is no verdict (the tree changed under it, it was cut off).
    NoVerdict {
        /// Why, for people.
        why: String,
    },
    /// Nothing to run (only documentation changed, the tests are off, already tested).
    Skipped {
        /// Why, for people.
        why: String,
    },
    /// Ended before it finished.
    Cancelled {
        /// Why, for people: a stop that tested another tree, the end of the session.
        why: String,
    },
}

impl WarmPhase {
    /// Waiting or running: its console may still have processes.
    pub fn is_active(&self) -> bool {
        matches!(self, Self::Waiting | Self::Running { .. })
    }
}

/// A finished warm run's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WarmVerdict {
    /// The key of the tree and the commands.
    pub(crate) key: String,
    /// One outcome a command.
    pub(crate) outcomes: Vec<TestOutcome>,
    /// When it finished, in milliseconds since the Unix epoch.
    pub(crate) finished_at_ms: u64,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WarmRecord {
    /// The newest warm run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) current: Option<WarmRun>,
    /// The last finished runs' verdicts, oldest first.
    #[serde(default)]
    pub(crate) verdicts: Vec<WarmVerdict>,
    /// A warm run asked for before this time (milliseconds since the Unix epoch) is no
    /// longer wanted: a stop came after it (and tested the tree itself, or found nothing
    /// due), or the session ended.
    #[serde(default)]
    pub(crate) wanted_after_ms: u64,
    /// Verdicts of commits' trees, one command each, oldest first: what sessions that begin
    /// on such a commit compare their failures with ([`super::key::base_key`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) bases: Vec<WarmVerdict>,
}

impl WarmRecord {
    /// The verdict kept under `key`.
    pub(crate) fn verdict(&self, key: &str) -> Option<&WarmVerdict> {
        self.verdicts.iter().rev().find(|v| v.key == key)
    }

    /// Keeps `verdict`, replacing one with the same key; at most [`MAX_VERDICTS`].
    pub(crate) fn keep(&mut self, verdict: WarmVerdict) {
        self.verdicts.retain(|v| v.key != verdict.key);
        self.verdicts.push(verdict);
        let excess = self.verdicts.len().saturating_sub(MAX_VERDICTS);
        self.verdicts.drain(..excess);
    }

    /// The base verdict kept under `key` (one outcome).
    pub(crate) fn base(&self, key: &str) -> Option<&TestOutcome> {
        self.bases
            .iter()
            .rev()
            .find(|v| v.key == key)
            .and_then(|v| v.outcomes.first())
    }

    /// Keeps each of `outcomes` as a base verdict under its key of `keys` (in order).
    pub(crate) fn keep_bases(&mut self, keys: &[String], outcomes: &[TestOutcome]) {
        for (key, outcome) in keys.iter().zip(outcomes) {
            self.keep_base(WarmVerdict {
                key: key.clone(),
                outcomes: vec![outcome.clone()],
                finished_at_ms: cp_base::now_ms(),
            });
        }
    }

    /// Keeps a base verdict, replacing one with the same key; at most [`MAX_BASES`].
    pub(crate) fn keep_base(&mut self, verdict: WarmVerdict) {
        self.bases.retain(|v| v.key != verdict.key);
        self.bases.push(verdict);
        let excess = self.bases.len().saturating_sub(MAX_BASES);
        self.bases.drain(..excess);
    }
}

/// The record's file and lock.
pub(crate) struct RecordFile {
    path: PathBuf,
    lock: PathBuf,
}

impl RecordFile {
    pub(crate) fn new(project: &Project) -> Self {
        Self {
            path: project.dir().join("state").join(FILE),
            lock: project.locks_dir().join(FILE),
        }
    }

    /// Where the record lives (the panel follows its changes).
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The record as it is; empty when missing or unreadable (it is a cache).
    pub(crate) fn load(&self) -> WarmRecord {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return WarmRecord::default(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot read the warm-run record: {e}");
                return WarmRecord::default();
            }
        };
        serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(
                path = %self.path.display(),
                "the warm-run record is not valid JSON ({e}); starting afresh"
            );
            WarmRecord::default()
        })
    }

    /// Changes the record under its lock and saves it; returns what `change` returned.
    /// Failures to save are logged: the record is a cache.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut WarmRecord) -> R) -> R {
        let lock = FileLock::acquire(&self.lock);
        if let Err(e) = &lock {
            tracing::warn!("warm-run record changed without its lock: {e}");
        }
        let mut record = self.load();
        let out = change(&mut record);
        let saved = serde_json::to_vec(&record)
            .map_err(|e| e.to_string())
            .and_then(|bytes| write_replace(&self.path, &bytes).map_err(|e| e.to_string()));
        if let Err(e) = saved {
            tracing::warn!(path = %self.path.display(), "cannot save the warm-run record: {e}");
        }
        drop(lock);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(key: &str) -> WarmVerdict {
        WarmVerdict {
            key: key.into(),
            outcomes: Vec::new(),
            finished_at_ms: 1,
        }
    }

    #[test]
    fn verdicts_are_kept_by_key_newest_last_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = RecordFile::new(&Project::at(dir.path()));
        assert_eq!(file.load(), WarmRecord::default());
        file.update(|r| {
            for i in 0..MAX_VERDICTS + 2 {
                r.keep(verdict(&format!("k{i}")));
            }
            r.keep(verdict("k3"));
        });
        let record = file.load();
        assert_eq!(record.verdicts.len(), MAX_VERDICTS);
        assert!(record.verdict("k0").is_none(), "the oldest go first");
        assert_eq!(record.verdicts.last().unwrap().key, "k3");
        assert_eq!(
            record.verdicts.iter().filter(|v| v.key == "k3").count(),
            1,
            "one verdict a key"
        );
    }

    #[test]
    fn a_corrupt_record_is_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = RecordFile::new(&Project::at(dir.path()));
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::fs::write(file.path(), "{oops").unwrap();
        assert_eq!(file.load(), WarmRecord::default());
        file.update(|r| r.wanted_after_ms = 5);
        assert_eq!(file.load().wanted_after_ms, 5);
    }
}
