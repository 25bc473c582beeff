//! `one_at_a_time`: a run that finds one of its callback already going waits in a queue, and
//! triggers that arrive meanwhile coalesce into that single queued run ([`QueuedRun`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use uuid::Uuid;

use crate::model::CallbackId;

/// A run waiting for the running one of its callback to finish. Its id is fixed when it is
/// first queued; later triggers add their files and their requesters (`R`: whatever the
/// caller needs to hear about the result).
#[derive(Debug)]
pub struct QueuedRun<R> {
    pub run_id: Uuid,
    pub files: BTreeSet<String>,
    /// Labels of the edits that triggered it, for messages.
    pub triggers: BTreeSet<String>,
    pub requesters: Vec<R>,
}

/// What happened to a run that asked to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission<R> {
    /// Nothing of this callback runs: start now (the requester comes back to the caller).
    Start(R),
    /// Queued behind `behind`, as queued run `run_id` (`merged`: joined an existing one).
    Queued {
        behind: Uuid,
        run_id: Uuid,
        merged: bool,
    },
}

struct State<R> {
    running: HashMap<CallbackId, Uuid>,
    queued: HashMap<CallbackId, QueuedRun<R>>,
}

/// The runs in flight of `one_at_a_time` callbacks, shared with the threads running them.
pub struct RunQueue<R> {
    state: Mutex<State<R>>,
}

impl<R> Default for RunQueue<R> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                running: HashMap::new(),
                queued: HashMap::new(),
            }),
        }
    }
}

impl<R> std::fmt::Debug for RunQueue<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunQueue").finish_non_exhaustive()
    }
}

impl<R> RunQueue<R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<R>> {
        // A panicked runner thread must not stop every later callback.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks to start run `run_id` of `callback`. When one is running, the files, trigger and
    /// requester join the queued run (created with `run_id` if there is none).
    pub fn admit(
        &self,
        callback: CallbackId,
        run_id: Uuid,
        files: &[String],
        trigger: &str,
        requester: R,
    ) -> Admission<R> {
        let mut state = self.lock();
        let Some(&behind) = state.running.get(&callback) else {
            state.running.insert(callback, run_id);
            return Admission::Start(requester);
        };
        let merged = state.queued.contains_key(&callback);
        let queued = state.queued.entry(callback).or_insert_with(|| QueuedRun {
            run_id,
            files: BTreeSet::new(),
            triggers: BTreeSet::new(),
            requesters: Vec::new(),
        });
        queued.files.extend(files.iter().cloned());
        queued.triggers.insert(trigger.to_owned());
        queued.requesters.push(requester);
        Admission::Queued {
            behind,
            run_id: queued.run_id,
            merged,
        }
    }

    /// Marks the running run of `callback` finished. If a run is queued, it becomes the
    /// running one and is returned for the caller to start.
    pub fn finish(&self, callback: CallbackId) -> Option<QueuedRun<R>> {
        let mut state = self.lock();
        if let Some(next) = state.queued.remove(&callback) {
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

    /// The queued run of `callback`, if any: its id, files and triggers.
    pub fn queued(
        &self,
        callback: CallbackId,
    ) -> Option<(Uuid, BTreeSet<String>, BTreeSet<String>)> {
        self.lock()
            .queued
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
        let (queued, files, triggers) = q.queued(cb).unwrap();
        assert_eq!(queued, b);
        assert_eq!(files.into_iter().collect::<Vec<_>>(), vec!["y", "z"]);
        assert_eq!(triggers.into_iter().collect::<Vec<_>>(), vec!["e2", "e3"]);
        assert!(q.queued(CallbackId(2)).is_none());
        let next = q.finish(cb).unwrap();
        assert_eq!(next.run_id, b);
        assert_eq!(next.files.into_iter().collect::<Vec<_>>(), vec!["y", "z"]);
        assert_eq!(next.requesters, vec![2, 3]);
        assert_eq!(next.triggers.len(), 2);
        assert_eq!(q.running(cb), Some(b));
        assert!(q.queued(cb).is_none());
        assert!(q.finish(cb).is_none());
        assert_eq!(q.running(cb), None);
    }
}
