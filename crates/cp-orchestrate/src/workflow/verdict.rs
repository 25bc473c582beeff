//! Tests of the project's own tree, where the run's branch is checked out: after a phase
//! that worked there alone (before anything depends on it; a red tree goes back to it), after
//! an agent resolved a conflict there, and at the run's end, whose last word says once
//! whether the branch is green and how that was established. A run never ends completed on
//! a red branch.

use std::time::Instant;

use cp_git::Repository;

use super::engine::Engine;
use super::error::WorkflowError;
use super::prompter::WorkflowEvent;
use super::proof::{BranchVerdict, MergeProof, TreeVerdict};
use super::queue::{attempt_of, run_branch, untested};
use super::store::{RunStatus, now};
use super::tester::TreeUnderTest;
use super::waves::{EarlyEnd, millis};

/// What the test of a phase that worked in the project's tree decided.
pub(super) enum Verified {
    /// Its tree passed (or nothing could be tested): it is done.
    Done,
    /// Red, and sent back: it works again.
    Again,
    /// The person ended the run at the gate.
    Stop(RunStatus),
}

impl Engine<'_> {
    /// Tests the project's tree at its `HEAD`; `since` is the commit its changes count from.
    /// Returns the proof (attempt 1, not ahead) or `None` outside a repository.
    fn test_project(&self, repo: &Repository, since: Option<&str>) -> Option<MergeProof> {
        let head = repo.head().ok()?;
        let tree = repo.tree_of(&head).ok()?;
        let changed = since
            .and_then(|since| repo.changed_between(since, &head).ok())
            .unwrap_or_default();
        let started = Instant::now();
        let test = match &self.parallel.tester {
            Some(tester) => tester
                .test_tree(&TreeUnderTest {
                    root: self.project.root(),
                    commit: &head,
                    changed: &changed,
                    cancel: &cp_base::CancelToken::new(),
                })
                .believed(&tree),
            None => untested(),
        };
        Some(MergeProof {
            commit: head,
            tree,
            base: since.unwrap_or_default().to_owned(),
            attempt: 1,
            ahead: false,
            outcome: TreeVerdict::of(&test),
            test,
            tested_at: now(),
            elapsed_ms: millis(started.elapsed()),
        })
    }

    /// After phase `index` worked alone in the project's tree from `base`: when it committed
    /// anything, the tree is tested before anything depends on it. Red goes back to the phase
    /// while tries are left, then to the person (send it back again, or abort).
    pub(super) fn verify_alone(
        &mut self,
        repo: &Repository,
        index: usize,
        base: Option<&str>,
    ) -> Result<Verified, WorkflowError> {
        if self.parallel.tester.is_none() || repo.head().ok().as_deref() == base {
            return Ok(Verified::Done);
        }
        let id = self.workflow.phases[index].id.clone();
        let Some(mut proof) = self.test_project(repo, base) else {
            return Ok(Verified::Done);
        };
        proof.attempt = attempt_of(self.record(index));
        let target = run_branch(repo);
        self.note(
            repo,
            &proof.commit,
            &proof.note_text(&format!(
                "{target} after phase {id} of workflow run {}, which worked in the project's \
                 tree, tested before anything depending on it started",
                self.state.run_id
            )),
        );
        let event = WorkflowEvent::MergeTested {
            phase: id.clone(),
            combined: false,
            outcome: proof.outcome,
            summary: proof.test.summary(),
            elapsed_ms: proof.elapsed_ms,
        };
        self.prompter.on_event(&event);
        if proof.outcome == TreeVerdict::Failed {
            return Ok(match self.red(repo, index, proof)? {
                Some(status) => Verified::Stop(status),
                None => Verified::Again,
            });
        }
        self.establish(
            target,
            &proof,
            format!(
                "the tree phase {id} left was tested after it: {}",
                proof.test.summary()
            ),
        );
        let record = self.record(index);
        record.proof = Some(proof);
        record.sent_back = None;
        self.save()?;
        Ok(Verified::Done)
    }

    /// After an agent resolved phase `index`'s conflict in the project's tree (from
    /// `before`): its merge is tested; red stops the run (`--resume` tests it again).
    pub(super) fn verify_resolved(
        &mut self,
        repo: &Repository,
        index: usize,
        before: Option<&str>,
    ) -> Result<EarlyEnd, WorkflowError> {
        if self.parallel.tester.is_none() {
            return Ok(None);
        }
        let id = self.workflow.phases[index].id.clone();
        let Some(proof) = self.test_project(repo, before) else {
            return Ok(None);
        };
        let target = run_branch(repo);
        self.note(
            repo,
            &proof.commit,
            &proof.note_text(&format!(
                "merge of phase {id} of workflow run {}, its conflicts resolved by an agent in \
                 the project's tree, tested after",
                self.state.run_id
            )),
        );
        self.establish(
            target.clone(),
            &proof,
            format!(
                "the merge of phase {id}, its conflicts resolved, was tested after: {}",
                proof.test.summary()
            ),
        );
        let red = proof.outcome == TreeVerdict::Failed;
        let failing = proof.test.failing();
        self.record(index).proof = Some(proof);
        if red {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(format!(
                "the tests fail on {target} after the conflicts of phase {id} were resolved: {}; \
                 fix it on {target} and --resume {}",
                failing.join(", "),
                self.state.run_id
            ));
        }
        self.save()?;
        Ok(red.then_some(RunStatus::Failed))
    }

    /// The run's last word on its branch. A verdict already established for the tree the
    /// branch holds is repeated; otherwise, when `test` (the run completed) and the run
    /// committed anything, the tree is tested now. Said once, as an event; a red branch
    /// turns a completed run into a failed one. `None` outside a repository, or when
    /// nothing can be said without a test that is not due.
    pub(super) fn conclude(&mut self, test: bool) -> Result<Option<BranchVerdict>, WorkflowError> {
        let repo = Repository::at(self.project.root());
        let (Ok(head), Ok(tree)) = (repo.head(), repo.tree_of("HEAD")) else {
            return Ok(None);
        };
        let branch = run_branch(&repo);
        let known = self.state.verdict.clone().filter(|v| v.tree == tree);
        let verdict = if let Some(known) = known {
            BranchVerdict {
                branch,
                commit: head,
                ..known
            }
        } else if self.state.started_from.as_deref() == Some(head.as_str()) {
            BranchVerdict {
                branch,
                commit: head,
                tree,
                outcome: TreeVerdict::NotTested,
                how: "the run committed nothing; the branch is as it was".into(),
            }
        } else if !test {
            return Ok(None);
        } else {
            let since = self.state.started_from.clone();
            let Some(proof) = self.test_project(&repo, since.as_deref()) else {
                return Ok(None);
            };
            if self.parallel.tester.is_some() {
                self.note(
                    &repo,
                    &proof.commit,
                    &proof.note_text(&format!(
                        "{branch} at the end of workflow run {}, tested then",
                        self.state.run_id
                    )),
                );
            }
            let how = match proof.outcome {
                TreeVerdict::Failed => format!(
                    "its tree was tested at the run's end and fails: {} ({})",
                    proof.test.failing().join(", "),
                    proof.test.summary()
                ),
                _ => format!(
                    "its tree was tested at the run's end: {}",
                    proof.test.summary()
                ),
            };
            BranchVerdict {
                branch,
                commit: proof.commit,
                tree: proof.tree,
                outcome: proof.outcome,
                how,
            }
        };
        self.state.verdict = Some(verdict.clone());
        if test && verdict.outcome == TreeVerdict::Failed {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(format!(
                "{verdict}; fix it on {} and --resume {}",
                verdict.branch, self.state.run_id
            ));
        }
        self.save()?;
        let event = WorkflowEvent::BranchVerdict {
            verdict: verdict.clone(),
            cost: self.state.merge_queue,
        };
        tracing::info!("{event}");
        self.prompter.on_event(&event);
        Ok(Some(verdict))
    }
}
