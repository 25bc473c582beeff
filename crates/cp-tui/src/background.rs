//! Background work, one way: a [`Job`] runs on its own named thread, sends its progress to
//! the event loop as [`AppEvent`]s through a [`Reporter`], and ends with the event that
//! finishes it. A job whose thread cannot start is reported once, the same way for every
//! job: [`spawn`] logs it and sends [`AppEvent::NotStarted`], and returns the error so the
//! caller can undo what it prepared (a spinner, a lent driver, a "looking" flag).
//!
//! Modelled on gitui's `AsyncJob`: the job is a value that owns what it needs, the thread is
//! an implementation detail, and results come back as typed messages.

use std::sync::mpsc::Sender;

use crate::events::{AppEvent, NotStarted};

/// Work that runs off the UI thread.
pub trait Job: Send + 'static {
    /// The thread's name, e.g. `cp-batch-3` (shown by debuggers and `ps -T`).
    fn thread_name(&self) -> String;

    /// What the job does, for the message when it cannot start: "cannot start {what}: …".
    fn what(&self) -> &'static str;

    /// Does the work, sending progress through `progress`; returns the event that finishes
    /// the job, if any (a job with nothing to say sends nothing).
    fn run(self, progress: &Reporter) -> Option<AppEvent>;
}

/// Sends a job's events to the event loop.
#[derive(Debug, Clone)]
pub struct Reporter {
    tx: Sender<AppEvent>,
}

impl Reporter {
    pub fn new(tx: Sender<AppEvent>) -> Self {
        Self { tx }
    }

    /// Sends `event`; returns whether the event loop still listens (after it ended, nobody
    /// does, and the job's events are dropped).
    pub fn send(&self, event: AppEvent) -> bool {
        self.tx.send(event).is_ok()
    }

    /// The channel itself, for code that hands it on (a workflow's approval prompts).
    pub fn sender(&self) -> Sender<AppEvent> {
        self.tx.clone()
    }
}

/// Runs `job` on a thread of its own; its events go to `tx`. When the thread cannot start,
/// the failure is logged and sent as [`AppEvent::NotStarted`], and returned.
pub fn spawn<J: Job>(job: J, tx: &Sender<AppEvent>) -> Result<(), NotStarted> {
    let what = job.what();
    let reporter = Reporter::new(tx.clone());
    let spawned = std::thread::Builder::new()
        .name(job.thread_name())
        .spawn(move || {
            if let Some(event) = job.run(&reporter) {
                reporter.send(event);
            }
        });
    spawned.map(drop).map_err(|e| {
        let failure = NotStarted {
            what,
            reason: e.to_string(),
        };
        tracing::warn!("{failure}");
        let _ = tx.send(AppEvent::NotStarted(failure.clone()));
        failure
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    struct Count(u64);

    impl Job for Count {
        fn thread_name(&self) -> String {
            format!("cp-count-{}", self.0)
        }
        fn what(&self) -> &'static str {
            "the count"
        }
        fn run(self, progress: &Reporter) -> Option<AppEvent> {
            let name = std::thread::current().name().map(str::to_owned);
            progress.send(AppEvent::AgentNotice(
                cp_base::Level::Info,
                name.unwrap_or_default(),
            ));
            Some(AppEvent::BatchDone {
                job: self.0,
                results: Vec::new(),
            })
        }
    }

    #[test]
    fn a_job_reports_its_progress_then_its_end_from_its_named_thread() {
        let (tx, rx) = mpsc::channel();
        spawn(Count(7), &tx).unwrap();
        let progress = rx.recv().unwrap();
        assert!(
            matches!(&progress, AppEvent::AgentNotice(_, name) if name == "cp-count-7"),
            "{progress:?}"
        );
        let end = rx.recv().unwrap();
        assert!(matches!(end, AppEvent::BatchDone { job: 7, .. }), "{end:?}");
    }

    #[test]
    fn a_job_that_cannot_start_is_shown_as_an_error_in_the_conversation() {
        let mut app = crate::tests::app(false);
        app.handle(AppEvent::NotStarted(NotStarted {
            what: "the tool batch",
            reason: "Resource temporarily unavailable".into(),
        }));
        let (conversation, _, _) = app.parts_for_test();
        let last = conversation.entries().last();
        assert!(
            matches!(
                last,
                Some(crate::conversation::Entry::Notice { level: cp_base::Level::Error, text })
                    if text == "cannot start the tool batch: Resource temporarily unavailable"
            ),
            "{last:?}"
        );
    }
}
