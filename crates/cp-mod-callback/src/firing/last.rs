//! The outcome of each callback's latest finished run, so the Callbacks panel's badge can
//! show that a callback is failing until one of its runs passes again.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::model::CallbackId;

/// Callback → whether its latest finished run failed (timed out and not started count).
#[derive(Debug, Default)]
pub(super) struct LastOutcomes(Mutex<BTreeMap<CallbackId, bool>>);

impl LastOutcomes {
    /// Records the end of a run of `id`; a later run replaces an earlier one's outcome.
    pub(super) fn record(&self, id: CallbackId, failed: bool) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, failed);
    }

    /// The callbacks whose latest run failed, by id.
    pub(super) fn failing(&self) -> Vec<CallbackId> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, failed)| **failed)
            .map(|(id, _)| *id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_clears_a_failure_and_each_callback_counts_on_its_own() {
        let last = LastOutcomes::default();
        assert!(last.failing().is_empty());
        last.record(CallbackId(2), true);
        last.record(CallbackId(1), true);
        last.record(CallbackId(3), false);
        assert_eq!(last.failing(), vec![CallbackId(1), CallbackId(2)]);
        last.record(CallbackId(1), false);
        assert_eq!(last.failing(), vec![CallbackId(2)]);
    }
}
