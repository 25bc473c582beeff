//! Durable facts a test can wait on instead of screen text that may scroll away: the session
//! the TUI saves to `.context-pilot/state/<worker>/session.json` whenever a turn ends.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The worker a TUI runs as when no `--worker`/`CP_WORKER` is given.
pub const DEFAULT_WORKER: &str = "main";

/// Where the TUI of `worker` saves its session in `project`.
pub fn session_path(project: &Path, worker: &str) -> PathBuf {
    project
        .join(".context-pilot/state")
        .join(worker)
        .join("session.json")
}

/// The saved session of the default worker, if one was written and parses. The file is
/// replaced atomically, so a parse failure means it is not there yet.
pub fn saved_session(project: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(session_path(project, DEFAULT_WORKER)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The last message of the saved model history, if it was the assistant's.
pub fn last_assistant_message(session: &Value) -> Option<String> {
    let last = session["messages"].as_array()?.last()?;
    (last["role"] == "assistant").then(|| last.to_string())
}

/// Everything the saved conversation panel shows, as JSON text (entries, notices, markers).
pub fn saved_conversation(session: &Value) -> String {
    session["conversation"].to_string()
}

/// Polls the saved session of `project` until `done` holds for it.
///
/// # Errors
/// On timeout, naming `what` and showing the last session seen.
pub fn wait_saved_session(
    project: &Path,
    what: &str,
    timeout: Duration,
    done: impl Fn(&Value) -> bool,
) -> Result<Value, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let session = saved_session(project);
        if let Some(session) = session.as_ref().filter(|s| done(s)) {
            return Ok(session.clone());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "timed out waiting until {what}; saved session: {}",
                session.map_or_else(|| "none".to_owned(), |s| s.to_string())
            ));
        }
        thread::sleep(Duration::from_millis(25));
    }
}
