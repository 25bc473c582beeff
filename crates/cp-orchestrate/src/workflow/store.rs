//! Run records: `.context-pilot/runs/<id>/context.json`, written atomically after every phase
//! and decision, and a lock so only one process drives a run.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cp_base::{Project, is_valid_name, write_atomic};
use serde::{Deserialize, Serialize};

use super::context::RunContext;
use super::error::WorkflowError;
use super::phase_record::PhaseRecord;
use super::proof::{BranchVerdict, QueueCost};

/// Name of the run file inside `runs/<id>/`.
pub const RUN_FILE: &str = "context.json";
const LOCK_FILE: &str = ".run.lock";
/// How long [`RunStore::lock`] waits for a busy lock.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// How a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// In progress (or crashed: resume it).
    Running,
    /// Every phase ran (or was skipped).
    Completed,
    /// Aborted at an approval gate (exit code 2).
    Aborted,
    /// A phase failed; fix the cause and resume.
    Failed,
}

impl RunStatus {
    /// The `snake_case` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Aborted => "aborted",
            Self::Failed => "failed",
        }
    }
}

/// Whether the phase at the position is still to run or waits for its approval gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The phase is about to run or was running (a resume runs it again).
    Phase,
    /// The phase is done; its approval gate is next.
    #[serde(rename = "checkpoint")]
    Approval,
}

/// Where a run is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The phase id.
    pub phase: String,
    /// Its stage.
    pub stage: Stage,
    /// Whether this run of the phase is already in `iteration_counts` (it is once the phase
    /// starts, or when `repeat_phase` scheduled it), so a resume does not count it twice.
    #[serde(default)]
    pub counted: bool,
}

/// Feedback waiting to be passed into the next phase's prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingFeedback {
    /// The phase whose approval gate collected it.
    pub phase: String,
    /// The option chosen.
    pub option: String,
    /// What the person wrote.
    pub text: String,
}

/// Everything about a run, as saved in `context.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The id (directory name).
    pub run_id: String,
    /// The workflow's name.
    pub workflow: String,
    /// The workflow file, relative to the project root when inside it.
    pub workflow_file: PathBuf,
    /// How the run stands.
    pub status: RunStatus,
    /// The next thing to do; `None` once finished.
    pub position: Option<Position>,
    /// Feedback for the next phase's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_feedback: Option<PendingFeedback>,
    /// Why the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC, of the last save.
    pub updated_at: String,
    /// The context conditions see.
    pub context: RunContext,
    /// Workflows with `depends_on`: each phase's status and where its work is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phase_runs: BTreeMap<String, PhaseRecord>,
    /// The commit the run's branch was at when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
    /// The run's branch as last established: set when a tested merge lands, when the tree a
    /// phase left in the project's tree is tested, and at the run's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<BranchVerdict>,
    /// What the merge queue's tests cost.
    #[serde(default, skip_serializing_if = "QueueCost::is_empty")]
    pub merge_queue: QueueCost,
}

/// Holds the run's lock; dropping it (or the process dying) releases it.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// The runs of a project.
#[derive(Debug, Clone)]
pub struct RunStore {
    dir: PathBuf,
}

pub(crate) fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

impl RunStore {
    /// The runs under the project's `.context-pilot/runs/`.
    pub fn new(project: &Project) -> Self {
        Self {
            dir: project.runs_dir(),
        }
    }

    /// The runs directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of run `run_id`.
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.dir.join(run_id)
    }

    /// A new, unused run id: `<workflow>-<UTC timestamp>`, with a suffix if taken.
    pub fn new_run_id(&self, workflow: &str) -> String {
        let name: String = workflow
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .take(32)
            .collect();
        let name = if name.is_empty() {
            "run".to_owned()
        } else {
            name
        };
        let stamp: String = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let base = format!("{name}-{stamp}");
        let mut id = base.clone();
        let mut n = 2;
        while self.run_dir(&id).exists() {
            id = format!("{base}-{n}");
            n += 1;
        }
        id
    }

    /// Takes the run's lock, waiting at most two seconds for it.
    pub fn lock(&self, run_id: &str) -> Result<RunLock, WorkflowError> {
        let dir = self.run_dir(run_id);
        std::fs::create_dir_all(&dir).map_err(|e| cp_base::StoreError::io(&dir, e))?;
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| cp_base::StoreError::io(&path, e))?;
        // A process forked by another thread (git, a test command) holds a copy of the
        // descriptor until it execs, which keeps a just-released lock held for a moment; so a
        // busy lock is retried briefly before it counts as another driver's.
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(RunLock { _file: file }),
                Err(TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(WorkflowError::RunLocked {
                        run_id: run_id.to_owned(),
                        lock: path,
                    });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(cp_base::StoreError::io(&path, e).into());
                }
            }
        }
    }

    /// Saves `state` atomically, stamping `updated_at`.
    pub fn save(&self, state: &mut RunState) -> Result<(), WorkflowError> {
        state.updated_at = now();
        let path = self.run_dir(&state.run_id).join(RUN_FILE);
        let mut json =
            serde_json::to_string_pretty(state).map_err(|source| WorkflowError::CorruptRun {
                path: path.clone(),
                source,
            })?;
        json.push('\n');
        write_atomic(&path, json.as_bytes())?;
        Ok(())
    }

    /// Loads run `run_id`.
    pub fn load(&self, run_id: &str) -> Result<RunState, WorkflowError> {
        if !is_valid_name(run_id) {
            return Err(WorkflowError::InvalidRunId(run_id.to_owned()));
        }
        let path = self.run_dir(run_id).join(RUN_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(WorkflowError::RunNotFound {
                    run_id: run_id.to_owned(),
                    dir: self.dir.clone(),
                });
            }
            Err(e) => return Err(cp_base::StoreError::io(&path, e).into()),
        };
        serde_json::from_str(&text).map_err(|source| WorkflowError::CorruptRun { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: &str) -> RunState {
        RunState {
            run_id: id.into(),
            workflow: "w".into(),
            workflow_file: "w.yaml".into(),
            status: RunStatus::Running,
            position: Some(Position {
                phase: "a".into(),
                stage: Stage::Phase,
                counted: false,
            }),
            pending_feedback: None,
            error: None,
            started_at: now(),
            updated_at: String::new(),
            context: RunContext::default(),
            phase_runs: BTreeMap::new(),
            started_from: None,
            verdict: None,
            merge_queue: QueueCost::default(),
        }
    }

    #[test]
    fn the_approval_stage_keeps_its_saved_name() {
        // Runs saved before the rename name the stage "checkpoint"; they must still resume.
        assert_eq!(
            serde_json::to_value(Stage::Approval).unwrap(),
            serde_json::json!("checkpoint")
        );
        assert_eq!(
            serde_json::from_value::<Stage>(serde_json::json!("checkpoint")).unwrap(),
            Stage::Approval
        );
    }

    #[test]
    fn saves_loads_and_locks() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(&Project::at(dir.path()));
        let id = store.new_run_id("my flow!");
        assert!(id.starts_with("my-flow--") && is_valid_name(&id), "{id}");
        let mut s = state(&id);
        store.save(&mut s).unwrap();
        assert_eq!(store.load(&id).unwrap(), s);
        assert_ne!(store.new_run_id("my flow!"), id);
        let lock = store.lock(&id).unwrap();
        assert!(matches!(
            store.lock(&id),
            Err(WorkflowError::RunLocked { .. })
        ));
        drop(lock);
        store.lock(&id).unwrap();
    }

    #[test]
    fn bad_ids_and_corrupt_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(&Project::at(dir.path()));
        assert!(matches!(
            store.load("../x"),
            Err(WorkflowError::InvalidRunId(_))
        ));
        let err = store.load("nope").unwrap_err().to_string();
        assert!(err.contains("no workflow run 'nope'"), "{err}");
        std::fs::create_dir_all(store.run_dir("bad")).unwrap();
        std::fs::write(store.run_dir("bad").join(RUN_FILE), "{oops").unwrap();
        let err = store.load("bad").unwrap_err().to_string();
        assert!(err.contains("is not a valid run file"), "{err}");
        assert_eq!(
            std::fs::read_to_string(store.run_dir("bad").join(RUN_FILE)).unwrap(),
            "{oops"
        );
    }
}
