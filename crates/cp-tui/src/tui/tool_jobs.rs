//! Tool batches started from the UI (the palette) and not yet finished: each job's
//! conversation entries, which receive its results.

use std::collections::HashMap;

/// The open jobs, by job id.
#[derive(Debug, Default)]
pub struct ToolJobs {
    next: u64,
    open: HashMap<u64, Vec<usize>>,
}

impl ToolJobs {
    /// Records a job whose results go to these conversation entries; returns its id.
    pub fn start(&mut self, entries: Vec<usize>) -> u64 {
        self.next += 1;
        self.open.insert(self.next, entries);
        self.next
    }

    /// Ends a job; its entries, or `None` for an unknown or already finished job.
    pub fn finish(&mut self, job: u64) -> Option<Vec<usize>> {
        self.open.remove(&job)
    }

    /// How many jobs are still running.
    pub fn running(&self) -> usize {
        self.open.len()
    }
}
