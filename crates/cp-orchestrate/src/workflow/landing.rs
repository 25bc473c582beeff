//! Landing a merge: the run's branch moves forward to a green candidate's commit, with its
//! proof saved first (for a resume) and then kept on the commit as a git note; a phase with
//! nothing to merge is counted merged; a branch that only takes tested merges is established.

use cp_git::Repository;

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::PhaseStatus;
use super::proof::{BranchVerdict, MergeProof};
use super::queue::run_branch;

impl Engine<'_> {
    /// Lands a green candidate: its proof is saved first (so a resume knows), then the run's
    /// branch moves forward to the candidate's commit, the proof goes onto it as a git note,
    /// and the phase is merged.
    pub(super) fn land(
        &mut self,
        repo: &Repository,
        index: usize,
        proof: MergeProof,
    ) -> Result<(), WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        self.record(index).proof = Some(proof.clone());
        self.save()?;
        repo.fast_forward(&proof.commit)
            .map_err(|e| self.git_error(index, e))?;
        let target = run_branch(repo);
        self.establish(
            target,
            &proof,
            format!(
                "the merge of phase {id} was tested on this tree before it landed: {}",
                proof.test.summary()
            ),
        );
        let record = self.record(index);
        record.sent_back = None;
        let branch = record.branch.clone().unwrap_or_default();
        if self.parallel.keep_worktrees
            && let Some(tree) = self.record(index).worktree.clone()
        {
            // Kept: back on its branch, as the person will find it.
            let _ = Repository::at(self.project.root().join(tree)).checkout(&branch);
        }
        tracing::info!(phase = %id, commit = %proof.commit, "landed");
        self.record_merged(index, Some(proof.commit))?;
        self.queue.landed.push(index);
        Ok(())
    }

    /// Writes the git note of phase `index`'s landed merge from its proof; `if_missing`: only
    /// when the commit has none (a resume after a run killed before it wrote it).
    pub(super) fn note_landed(&self, repo: &Repository, index: usize, if_missing: bool) {
        let id = &self.workflow.phases[index].id;
        let Some(record) = self.state.phase_runs.get(id) else {
            return;
        };
        // A phase of its own branch; one that worked in the project's tree has its note.
        let (PhaseStatus::Merged, Some(proof), Some(_)) =
            (record.status, &record.proof, &record.branch)
        else {
            return;
        };
        if record.merge_commit.as_ref() != Some(&proof.commit)
            || (if_missing && repo.note(&proof.commit).ok().flatten().is_some())
        {
            return;
        }
        let target = self
            .state
            .verdict
            .as_ref()
            .map_or_else(|| run_branch(repo), |v| v.branch.clone());
        self.note(
            repo,
            &proof.commit,
            &proof.note_text(&format!(
                "merge of phase {id} of workflow run {}, tested before it landed on {target}",
                self.state.run_id
            )),
        );
    }

    /// The phase's branch has nothing the run's branch lacks: merged already (a run killed
    /// after its branch moved and before it said so), or no work.
    pub(super) fn nothing_to_merge(
        &mut self,
        repo: &Repository,
        index: usize,
    ) -> Result<(), WorkflowError> {
        let landed = self
            .record(index)
            .proof
            .as_ref()
            .map(|p| p.commit.clone())
            .filter(|commit| repo.is_ancestor(commit, "HEAD"));
        let commit = landed.or_else(|| {
            repo.merge_commit_named(&self.merge_message(index))
                .ok()
                .flatten()
        });
        self.merged(repo, index, commit)?;
        // A run killed between the branch's move and the record's save also never wrote the
        // merge's note (notes are written once the queue is idle): its proof goes on it now.
        self.note_landed(repo, index, true);
        Ok(())
    }

    /// The run's branch, named `branch`, is now at `proof`'s commit: its verdict is what that
    /// test found, established as `how` says.
    pub(super) fn establish(&mut self, branch: String, proof: &MergeProof, how: String) {
        self.state.verdict = Some(BranchVerdict {
            branch,
            commit: proof.commit.clone(),
            tree: proof.tree.clone(),
            outcome: proof.outcome,
            how,
        });
    }

    /// Writes `text` as the git note of `commit` (a failure is logged: the proof is in
    /// `context.json` too).
    pub(super) fn note(&self, repo: &Repository, commit: &str, text: &str) {
        let identity = self
            .config
            .commit_as_context_pilot
            .then_some(("Context Pilot", "context-pilot@localhost"));
        // Git's own identity first; Context Pilot's only where git has none and config allows.
        let mut done = repo.add_note(commit, text, None);
        if done.is_err() && identity.is_some() {
            done = repo.add_note(commit, text, identity);
        }
        if let Err(e) = done {
            tracing::warn!(commit, "cannot write the merge's proof as a git note: {e}");
        }
    }
}
