//! Setting aside a phase's work whose input changed under it: when `repeat_phase` sends the
//! run back to a phase that others depend on, those dependents' work rests on the old result.
//! A dependent still running is stopped first (its agent alone, as Ctrl-C stops every
//! agent); then its worktree goes, its branch is kept, with every commit, as
//! `cp/<run id>/<phase id>@<iteration>` (recorded in `phase_runs.<id>.superseded`), and it
//! waits to run again from the new base once the repeated phase is merged.

use cp_base::Project;
use cp_git::Repository;

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::{PhaseRecord, SupersededRun};
use super::phase_tree::project_in;
use super::prompter::WorkflowEvent;
use crate::restart::{commit_all, commit_identity};

impl Engine<'_> {
    /// Stops phase `index`'s agent when it runs on a thread (its end is then handled by
    /// [`supersede`](Self::supersede)); else sets its work aside at once. True when it was
    /// running and is being stopped.
    pub(super) fn stop_stale(&mut self, index: usize, reason: &str) -> Result<bool, WorkflowError> {
        if let Some(stop) = self.phase_stops.get(&index) {
            let id = &self.workflow.phases[index].id;
            tracing::info!(phase = %id, "stopping it: {reason}");
            stop.cancel();
            let record = self.record(index);
            record.superseding = true;
            record.error = Some(reason.to_owned());
            self.save()?;
            return Ok(true);
        }
        self.supersede(index, reason)?;
        Ok(false)
    }

    /// Sets phase `index`'s work aside (its agent has stopped): uncommitted work is committed
    /// on its branch when the run auto-commits, its consoles end, its worktree goes, its
    /// branch is kept as `<branch>@<iteration>`, and it waits to run again.
    pub(super) fn supersede(&mut self, index: usize, reason: &str) -> Result<(), WorkflowError> {
        self.unqueue(index);
        let id = self.workflow.phases[index].id.clone();
        let record = self.record(index).clone();
        let (Some(branch), Some(tree)) = (record.branch.clone(), record.worktree.clone()) else {
            // No work of its own to keep: it just waits again.
            *self.record(index) = record.fresh();
            return self.save();
        };
        let repo = Repository::at(self.project.root());
        let path = self.project.root().join(&tree);
        let root = project_in(&repo, &path);
        if let Some(drivers) = &self.parallel.drivers {
            drivers.release(&root);
        }
        if self.config.auto_commit && path.exists() {
            self.commit_leftovers(&root, &id, reason);
        }
        repo.drop_worktree(&path)
            .map_err(|e| self.git_error(index, e))?;
        if let Some(parent) = path.parent() {
            let _ = std::fs::remove_dir(parent);
        }
        let mut kept = self.state.context.iteration(&id).max(1);
        while repo.has_branch(&format!("{branch}@{kept}")) {
            kept += 1;
        }
        let kept = format!("{branch}@{kept}");
        repo.rename_branch(&branch, &kept)
            .map_err(|e| self.git_error(index, e))?;
        let commit = repo.resolve(&kept).unwrap_or_default();
        let commits = record
            .base_commit
            .as_deref()
            .and_then(|base| repo.commits_between(base, &kept).ok())
            .unwrap_or(0);
        let mut fresh = record.fresh();
        fresh.superseded.push(SupersededRun {
            branch: kept.clone(),
            commit,
            commits,
            reason: reason.to_owned(),
        });
        *self.record(index) = fresh;
        self.save()?;
        tracing::info!(phase = %id, branch = %kept, "superseded: {reason}");
        self.prompter.on_event(&WorkflowEvent::PhaseSuperseded {
            phase: id,
            branch: kept,
            reason: reason.to_owned(),
        });
        Ok(())
    }

    /// Commits what the stopped phase left uncommitted in its worktree at `root`, so nothing
    /// of it is lost with the worktree; a failure is logged (its commits are kept anyway).
    fn commit_leftovers(&self, root: &std::path::Path, id: &str, reason: &str) {
        let tree = Project::at(root);
        let message = format!("Work in progress of phase {id}, superseded ({reason})");
        let done = commit_identity(&tree, self.config.commit_as_context_pilot)
            .and_then(|identity| commit_all(&tree, &message, identity));
        if let Err(e) = done {
            tracing::warn!(phase = %id, "cannot commit its unfinished work: {e}");
        }
    }
}

impl PhaseRecord {
    /// The record of a phase that runs again from scratch: waiting, with its agent, its
    /// totals and its superseded runs kept.
    pub(super) fn fresh(&self) -> PhaseRecord {
        PhaseRecord {
            agent: self.agent.clone(),
            tokens: self.tokens,
            elapsed_ms: self.elapsed_ms,
            superseded: self.superseded.clone(),
            ..PhaseRecord::default()
        }
    }
}
