//! The Changes panel's background work: reading the diff (the latest request wins: one read
//! at a time, and a request made meanwhile runs once it ends), and the git actions (revert,
//! commit), each reporting a typed result over the event channel.

use std::path::PathBuf;
use std::sync::Arc;

use cp_git::{Git, ReadOptions};

use crate::background::{Job, Reporter};
use crate::events::AppEvent;

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

impl Job for Refresh {
    fn thread_name(&self) -> String {
        format!("cp-changes-{}", self.generation)
    }

    fn what(&self) -> &'static str {
        "reading the changes"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
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
        Some(AppEvent::Changes(ChangesMsg::Loaded {
            generation: self.generation,
            result,
        }))
    }
}

/// Reads the commit `HEAD` names when a workflow phase starts.
pub struct PhaseBase {
    pub dir: PathBuf,
}

impl Job for PhaseBase {
    fn thread_name(&self) -> String {
        "cp-changes-base".to_owned()
    }

    fn what(&self) -> &'static str {
        "reading the phase's base commit"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let head = Git { path_env: None }.head(&self.dir);
        Some(AppEvent::Changes(ChangesMsg::PhaseBase(head)))
    }
}

/// Runs one git action in the repository at `root`.
pub struct Act {
    pub root: PathBuf,
    /// The commit a file is reverted to, when not `HEAD`.
    pub base: Option<String>,
    pub action: Action,
}

impl Job for Act {
    fn thread_name(&self) -> String {
        "cp-changes-git".to_owned()
    }

    fn what(&self) -> &'static str {
        "the git action"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
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
        Some(AppEvent::Changes(ChangesMsg::Done {
            action: self.action,
            result,
        }))
    }
}
