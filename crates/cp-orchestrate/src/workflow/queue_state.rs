//! The merge queue's state: its candidates (combined trees, head first), the tests that are
//! stopping, and the worktrees still in use. How the queue moves is `queue.rs`.

use std::time::Duration;

use cp_base::CancelToken;

use super::tester::TreeTest;

/// The merge queue of a run: its candidates, head first.
#[derive(Default)]
pub(super) struct MergeQueue {
    pub(super) candidates: Vec<Candidate>,
    /// Candidates thrown away while their test still ran, by id with their phase: the phase's
    /// worktree is not used again until the test has stopped.
    pub(super) draining: Vec<(u64, usize)>,
    /// Phases landed whose note and worktree removal wait until no test is in flight.
    pub(super) landed: Vec<usize>,
    /// Phases whose green test's thread is still ending what the test left running in their
    /// worktree (its console server): the worktree is not used or removed until it is done.
    pub(super) releasing: Vec<usize>,
    pub(super) next_id: u64,
}

/// One combined tree: the run's branch (or the candidate before it) with a phase merged in.
pub(super) struct Candidate {
    pub(super) id: u64,
    /// The phase.
    pub(super) index: usize,
    /// The commit it was made on.
    pub(super) base: String,
    /// The merge commit that lands if it is green.
    pub(super) commit: String,
    /// Its tree.
    pub(super) tree: String,
    /// Made on a candidate that had not landed.
    pub(super) ahead: bool,
    /// Stops its test.
    pub(super) cancel: CancelToken,
    /// Its test's result, once in, with its time.
    pub(super) result: Option<(TreeTest, Duration)>,
}

/// What making a candidate for a phase gave.
pub(super) enum Built {
    /// A candidate, ready to test.
    Candidate(Box<Candidate>, Vec<String>),
    /// The phase's branch has nothing the base lacks.
    Nothing,
    /// The merge conflicts in these files (aborted; the worktree is back on its branch).
    Conflict(Vec<String>),
}

impl MergeQueue {
    /// Tests running (or stopping) now, and green ones still ending what they left running in
    /// their worktrees: the run waits for them before it ends.
    pub(super) fn in_flight(&self) -> usize {
        self.candidates
            .iter()
            .filter(|c| c.result.is_none())
            .count()
            + self.draining.len()
            + self.releasing.len()
    }

    /// Tests running (or stopping) now, not counting the ends of green ones (what they left
    /// running in their worktrees being stopped).
    pub(super) fn testing(&self) -> usize {
        self.in_flight() - self.releasing.len()
    }

    /// Whether phase `index`'s worktree still hosts a test, or what one left running.
    pub(super) fn busy_in(&self, index: usize) -> bool {
        self.releasing.contains(&index) || self.draining.iter().any(|(_, i)| *i == index)
    }

    /// Phase `index`'s worktree is free again (its green test's thread is done).
    pub(super) fn released(&mut self, index: usize) {
        if let Some(at) = self.releasing.iter().position(|&i| i == index) {
            self.releasing.remove(at);
        }
    }

    /// Stops every test and forgets every candidate (the run stops, or its branch moved).
    /// Returns the phases whose candidates were dropped.
    pub(super) fn clear(&mut self) -> Vec<usize> {
        let mut dropped = Vec::new();
        for candidate in self.candidates.drain(..) {
            dropped.push(candidate.index);
            if candidate.result.is_none() {
                candidate.cancel.cancel();
                self.draining.push((candidate.id, candidate.index));
            }
        }
        dropped
    }
}
