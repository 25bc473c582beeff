//! The blocking runs in progress, by name, so the TUI's progress line can say which callback
//! a tool call is waiting for (`callback pytest`), not only which tool.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use uuid::Uuid;

/// Names of the blocking runs started and not yet reported, oldest first.
#[derive(Default)]
pub(super) struct RunningNames {
    runs: Mutex<BTreeMap<Uuid, (u64, String)>>,
    next: Mutex<u64>,
}

impl RunningNames {
    pub(super) fn begin(&self, run_id: Uuid, name: &str) {
        let order = {
            let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
            *next += 1;
            *next
        };
        self.lock().insert(run_id, (order, name.to_owned()));
    }

    pub(super) fn end(&self, run_id: Uuid) {
        self.lock().remove(&run_id);
    }

    /// The names, in the order the runs started.
    pub(super) fn names(&self) -> Vec<String> {
        let mut runs: Vec<(u64, String)> = self.lock().values().cloned().collect();
        runs.sort();
        runs.into_iter().map(|(_, name)| name).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Uuid, (u64, String)>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_listed_in_start_order_until_their_run_ends() {
        let running = RunningNames::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        running.begin(a, "pytest");
        running.begin(b, "lint");
        assert_eq!(running.names(), ["pytest", "lint"]);
        running.end(a);
        assert_eq!(running.names(), ["lint"]);
    }
}
