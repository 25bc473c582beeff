//! A phase's own git worktree: `.context-pilot/worktrees/<run>/<phase>/` on branch
//! `cp/<run>/<phase>`, made from the run's branch when the phase starts (or found again on a
//! resume, or, for a phase sent back by the merge queue, brought up to date with the run's
//! branch), with the agent, worker id and restart loop that work in it.

use std::path::{Path, PathBuf};

use cp_base::{CancelToken, Project};
use cp_git::Repository;

use super::agents::{PhaseAgent, phase_worker};
use super::engine::Engine;
use super::error::WorkflowError;
use crate::restart::{RestartLoop, SessionDriver};

/// Where phase worktrees live, under the project's `.context-pilot/`.
pub(super) const WORKTREES: &str = "worktrees";

/// A phase ready to run on its own thread: its restart loop, its agent, its prompt.
pub(super) type Launched = (RestartLoop, Box<dyn SessionDriver + Send>, String);

impl Engine<'_> {
    /// Makes (or, on a resume, finds) phase `index`'s worktree and its agent.
    pub(super) fn launch(
        &mut self,
        repo: &Repository,
        index: usize,
    ) -> Result<Launched, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let id = phase.id.clone();
        let agent = phase.agent.clone();
        let host = phase.host.clone();
        let run_id = self.state.run_id.clone();
        let path = self.project.dir().join(WORKTREES).join(&run_id).join(&id);
        let branch = format!("cp/{run_id}/{id}");
        if !repo.has_branch(&branch) {
            let base = repo.head().map_err(|e| self.git_error(index, e))?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| cp_base::StoreError::io(parent, e))?;
            }
            repo.add_worktree(&path, &branch, &base)
                .map_err(|e| self.git_error(index, e))?;
            self.record(index).base_commit = Some(base);
        } else if !path.join(".git").exists() {
            // The branch survived but its worktree was removed: check it out again.
            repo.checkout_worktree(&path, &branch)
                .map_err(|e| self.git_error(index, e))?;
        }
        if let Some(back) = self.record(index).sent_back.clone().filter(|b| b.own_tree) {
            // Back from a red merge: it works on its branch with the run's branch merged in.
            self.bring_up_to_date(index, &path, &branch, &back)?;
        }
        let relative = relative_to(&path, self.project.root());
        let record = self.record(index);
        record.branch = Some(branch);
        record.worktree = Some(relative);
        record.error = None;
        self.begin(index)?;
        let worker = phase_worker(&id, &self.parallel.worker);
        // A project in a subdirectory of its repository is in the same subdirectory there.
        let root = project_in(repo, &path);
        let stop = CancelToken::new();
        let spec = PhaseAgent {
            phase: &id,
            root: &root,
            worker: &worker,
            agent: agent.as_deref(),
            host: host.as_deref(),
            stop: &stop,
        };
        let drivers = self.parallel.drivers.clone();
        let driver = drivers
            .as_ref()
            .ok_or_else(|| WorkflowError::Agent {
                run_id: run_id.clone(),
                phase: id.clone(),
                message: "no driver factory".into(),
            })?
            .driver(&spec)
            .map_err(|e| WorkflowError::Agent {
                run_id: run_id.clone(),
                phase: id.clone(),
                message: e.to_string(),
            })?;
        let prompt = self.phase_prompt(index)?;
        // From here on the phase runs on its thread, which a stop of its own can end.
        self.phase_stops.insert(index, stop);
        let restart = RestartLoop::new(Project::at(&root), self.config.clone()).with_worker(worker);
        Ok((restart, driver, prompt))
    }
}

/// The project's root inside the worktree at `tree`: the same subdirectory of the repository
/// as the project's own root.
pub(super) fn project_in(repo: &Repository, tree: &Path) -> PathBuf {
    match repo.prefix() {
        Ok(prefix) if !prefix.is_empty() => tree.join(prefix),
        _ => tree.to_path_buf(),
    }
}

/// `path` relative to `root` when inside it.
fn relative_to(path: &Path, root: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}
