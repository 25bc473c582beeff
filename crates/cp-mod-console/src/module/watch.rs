//! `console_watch` in progress: a thread per watch that waits on the console and posts a
//! notification when the watch resolves. Watches are saved with the module state, so a
//! restarted host resumes them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cp_base::{Level, Notification, Notifier};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::fenced;
use crate::client::ConsoleHandle;

/// Longest single wait of a watch (it waits again until resolved).
const WATCH_STEP: Duration = Duration::from_secs(600);

/// A `console_watch` in progress; saved with the module state so a restarted host resumes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Watch {
    pub(super) console: Uuid,
    /// `None`: wait for exit.
    pub(super) pattern: Option<String>,
}

/// Watches in progress, keyed by a number so a finished watch removes exactly itself.
pub(super) type Watches = Arc<Mutex<BTreeMap<u64, Watch>>>;

/// Runs a watch on its own thread and posts a notification when it resolves.
pub(super) fn start_watch(
    handle: ConsoleHandle,
    watch: Watch,
    key: u64,
    watches: Watches,
    notifier: Notifier,
) {
    let spawned = std::thread::Builder::new()
        .name(format!("console-watch-{}", watch.console))
        .spawn(move || {
            let id = watch.console;
            let outcome = loop {
                let step = match &watch.pattern {
                    None => handle.wait_exit(WATCH_STEP),
                    Some(p) => handle.wait_pattern(p, WATCH_STEP),
                };
                match step {
                    Ok(o) if o.timed_out() => {}
                    other => break other,
                }
            };
            watches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            let tail = handle.tail(5).unwrap_or_default();
            let (level, text) = match (&watch.pattern, outcome) {
                (_, Err(e)) => (Level::Warning, format!("console_watch on {id} failed: {e}")),
                (None, Ok(o)) => {
                    let level = if o.info.status.is_success() {
                        Level::Success
                    } else {
                        Level::Warning
                    };
                    (
                        level,
                        format!("Console {id} (`{}`) {}.", o.info.command, o.info.status),
                    )
                }
                (Some(p), Ok(o)) if o.met => (
                    Level::Info,
                    format!(
                        "Console {id} (`{}`) printed output matching `{p}`.",
                        o.info.command
                    ),
                ),
                (Some(p), Ok(o)) => (
                    Level::Warning,
                    format!(
                        "Console {id} (`{}`) {} without output matching `{p}`.",
                        o.info.command, o.info.status
                    ),
                ),
            };
            notifier.notify(
                Notification::new(
                    "console",
                    level,
                    format!("{text}\nLast lines:\n{}", fenced(&tail)),
                )
                .waking(),
            );
        });
    if let Err(e) = spawned {
        tracing::error!("could not start a console watch: {e}");
    }
}
