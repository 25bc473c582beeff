//! Bringing a wave's work home once the merge queue (`queue.rs`) lands it: the phase is
//! recorded as merged, its worktree and branch removed; a merge that conflicts is aborted and
//! put to the person, who may let an agent resolve it in the project's tree (whose result is
//! tested before anything depends on it).

use std::path::Path;

use cp_git::Repository;

use super::engine::Engine;
use super::error::{MergeConflict, WorkflowError};
use super::phase_record::PhaseStatus;
use super::phase_tree::project_in;
use super::prompter::{ApprovalRequest, Choice, WorkflowEvent};
use super::schema::Action;
use super::store::RunStatus;
use super::waves::EarlyEnd;
use crate::restart::RestartEvent;

impl Engine<'_> {
    /// Records phase `index` as merged (by `commit`, `None` when its branch had nothing new)
    /// and removes its worktree and branch unless `--keep-worktrees`.
    pub(super) fn merged(
        &mut self,
        repo: &Repository,
        index: usize,
        commit: Option<String>,
    ) -> Result<(), WorkflowError> {
        self.record_merged(index, commit)?;
        self.tidy_merged(repo, index)
    }

    /// Records phase `index` as merged (by `commit`) and says so; its worktree stays until
    /// [`tidy_merged`](Self::tidy_merged).
    pub(super) fn record_merged(
        &mut self,
        index: usize,
        commit: Option<String>,
    ) -> Result<(), WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let record = self.record(index);
        record.status = PhaseStatus::Merged;
        record.merge_commit.clone_from(&commit);
        record.error = None;
        let branch = record.branch.clone().unwrap_or_default();
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::Merged {
            phase: id,
            branch,
            commit,
        });
        Ok(())
    }

    /// Removes merged phase `index`'s worktree and branch, unless `--keep-worktrees`.
    pub(super) fn tidy_merged(
        &mut self,
        repo: &Repository,
        index: usize,
    ) -> Result<(), WorkflowError> {
        self.tidy_all_merged(repo, &[index])
    }

    /// Removes the worktrees and branches of the merged phases `indices`, unless
    /// `--keep-worktrees`: what their hosts left running (their console servers) is ended
    /// for all of them at once, each waiting for its own to go, then git removes them one
    /// after the other (git's locks do not take them at once).
    pub(super) fn tidy_all_merged(
        &mut self,
        repo: &Repository,
        indices: &[usize],
    ) -> Result<(), WorkflowError> {
        if self.parallel.keep_worktrees {
            return Ok(());
        }
        let mut trees = Vec::new();
        for &index in indices {
            let record = self.record(index).clone();
            if let (Some(tree), Some(branch)) = (record.worktree, record.branch) {
                trees.push((index, tree, branch));
            }
        }
        if trees.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        if let Some(drivers) = &self.parallel.drivers {
            let roots: Vec<std::path::PathBuf> = trees
                .iter()
                .map(|(_, tree, _)| project_in(repo, &self.project.root().join(tree)))
                .collect();
            std::thread::scope(|scope| {
                for root in &roots {
                    scope.spawn(|| drivers.release(root));
                }
            });
        }
        let released = started.elapsed();
        let paths: Vec<(std::path::PathBuf, String)> = trees
            .into_iter()
            .map(|(_, tree, branch)| (self.project.root().join(tree), branch))
            .collect();
        let listed: Vec<(&Path, &str)> = paths
            .iter()
            .map(|(path, branch)| (path.as_path(), branch.as_str()))
            .collect();
        if let Err(e) = repo.remove_worktrees(&listed) {
            return Err(self.git_error(indices.first().copied().unwrap_or(0), e));
        }
        tracing::debug!(
            trees = listed.len(),
            released_ms = released.as_millis(),
            removed_ms = started.elapsed().saturating_sub(released).as_millis(),
            "merged phases' worktrees removed"
        );
        // The run's directory of worktrees goes once its last phase is merged.
        if let Some(parent) = paths.first().and_then(|(path, _)| path.parent()) {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(())
    }

    /// On a resume: a merge that landed without its git note (a run killed just after) gets
    /// it, and the worktrees and branches of phases already merged that are still there go
    /// now. A run killed between saving a merge and removing them (the merge commit is on
    /// the run's branch, the record says merged) would otherwise leave them for good.
    pub(super) fn clear_merged(&mut self, repo: &Repository) -> Result<(), WorkflowError> {
        for index in 0..self.workflow.phases.len() {
            self.note_landed(repo, index, true);
        }
        if self.parallel.keep_worktrees {
            return Ok(());
        }
        let mut left = Vec::new();
        for index in 0..self.workflow.phases.len() {
            let record = self.record(index).clone();
            let (PhaseStatus::Merged, Some(tree), Some(branch)) =
                (record.status, record.worktree, record.branch)
            else {
                continue;
            };
            if self.project.root().join(&tree).exists() || repo.has_branch(&branch) {
                tracing::info!(phase = %self.workflow.phases[index].id, "removing the worktree and branch a killed run left after the merge");
                left.push(index);
            }
        }
        self.tidy_all_merged(repo, &left)
    }

    /// A merge that conflicted (already aborted): the person chooses between an agent that
    /// resolves it in the project's tree and abort. No answer stops the run with exit code 3.
    pub(super) fn conflict(
        &mut self,
        repo: &Repository,
        index: usize,
        files: &[String],
    ) -> Result<EarlyEnd, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let branch = self.record(index).branch.clone().unwrap_or_default();
        let other = self.conflicting_phase(repo, index, files);
        let record = self.record(index);
        record.status = PhaseStatus::Conflict;
        record.error = Some(format!("conflicts with {other} in {}", files.join(", ")));
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::MergeConflict {
            phase: id.clone(),
            other: other.clone(),
            files: files.to_vec(),
        });
        let request = ApprovalRequest {
            worktree: None,
            base_commit: None,
            run_id: self.state.run_id.clone(),
            phase_id: id.clone(),
            iteration: self.state.context.iteration(&id),
            approval: true,
            prompt: format!(
                "Merging phase '{id}' ({branch}) conflicts with {other} in {}. The merge was \
                 aborted; the tree is as it was.",
                files.join(", ")
            ),
            files: files.to_vec(),
            choices: vec![
                Choice {
                    label: "An agent resolves it".into(),
                    with_feedback: false,
                    action: Action::Continue,
                },
                Choice {
                    label: "Abort".into(),
                    with_feedback: false,
                    action: Action::Abort,
                },
            ],
        };
        let unanswered = || {
            WorkflowError::MergeConflict(Box::new(MergeConflict {
                run_id: self.state.run_id.clone(),
                phase: id.clone(),
                branch: branch.clone(),
                other: other.clone(),
                files: files.to_vec(),
            }))
        };
        self.alert(
            "conflict",
            &id,
            &format!(
                "merging phase '{id}' conflicts with {other} in {}",
                files.join(", ")
            ),
        );
        let Ok(answer) = self.prompter.ask(&request) else {
            return Err(unanswered());
        };
        if request.choices.get(answer.choice).map(|c| c.action) != Some(Action::Continue) {
            self.state.status = RunStatus::Aborted;
            self.save()?;
            return Ok(Some(RunStatus::Aborted));
        }
        self.resolve(repo, index, &branch, &other, files)
    }

    /// The resolve phase: the run's agent, in the project's tree, merges the branch itself.
    fn resolve(
        &mut self,
        repo: &Repository,
        index: usize,
        branch: &str,
        other: &str,
        files: &[String],
    ) -> Result<EarlyEnd, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let resolve_id = format!("resolve-{id}");
        let prompt = format!(
            "Merging branch {branch} (workflow phase '{id}') into the current branch conflicts \
             with {other} in: {}.\n\nRun `git merge --no-ff {branch}`, resolve every conflict \
             so that both sides' intent is kept, run the tests, and commit the merge with the \
             message \"Merge phase {id} (conflicts resolved)\".",
            files.join(", ")
        );
        self.prompter.on_event(&WorkflowEvent::PhaseStarted {
            phase: resolve_id.clone(),
            iteration: 1,
        });
        let prompter = &mut *self.prompter;
        let mut forward = |event: &RestartEvent| {
            prompter.on_event(&WorkflowEvent::Restart(event.clone()));
        };
        let before = repo.head().ok();
        let result = self
            .restart
            .run_phase(&resolve_id, &prompt, &mut *self.driver, &mut forward);
        if let Err(source) = result {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(source.to_string());
            self.save()?;
            return Err(WorkflowError::Phase {
                run_id: self.state.run_id.clone(),
                source,
            });
        }
        if repo.is_ancestor(branch, "HEAD") {
            let head = repo.head().ok();
            self.merged(repo, index, head)?;
            // What the agent merged is tested before anything depends on it.
            return self.verify_resolved(repo, index, before.as_deref());
        }
        Err(WorkflowError::MergeConflict(Box::new(MergeConflict {
            run_id: self.state.run_id.clone(),
            phase: id,
            branch: branch.to_owned(),
            other: format!("{other} (the resolve phase did not merge it)"),
            files: files.to_vec(),
        })))
    }

    /// The merged phase of this run whose merge brought one of `files`, named for the person;
    /// else the run's branch itself.
    fn conflicting_phase(&self, repo: &Repository, index: usize, files: &[String]) -> String {
        for (i, phase) in self.workflow.phases.iter().enumerate() {
            if i == index {
                continue;
            }
            let Some(commit) = self
                .state
                .phase_runs
                .get(&phase.id)
                .and_then(|r| r.merge_commit.as_deref())
            else {
                continue;
            };
            let brought = repo
                .changed_between(&format!("{commit}^1"), commit)
                .unwrap_or_default();
            if brought.iter().any(|f| files.contains(f)) {
                return format!("phase '{}'", phase.id);
            }
        }
        let branch = repo
            .current_branch()
            .ok()
            .flatten()
            .unwrap_or_else(|| "HEAD".into());
        format!("the run's branch {branch}")
    }
}
