//! Why a workflow could not be loaded, run or resumed.

use std::path::PathBuf;

use crate::restart::RestartError;

/// Errors of workflows; each names the file, phase or run involved and what to do.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    /// The workflow file could not be read.
    #[error("workflow {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid YAML for a workflow.
    #[error("workflow {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The workflow parses but does not make sense.
    #[error("workflow {path}{}: {message}", phase.as_ref().map(|p| format!(", phase '{p}'")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The phase at fault, if one is.
        phase: Option<String>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The restart policy or the git checks before the run failed.
    #[error(transparent)]
    Restart(#[from] RestartError),
    /// A phase failed in the restart loop; the run can be resumed after fixing the cause.
    #[error("run {run_id}: {source}; resume with --resume {run_id}")]
    Phase {
        /// The run.
        run_id: String,
        /// The failure.
        source: RestartError,
    },
    /// The person's answer could not be obtained or did not fit the checkpoint.
    #[error("run {run_id}, checkpoint after phase '{phase}': {message}")]
    Prompt {
        /// The run.
        run_id: String,
        /// The phase whose checkpoint asked.
        phase: String,
        /// What went wrong.
        message: String,
    },
    /// A `repeat_phase` would run a phase more often than its `max_iterations` allows.
    #[error(
        "run {run_id}: phase '{phase}' already ran {runs} times, its limit (max_iterations {cap}); it is not repeated again. Answer the checkpoint differently after --resume {run_id}, or raise 'max_iterations' on the phase or the workflow"
    )]
    IterationCap {
        /// The run.
        run_id: String,
        /// The phase that would have been repeated.
        phase: String,
        /// How many times it ran.
        runs: u32,
        /// Its limit.
        cap: u32,
    },
    /// `.context-pilot/` could not be written.
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    /// A run file exists but does not parse; it is left untouched.
    #[error("{path} is not a valid run file: {source}; fix or move it, it was not changed")]
    CorruptRun {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// No run with this id.
    #[error("no workflow run '{run_id}' in {dir}; list the directory to see the runs")]
    RunNotFound {
        /// The id asked for.
        run_id: String,
        /// Where runs live.
        dir: PathBuf,
    },
    /// The run already ended.
    #[error("run '{run_id}' already {status}; start a new run instead of resuming it")]
    RunFinished {
        /// The run.
        run_id: String,
        /// How it ended.
        status: String,
    },
    /// Another process drives the run right now.
    #[error(
        "run '{run_id}' is being driven by another process (lock {lock}); wait for it or stop it"
    )]
    RunLocked {
        /// The run.
        run_id: String,
        /// The lock file.
        lock: PathBuf,
    },
    /// A run id that could name a path outside the runs directory.
    #[error(
        "invalid run id '{0}': use the id printed when the run started (letters, digits, '_', '-')"
    )]
    InvalidRunId(String),
    /// The run was started from another workflow file than the one given.
    #[error(
        "run '{run_id}' runs {stored}, not {given}; drop the file argument or pass the same file"
    )]
    WorkflowMismatch {
        /// The run.
        run_id: String,
        /// The file the run was started with.
        stored: PathBuf,
        /// The file given now.
        given: PathBuf,
    },
}
