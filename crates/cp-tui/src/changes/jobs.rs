//! The Changes panel's background work: reading the diff (the latest request wins: one read
//! at a time, and a request made meanwhile runs once it ends), and the git actions (revert,
//! commit), each ending with a typed result, [`ChangesMsg`]. The app runs them as background
//! jobs (`app/changes.rs`), which carry that result to the event loop.

use std::path::PathBuf;
use std::sync::Arc;

use cp_git::{Git, ReadOptions};

use super::msg::{Action, ChangesMsg};
use super::snapshot::Snapshot;

/// Reads the changes of the repository holding `dir`.
pub struct Refresh {
    pub dir: PathBuf,
    pub generation: u64,
    /// The last reading: its untracked files that did not change are not read again, and
    /// the highlighting of files that did not change is reused.
    pub previous: Arc<Snapshot>,
    /// Diff against this commit instead of `HEAD` (a workflow phase's start).
    pub base: Option<String>,
    /// Files the person asked to see in full (`l`).
    pub load: Vec<String>,
    /// The selected file, highlighted first.
    pub selected: Option<String>,
}

impl Refresh {
    /// Reads the changes (on the job's thread).
    pub fn read(self) -> ChangesMsg {
        let git = Git { path_env: None };
        let options = ReadOptions {
            base: self.base.as_deref(),
            previous: &self.previous.files,
            load: &self.load,
        };
        let result = git
            .repo_root(&self.dir)
            .and_then(|root| Ok((git.review(&root, &options)?, root)))
            .map(|(review, root)| {
                let pending = git.pending_operation(&root);
                let mut snapshot =
                    Snapshot::of_review(root, review, &self.previous, self.selected.as_deref());
                snapshot.base.clone_from(&self.base);
                snapshot.pending = pending;
                Arc::new(snapshot)
            });
        ChangesMsg::Loaded {
            generation: self.generation,
            result,
        }
    }
}

/// Reads the commit `HEAD` names when a workflow phase starts.
pub struct PhaseBase {
    pub dir: PathBuf,
}

impl PhaseBase {
    /// Reads the commit (on the job's thread).
    pub fn read(self) -> ChangesMsg {
        ChangesMsg::PhaseBase(Git { path_env: None }.head(&self.dir))
    }
}

/// Runs one git action in the repository at `root`.
pub struct Act {
    pub root: PathBuf,
    /// The commit a file is reverted to, when not `HEAD`.
    pub base: Option<String>,
    pub action: Action,
}

impl Act {
    /// Runs the action (on the job's thread).
    pub fn perform(self) -> ChangesMsg {
        let git = Git { path_env: None };
        let result = match &self.action {
            Action::RevertHunk { file, hunk } => match file.hunks.get(*hunk) {
                Some(h) => git
                    .revert_hunk_to(&self.root, file, h, self.base.as_deref())
                    .map(|()| self.action.describe()),
                None => Ok(String::new()),
            },
            Action::RevertFile(file) => git
                .revert_file_to(&self.root, file, self.base.as_deref())
                .map(|()| self.action.describe()),
            Action::Commit { message, files } => git
                .commit_files(&self.root, files, message)
                .map(|head| format!("committed {head}")),
        };
        ChangesMsg::Done {
            action: self.action,
            result,
        }
    }
}
