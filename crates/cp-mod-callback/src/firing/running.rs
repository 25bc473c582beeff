//! The blocking runs in progress, by name, so the TUI's progress line can say which callback
//! a tool call is waiting for (`callback pytest`), not only which tool.

use std::sync::{Mutex, MutexGuard, PoisonError};

use uuid::Uuid;

/// Names of the blocking runs started and not yet reported, in the order they started.
#[derive(Default)]
pub(super) struct RunningNames {
    runs: Mutex<Vec<(Uuid, String)>>,
}

impl RunningNames {
    pub(super) fn begin(&self, run_id: Uuid, name: &str) {
        self.lock().push((run_id, name.to_owned()));
    }

    pub(super) fn end(&self, run_id: Uuid) {
        self.lock().retain(|(id, _)| *id != run_id);
    }

    /// The names, oldest run first.
    pub(super) fn names(&self) -> Vec<String> {
        self.lock().iter().map(|(_, name)| name.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(Uuid, String)>> {
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
