//! The merge queue: a finished phase's branch reaches the run's branch only through a test of
//! the combined tree. For each queued phase (in the file's order) a candidate is made in the
//! phase's own worktree, on a detached `HEAD`: the run's branch (or the candidate queued
//! before it) with the phase's branch merged in, the merge commit that would land. Its tree
//! is tested as the stop gate would test it ([`TreeTester`](super::TreeTester)); a green
//! candidate lands by moving the run's branch forward to that very commit, so the branch
//! only ever holds tested merges. A red one goes back to its phase (`sent_back.rs`), and the
//! candidates built on it are thrown away and made again without it.
//!
//! Candidates behind the head are tested at once, ahead of their turn, up to
//! `speculative_merges` (as Zuul does): when the head lands, the next one's result is often
//! in already. What that costs is counted in the run's `merge_queue` record.

use std::sync::mpsc::Sender;
use std::thread::Scope;
use std::time::{Duration, Instant};

use cp_base::CancelToken;
use cp_git::{MergeOutcome, Repository};

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::PhaseStatus;
use super::phase_tree::project_in;
use super::prompter::WorkflowEvent;
use super::proof::{MergeProof, TreeVerdict};
use super::queue_state::{Built, Candidate};
use super::side_by_side::Report;
use super::store::now;
use super::tester::{CommandRun, TreeTest, TreeUnderTest};
use super::waves::{EarlyEnd, millis};

impl Engine<'_> {
    /// Moves the queue on: lands the head while it is green, sends a red head back (or asks
    /// the person after its last try), then makes and starts testing candidates for the
    /// phases queued behind, up to `speculative_merges` at once. Merges land in the file's
    /// order: a phase still at work holds back the merges of the phases listed below it.
    /// What landed gets its git note and loses its worktree once no test is in flight, so
    /// that work never holds up a test's result.
    pub(super) fn advance_queue<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope Scope<'scope, '_>,
        tx: &Sender<Report>,
    ) -> Result<EarlyEnd, WorkflowError> {
        let moved = self.move_queue(repo, scope, tx);
        let tidied = if self.queue.in_flight() == 0 {
            self.tidy_landed(repo)
        } else {
            Ok(())
        };
        let stop = moved?;
        tidied.map(|()| stop)
    }

    /// The landed merges' notes, and their worktrees and branches removed.
    pub(super) fn tidy_landed(&mut self, repo: &Repository) -> Result<(), WorkflowError> {
        let landed = std::mem::take(&mut self.queue.landed);
        let started = Instant::now();
        for &index in &landed {
            self.note_landed(repo, index, false);
        }
        if !landed.is_empty() {
            tracing::debug!(
                notes = landed.len(),
                elapsed_ms = started.elapsed().as_millis(),
                "landed merges' notes written"
            );
        }
        self.tidy_all_merged(repo, &landed)
    }

    fn move_queue<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope Scope<'scope, '_>,
        tx: &Sender<Report>,
    ) -> Result<EarlyEnd, WorkflowError> {
        while let Some(head) = self.queue.candidates.first() {
            if head.result.is_none() {
                break;
            }
            let tip = repo.head().map_err(|e| self.git_error(head.index, e))?;
            if head.base != tip {
                // Someone moved the run's branch under the queue: every candidate is stale.
                tracing::warn!(run = %self.state.run_id, "the run's branch moved under the merge queue; its candidates are made again");
                self.requeue();
                continue;
            }
            let head = self.queue.candidates.remove(0);
            let Some((test, elapsed)) = head.result else {
                continue;
            };
            let proof = MergeProof {
                commit: head.commit,
                tree: head.tree,
                base: head.base,
                attempt: attempt_of(self.record(head.index)),
                ahead: head.ahead,
                outcome: TreeVerdict::of(&test),
                test,
                tested_at: now(),
                elapsed_ms: millis(elapsed),
            };
            if proof.outcome != TreeVerdict::Failed {
                self.land(repo, head.index, proof)?;
                continue;
            }
            // Everything built on a red candidate holds it: thrown away, made again.
            self.requeue();
            if let Some(stop) = self.red(repo, head.index, proof)? {
                return Ok(Some(stop));
            }
        }
        self.fill_queue(repo, scope, tx)
    }

    /// A test's result is in: its candidate keeps it (or, thrown away, it is only counted).
    pub(super) fn tested(&mut self, id: u64, test: TreeTest, elapsed: Duration) {
        let ms = millis(elapsed);
        self.state.merge_queue.test_ms = self.state.merge_queue.test_ms.saturating_add(ms);
        let index = self
            .queue
            .candidates
            .iter()
            .map(|c| (c.id, c.index))
            .chain(self.queue.draining.iter().copied())
            .find_map(|(c, index)| (c == id).then_some(index));
        if let Some(index) = index
            && TreeVerdict::of(&test) != TreeVerdict::Failed
            && self.parallel.drivers.is_some()
        {
            // Its thread now ends what the test left running in the worktree (start_test).
            self.queue.releasing.push(index);
        }
        if let Some(at) = self.queue.draining.iter().position(|(d, _)| *d == id) {
            self.queue.draining.remove(at);
            let cost = &mut self.state.merge_queue;
            cost.discarded_ms = cost.discarded_ms.saturating_add(ms);
            return;
        }
        let Some(candidate) = self.queue.candidates.iter_mut().find(|c| c.id == id) else {
            return;
        };
        // A test elsewhere counts only for the tree it says it checked out.
        let test = test.believed(&candidate.tree);
        let index = candidate.index;
        self.state.merge_queue.tested = self.state.merge_queue.tested.saturating_add(1);
        let event = WorkflowEvent::MergeTested {
            phase: self.workflow.phases[index].id.clone(),
            combined: true,
            outcome: TreeVerdict::of(&test),
            summary: test.summary(),
            elapsed_ms: ms,
        };
        candidate.result = Some((test, elapsed));
        tracing::info!("{event}");
        self.prompter.on_event(&event);
    }

    /// Phase `index`'s work is set aside (its input changed): a candidate holding it must
    /// never land, so every candidate goes and is made again without it.
    pub(super) fn unqueue(&mut self, index: usize) {
        if self.queue.candidates.iter().any(|c| c.index == index) {
            self.requeue();
        }
    }

    /// Stops every test of the queue (Ctrl-C, an abort, an error): nothing more lands.
    pub(super) fn stop_queue(&mut self) {
        self.queue.clear();
    }

    /// Throws away every candidate (their trees hold a red one, or a stale base); their
    /// phases are queued again.
    fn requeue(&mut self) {
        let had: Vec<(bool, Option<Duration>)> = self
            .queue
            .candidates
            .iter()
            .map(|c| (c.ahead, c.result.as_ref().map(|(_, d)| *d)))
            .collect();
        let dropped = self.queue.clear();
        let cost = &mut self.state.merge_queue;
        for (_, elapsed) in &had {
            cost.discarded = cost.discarded.saturating_add(1);
            if let Some(elapsed) = elapsed {
                cost.discarded_ms = cost.discarded_ms.saturating_add(millis(*elapsed));
            }
        }
        if !dropped.is_empty() {
            let phases = dropped
                .iter()
                .map(|&i| self.workflow.phases[i].id.clone())
                .collect();
            self.prompter
                .on_event(&WorkflowEvent::MergesRequeued { phases });
        }
    }

    /// Makes candidates for the queued phases, in the file's order, and starts their tests.
    fn fill_queue<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope Scope<'scope, '_>,
        tx: &Sender<Report>,
    ) -> Result<EarlyEnd, WorkflowError> {
        let depth = self.parallel.speculate.max(1);
        for index in 0..self.workflow.phases.len() {
            if self.queue.candidates.len() >= depth {
                break;
            }
            if self.queue.candidates.iter().any(|c| c.index == index) {
                continue;
            }
            let first = self.queue.candidates.is_empty();
            match self.record(index).status {
                PhaseStatus::Running | PhaseStatus::Interrupted => return Ok(None),
                // A conflict or a red merge waits for the person, once it is its turn.
                PhaseStatus::Conflict | PhaseStatus::Red if !first => return Ok(None),
                PhaseStatus::Red => {
                    if let Some(stop) = self.red_gate(repo, index)? {
                        return Ok(Some(stop));
                    }
                    if self.record(index).status == PhaseStatus::Running {
                        // Sent back again: it holds back the phases below it.
                        return Ok(None);
                    }
                    continue;
                }
                PhaseStatus::Finished | PhaseStatus::Conflict => {}
                _ => continue,
            }
            if self.queue.busy_in(index) {
                // Its worktree still hosts a test being stopped, or what a test left running.
                return Ok(None);
            }
            let base = match self.queue.candidates.last() {
                Some(before) => before.commit.clone(),
                None => repo.head().map_err(|e| self.git_error(index, e))?,
            };
            match self.build(repo, index, &base)? {
                Built::Candidate(candidate, changed) => {
                    self.start_test(repo, scope, tx, &candidate, changed)?;
                    self.queue.candidates.push(*candidate);
                }
                // Only at the head is the base the run's branch itself.
                Built::Nothing | Built::Conflict(_) if !first => return Ok(None),
                Built::Nothing => self.nothing_to_merge(repo, index)?,
                Built::Conflict(files) => {
                    if let Some(stop) = self.conflict(repo, index, &files)? {
                        return Ok(Some(stop));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Makes phase `index`'s candidate on `base` in its worktree, on a detached `HEAD`.
    fn build(
        &mut self,
        repo: &Repository,
        index: usize,
        base: &str,
    ) -> Result<Built, WorkflowError> {
        let record = self.record(index).clone();
        let branch = record.branch.clone().unwrap_or_default();
        let Some(tree) = record.worktree.clone() else {
            return Err(self.agent_error(index, "its work has no worktree to merge from"));
        };
        let path = self.project.root().join(&tree);
        if !path.join(".git").exists() {
            // Removed by hand while it waited: its branch holds the work.
            repo.checkout_worktree(&path, &branch)
                .map_err(|e| self.git_error(index, e))?;
        }
        let place = Repository::at(&path);
        place
            .checkout_detached(base)
            .map_err(|e| self.git_error(index, e))?;
        let message = self.merge_message(index);
        let outcome = place
            .merge(&branch, &message)
            .map_err(|e| self.git_error(index, e))?;
        match outcome {
            MergeOutcome::Merged { commit } => {
                let tree = repo
                    .tree_of(&commit)
                    .map_err(|e| self.git_error(index, e))?;
                // Both sides since they parted: the files whose projects a monorepo tests.
                let parted = repo
                    .merge_base(base, &branch)
                    .map_err(|e| self.git_error(index, e))?;
                let changed = repo.changed_between(&parted, &commit).unwrap_or_default();
                let ahead = !self.queue.candidates.is_empty();
                self.queue.next_id += 1;
                Ok(Built::Candidate(
                    Box::new(Candidate {
                        id: self.queue.next_id,
                        index,
                        base: base.to_owned(),
                        commit,
                        tree,
                        ahead,
                        cancel: CancelToken::new(),
                        result: None,
                    }),
                    changed,
                ))
            }
            MergeOutcome::UpToDate => {
                place
                    .checkout(&branch)
                    .map_err(|e| self.git_error(index, e))?;
                Ok(Built::Nothing)
            }
            MergeOutcome::Conflict { files } => {
                place
                    .checkout(&branch)
                    .map_err(|e| self.git_error(index, e))?;
                Ok(Built::Conflict(files))
            }
        }
    }

    /// The merge commit's message: `Merge phase <id> of workflow run <run> (<branch>)`.
    pub(super) fn merge_message(&self, index: usize) -> String {
        let id = &self.workflow.phases[index].id;
        let branch = self.state.phase_runs.get(id).and_then(|r| r.branch.clone());
        format!(
            "Merge phase {id} of workflow run {} ({})",
            self.state.run_id,
            branch.unwrap_or_default()
        )
    }

    /// Starts testing `candidate` on a thread of its own, which reports on `tx`.
    fn start_test<'scope>(
        &mut self,
        repo: &Repository,
        scope: &'scope Scope<'scope, '_>,
        tx: &Sender<Report>,
        candidate: &Candidate,
        changed: Vec<String>,
    ) -> Result<(), WorkflowError> {
        let index = candidate.index;
        let id = self.workflow.phases[index].id.clone();
        let ahead_of: Vec<String> = self
            .queue
            .candidates
            .iter()
            .map(|c| self.workflow.phases[c.index].id.clone())
            .collect();
        if candidate.ahead {
            self.state.merge_queue.ahead = self.state.merge_queue.ahead.saturating_add(1);
        }
        let event = WorkflowEvent::MergeTesting {
            phase: id.clone(),
            ahead_of,
        };
        tracing::info!("{event}");
        self.prompter.on_event(&event);
        let tree = self.record(index).worktree.clone().unwrap_or_default();
        let root = project_in(repo, &self.project.root().join(tree));
        let tester = self.parallel.tester.clone();
        let drivers = self.parallel.drivers.clone();
        let cancel = candidate.cancel.clone();
        let commit = candidate.commit.clone();
        let report = candidate.id;
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("cp-merge-{id}"))
            .spawn_scoped(scope, move || {
                let started = Instant::now();
                let test = match tester {
                    Some(tester) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        tester.test_tree(&TreeUnderTest {
                            root: &root,
                            commit: &commit,
                            changed: &changed,
                            cancel: &cancel,
                        })
                    }))
                    .unwrap_or_else(|_| TreeTest {
                        runs: vec![CommandRun {
                            command: "(the tree tester)".into(),
                            exit: "panicked; the log has the cause".into(),
                            ..CommandRun::default()
                        }],
                        note: None,
                        host: None,
                    }),
                    None => untested(),
                };
                let green = TreeVerdict::of(&test) != TreeVerdict::Failed;
                let _ = tx.send(Report::Tested {
                    id: report,
                    test,
                    elapsed: started.elapsed(),
                });
                // A green tree lands (or is made again): what its test left running in the
                // worktree (its console server) is ended now, after the result went out and
                // beside the other tests, rather than at the end of the run. A red one's
                // phase works there again.
                if green && let Some(drivers) = drivers {
                    drivers.release(&root);
                    let _ = tx.send(Report::Released { index });
                }
            })
            .map_err(|e| self.agent_error(index, &format!("cannot start its merge test: {e}")))?;
        Ok(())
    }

    pub(super) fn agent_error(&self, index: usize, message: &str) -> WorkflowError {
        WorkflowError::Agent {
            run_id: self.state.run_id.clone(),
            phase: self.workflow.phases[index].id.clone(),
            message: message.to_owned(),
        }
    }
}

/// The run's branch, named for the person (`HEAD` when detached).
pub(super) fn run_branch(repo: &Repository) -> String {
    repo.current_branch()
        .ok()
        .flatten()
        .unwrap_or_else(|| "HEAD".into())
}

/// The try phase `record`'s next test is: one more than its red ones.
pub(super) fn attempt_of(record: &super::phase_record::PhaseRecord) -> u32 {
    u32::try_from(record.red_merges.len())
        .unwrap_or(u32::MAX)
        .saturating_add(1)
}

/// The report of a run whose front-end tests nothing.
pub(super) fn untested() -> TreeTest {
    TreeTest {
        runs: Vec::new(),
        note: Some("this front-end runs no tests on merges".into()),
        host: None,
    }
}
