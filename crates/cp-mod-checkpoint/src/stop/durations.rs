//! How long each test command's last complete run took, so a timeout can say how long the
//! suite usually takes and a limit nobody configured can fit the suite. Kept for the project
//! (whichever agent or warm run ran it) in `.context-pilot/state/test-durations.json`, a cache:
//! a lost file only loses that knowledge. A few dozen commands at most.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cp_base::{FileLock, Project};
use serde::{Deserialize, Serialize};

use super::gate_files::GateFiles;

const FILE: &str = "test-durations.json";

/// Commands remembered at most; the oldest entries go first.
const MAX_COMMANDS: usize = 32;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    /// `dir\0command` → (milliseconds, sequence number of the record).
    #[serde(default)]
    runs: BTreeMap<String, (u64, u64)>,
}

/// The durations file of a project.
pub(crate) struct Durations {
    path: PathBuf,
    lock: PathBuf,
    /// The files the project's test runs wrote, recorded by the same runs.
    pub(crate) gate_files: GateFiles,
}

impl Durations {
    pub(crate) fn new(project: &Project) -> Self {
        Self {
            path: project.dir().join("state").join(FILE),
            lock: project.locks_dir().join(FILE),
            gate_files: GateFiles::new(project),
        }
    }

    fn key(command: &str, dir: &Path) -> String {
        format!("{}\0{command}", dir.display())
    }

    fn load(&self) -> Saved {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// The last complete run of `command` in `dir`, in milliseconds.
    pub(crate) fn usual_ms(&self, command: &str, dir: &Path) -> Option<u64> {
        self.load().runs.get(&Self::key(command, dir)).map(|r| r.0)
    }

    /// Records a run that finished (passed or not) in `ms`.
    pub(crate) fn record(&self, command: &str, dir: &Path, ms: u64) {
        // A warm run and a stop may record at once.
        let _lock = FileLock::acquire(&self.lock)
            .inspect_err(|e| tracing::warn!("test durations recorded without a lock: {e}"));
        let mut saved = self.load();
        let next = saved.runs.values().map(|r| r.1).max().map_or(0, |n| n + 1);
        saved.runs.insert(Self::key(command, dir), (ms, next));
        while saved.runs.len() > MAX_COMMANDS {
            let oldest = saved
                .runs
                .iter()
                .min_by_key(|(_, r)| r.1)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(key) => saved.runs.remove(&key),
                None => break,
            };
        }
        let written = serde_json::to_vec(&saved)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                if let Some(dir) = self.path.parent() {
                    cp_base::private::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                cp_base::write_atomic(&self.path, &bytes).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), "cannot save test durations: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_complete_run_is_remembered_and_old_commands_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let durations = Durations::new(&project);
        let here = Path::new("/p");
        assert_eq!(durations.usual_ms("make test", here), None);
        durations.record("make test", here, 33_000);
        durations.record("make test", here, 34_000);
        assert_eq!(durations.usual_ms("make test", here), Some(34_000));
        for i in 0..MAX_COMMANDS {
            durations.record(&format!("c{i}"), here, 1);
        }
        assert_eq!(durations.usual_ms("make test", here), None);
        assert_eq!(durations.usual_ms("c31", here), Some(1));
    }
}
