//! Tool batches started from the UI (the palette): the [`BatchJob`] that runs one off the UI
//! thread, and the jobs not yet finished with the conversation entries that receive their
//! results.

use std::collections::HashMap;

use cp_base::{Registry, ToolCall, ToolEnv, run_batch};

use crate::background::{Job, Reporter};
use crate::events::AppEvent;

/// One batch of tool calls, run through the modules' registry; ends with
/// [`AppEvent::BatchDone`].
pub struct BatchJob {
    pub job: u64,
    pub registry: Registry,
    pub env: ToolEnv,
    pub calls: Vec<ToolCall>,
}

impl Job for BatchJob {
    fn thread_name(&self) -> String {
        format!("cp-batch-{}", self.job)
    }

    fn what(&self) -> &'static str {
        "the tool batch"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let results = run_batch(&self.registry, &self.calls, &self.env);
        Some(AppEvent::BatchDone {
            job: self.job,
            results,
        })
    }
}

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
