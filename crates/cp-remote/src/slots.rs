//! The hosts of a run and their slots, one pool for all the run sends there: its phases
//! ([`take`](HostSlots::take) with the host a phase names, else the freest) and its merge
//! tests alike, so a host set to take two jobs takes two, whatever they are. A host that is
//! gone, or refused, is left out of the rest of the run with the reason.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::HostConfig;
use crate::place::{Place, SshPlace};

/// A place the run may send work to, with its number of slots and how long the run waits
/// for it after its link dropped.
pub struct Placed {
    pub place: Arc<dyn Place>,
    pub slots: usize,
    pub reconnect: Duration,
}

/// The places of the `hosts` configuration.
pub fn ssh_places(hosts: &[HostConfig]) -> Vec<Placed> {
    hosts
        .iter()
        .map(|h| Placed {
            place: Arc::new(SshPlace::new(h.name(), &h.ssh)),
            slots: h.slots,
            reconnect: Duration::from_secs(h.reconnect_secs),
        })
        .collect()
}

struct Slot {
    placed: Placed,
    busy: usize,
    /// Why it takes no more work in this run.
    out: Option<String>,
}

/// The run's hosts and how many of their slots are taken.
pub struct HostSlots {
    slots: Mutex<Vec<Slot>>,
}

impl HostSlots {
    /// A pool of `places`, none of their slots taken.
    pub fn new(places: Vec<Placed>) -> Arc<Self> {
        Arc::new(Self {
            slots: Mutex::new(
                places
                    .into_iter()
                    .map(|placed| Slot {
                        placed,
                        busy: 0,
                        out: None,
                    })
                    .collect(),
            ),
        })
    }

    /// The pool of the `hosts` configuration.
    pub fn of_hosts(hosts: &[HostConfig]) -> Arc<Self> {
        Self::new(ssh_places(hosts))
    }

    /// Whether there is no host at all.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Every place of the pool, in the configuration's order, left out or not.
    pub fn places(&self) -> Vec<Arc<dyn Place>> {
        self.lock()
            .iter()
            .map(|s| Arc::clone(&s.placed.place))
            .collect()
    }

    /// Takes a slot: on the host `named` (even when busy: the workflow asked for it), else on
    /// the host with the most free slots (the first listed among equals); `None` when that
    /// host is left out, or no host has a free slot.
    pub fn take(&self, named: Option<&str>) -> Option<usize> {
        let mut slots = self.lock();
        let at = match named {
            Some(name) => slots
                .iter()
                .position(|s| s.out.is_none() && s.placed.place.name() == name)?,
            None => {
                slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.out.is_none() && s.busy < s.placed.slots)
                    .max_by_key(|(at, s)| (s.placed.slots - s.busy, std::cmp::Reverse(*at)))?
                    .0
            }
        };
        slots[at].busy += 1;
        Some(at)
    }

    /// Gives back the slot of `at`; `out`: the host takes nothing more in this run, for that
    /// reason.
    pub fn give_back(&self, at: usize, out: Option<String>) {
        let mut slots = self.lock();
        if let Some(slot) = slots.get_mut(at) {
            slot.busy = slot.busy.saturating_sub(1);
            if out.is_some() {
                slot.out = out;
            }
        }
    }

    /// Leaves the host of `at` out of the rest of the run, for `why` (its slot given back
    /// already).
    pub fn leave_out(&self, at: usize, why: String) {
        if let Some(slot) = self.lock().get_mut(at) {
            slot.out = Some(why);
        }
    }

    /// The place of `at`, and how long the run waits for it after its link dropped.
    pub fn place(&self, at: usize) -> Option<(Arc<dyn Place>, Duration)> {
        self.lock()
            .get(at)
            .map(|s| (Arc::clone(&s.placed.place), s.placed.reconnect))
    }

    /// How many slots of `at` are taken, and why it is left out, if it is.
    pub fn state(&self, at: usize) -> Option<(usize, Option<String>)> {
        self.lock().get(at).map(|s| (s.busy, s.out.clone()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(json: &str) -> Vec<HostConfig> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_named_host_else_the_freest_else_none_and_a_host_left_out_takes_nothing() {
        let slots = HostSlots::of_hosts(&hosts(
            r#"[{"ssh": "a", "slots": 2}, {"ssh": "b", "slots": 2}]"#,
        ));
        assert_eq!(slots.take(Some("b")), Some(1));
        // a has two free, b one: a; then one each: the first listed.
        assert_eq!(slots.take(None), Some(0));
        assert_eq!(slots.take(None), Some(0));
        assert_eq!(slots.take(None), Some(1));
        // None free: none; a named host is taken even when busy.
        assert_eq!(slots.take(None), None);
        assert_eq!(slots.take(Some("a")), Some(0));
        assert_eq!(slots.state(0), Some((3, None)));
        slots.give_back(1, None);
        assert_eq!(slots.take(None), Some(1));
        // A host left out takes nothing more, named or not.
        slots.give_back(1, Some("gone".into()));
        assert_eq!(slots.take(Some("b")), None);
        assert_eq!(slots.take(None), None);
        assert_eq!(slots.state(1), Some((1, Some("gone".into()))));
        assert!(HostSlots::of_hosts(&[]).is_empty());
    }
}
