//! What the Changes panel's background work reports to the event loop, and the git actions a
//! person confirms: data only, so the events can name it without depending on the jobs that
//! send it.

use std::sync::Arc;

use cp_git::{CommitMessage, FileDiff};

use super::snapshot::Snapshot;

/// What the Changes panel's background work reports.
#[derive(Debug)]
pub enum ChangesMsg {
    /// A reading of the changes (request `generation`), or why git could not give one.
    Loaded {
        generation: u64,
        result: Result<Arc<Snapshot>, cp_git::GitError>,
    },
    /// The commit `HEAD` named when a workflow phase started (its diff's base).
    PhaseBase(Option<String>),
    /// A git action ended: what was done, or git's words on why not.
    Done {
        action: Action,
        result: Result<String, cp_git::ReviewError>,
    },
}

/// A git action the person confirmed.
#[derive(Debug, Clone)]
pub enum Action {
    RevertHunk {
        file: Box<FileDiff>,
        hunk: usize,
    },
    RevertFile(Box<FileDiff>),
    /// Commit exactly `files` (the list the commit dialog showed).
    Commit {
        message: CommitMessage,
        files: Vec<FileDiff>,
    },
}

impl Action {
    /// The action in words, for the panel and the status bar.
    pub fn describe(&self) -> String {
        match self {
            Self::RevertHunk { file, hunk } => {
                format!("reverted hunk {} of {}", hunk + 1, file.path)
            }
            Self::RevertFile(file) => format!("reverted {}", file.path),
            Self::Commit { .. } => "committed".to_owned(),
        }
    }
}
