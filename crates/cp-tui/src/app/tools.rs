//! Tool batches started from the UI (the palette): shown in the conversation, run as a
//! background job, their results filled in when it ends.

use cp_base::ToolCall;

use super::App;
use crate::background;
use crate::conversation::Entry;
use crate::conversation::entry_lines::shorten_args;
use crate::palette::tool_jobs::BatchJob;

impl App {
    /// Runs a batch of tool calls in the background; results arrive as `BatchDone`.
    pub fn run_tools(&mut self, calls: Vec<ToolCall>) {
        let entries = calls
            .iter()
            .map(|call| {
                self.conversation.push(Entry::Tool {
                    name: call.name.clone(),
                    args: compact_args(&call.arguments),
                    result: None,
                    expanded: true,
                })
            })
            .collect();
        let job = self.jobs.start(entries);
        self.select("conversation");
        let batch = BatchJob {
            job,
            registry: self.host.registry().clone(),
            env: self.host.env().clone(),
            calls,
        };
        // A batch that cannot start ends at once: its calls get the reason as their result.
        if let Err(e) = background::spawn(batch, &self.tx) {
            self.finish_job(job, vec![cp_base::ToolResult::error(e.to_string())]);
        }
    }

    pub(super) fn finish_job(&mut self, job: u64, results: Vec<cp_base::ToolResult>) {
        let Some(entries) = self.jobs.finish(job) else {
            return;
        };
        self.life.autosave.mark();
        for (index, result) in entries.into_iter().zip(results) {
            if let Some(Entry::Tool { result: slot, .. }) = self.conversation.entry_mut(index) {
                *slot = Some(result);
            }
        }
    }
}

/// Arguments on one line for the conversation, cut to a readable length.
fn compact_args(args: &serde_json::Value) -> String {
    shorten_args(&args.to_string())
}
