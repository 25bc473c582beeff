//! `one_at_a_time`: a run that finds one of its callback already going waits in a queue, and
//! triggers that arrive meanwhile coalesce into that single pending run.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use uuid::Uuid;

use crate::model::CallbackId;

/// A queued run: its id is fixed when it is first queued; later triggers add their files
/// and their waiters (`W`: whatever the caller needs to hear about the result).
#[derive(Debug)]
pub struct Pending<W> {
    pub run_id: Uuid,
    pub files: BTreeSet<String>,
    /// Labels of the edits that triggered it, for messages.
    pub triggers: BTreeSet<String>,
    pub waiters: Vec<W>,
}

/// What happened to a run that asked to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission<W> {
    /// Nothing of this callback runs: start now (the waiter comes back to the caller).
    Start(W),
    /// Queued behind `behind`, as pending run `run_id` (`merged`: joined an existing one).
    Queued {
        behind: Uuid,
        run_id: Uuid,
        merged: bool,
    },
}

struct State<W> {
    running: HashMap<CallbackId, Uuid>,
    pending: HashMap<CallbackId, Pending<W>>,
}

/// The runs in flight of `one_at_a_time` callbacks, shared with the threads running them.
pub struct RunQueue<W> {
    state: Mutex<State<W>>,
}

impl<W> Default for RunQueue<W> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                running: HashMap::new(),
                pending: HashMap::new(),
            }),
        }
    }
}

impl<W> std::fmt::Debug for RunQueue<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunQueue").finish_non_exhaustive()
    }
}

impl<W> RunQueue<W> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<W>> {
        // A panicked runner thread must not stop every later callback.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks to start run `run_id` of `callback`. When one is running, the files, trigger and
    /// waiter join the pending run (created with `run_id` if there is none).
    pub fn admit(
        &self,
        callback: CallbackId,
        run_id: Uuid,
        files: &[String],
        trigger: &str,
        waiter: W,
    ) -> Admission<W> {
        let mut state = self.lock();
        let Some(&behind) = state.running.get(&callback) else {
            state.running.insert(callback, run_id);
            return Admission::Start(waiter);
        };
        let merged = state.pending.contains_key(&callback);
        let pending = state.pending.entry(callback).or_insert_with(|| Pending {
            run_id,
            files: BTreeSet::new(),
            triggers: BTreeSet::new(),
            waiters: Vec::new(),
        });
        pending.files.extend(files.iter().cloned());
        pending.triggers.insert(trigger.to_owned());
        pending.waiters.push(waiter);
        Admission::Queued {
            behind,
            run_id: pending.run_id,
            merged,
        }
    }

    /// Marks the running run of `callback` finished. If a run is pending, it becomes the
    /// running one and is returned for the caller to start.
    pub fn finish(&self, callback: CallbackId) -> Option<Pending<W>> {
        let mut state = self.lock();
        if let Some(next) = state.pending.remove(&callback) {
            state.running.insert(callback, next.run_id);
            Some(next)
        } else {
            state.running.remove(&callback);
            None
        }
    }

    /// The run of `callback` in progress, if any.
    pub fn running(&self, callback: CallbackId) -> Option<Uuid> {
        self.lock().running.get(&callback).copied()
    }

    /// The pending run of `callback`, if any: its id, files and triggers.
    pub fn pending(
        &self,
        callback: CallbackId,
    ) -> Option<(Uuid, BTreeSet<String>, BTreeSet<String>)> {
        self.lock()
            .pending
            .get(&callback)
            .map(|p| (p.run_id, p.files.clone(), p.triggers.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_run_queues_and_later_ones_coalesce() {
        let q: RunQueue<u8> = RunQueue::default();
        let cb = CallbackId(1);
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        assert_eq!(q.admit(cb, a, &["x".into()], "e1", 1), Admission::Start(1));
        assert_eq!(
            q.admit(cb, b, &["y".into()], "e2", 2),
            Admission::Queued {
                behind: a,
                run_id: b,
                merged: false
            }
        );
        assert_eq!(
            q.admit(cb, c, &["z".into(), "y".into()], "e3", 3),
            Admission::Queued {
                behind: a,
                run_id: b,
                merged: true
            }
        );
        // Another callback is independent.
        assert_eq!(q.admit(CallbackId(2), c, &[], "e", 4), Admission::Start(4));
        let (pending, files, triggers) = q.pending(cb).unwrap();
        assert_eq!(pending, b);
        assert_eq!(files.into_iter().collect::<Vec<_>>(), vec!["y", "z"]);
        assert_eq!(triggers.into_iter().collect::<Vec<_>>(), vec!["e2", "e3"]);
        assert!(q.pending(CallbackId(2)).is_none());
        let next = q.finish(cb).unwrap();
        assert_eq!(next.run_id, b);
        assert_eq!(next.files.into_iter().collect::<Vec<_>>(), vec!["y", "z"]);
        assert_eq!(next.waiters, vec![2, 3]);
        assert_eq!(next.triggers.len(), 2);
        assert_eq!(q.running(cb), Some(b));
        assert!(q.pending(cb).is_none());
        assert!(q.finish(cb).is_none());
        assert_eq!(q.running(cb), None);
    }
}
