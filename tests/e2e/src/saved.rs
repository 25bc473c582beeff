//! Durable facts a test can wait on instead of screen text that may scroll away: the session
//! the TUI saves to `.context-pilot/state/<worker>/` whenever a turn ends. `session.json` holds
//! the small part and, under `logs`, how many lines of `conversation.jsonl` and
//! `messages.jsonl` (one entry or message a line) are valid; [`saved_session`] puts them
//! together into one value, as an older `session.json` held them inline.

use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// The saved session of the default worker, if one was written and parses, with the entries
/// and messages from the logs put in `conversation.entries` and `messages`. The files are
/// written so that `session.json` never names lines a log does not hold whole; a parse failure
/// or a log that is short (cut back while we read) means it is not there yet.
pub fn saved_session(project: &Path) -> Option<Value> {
    let path = session_path(project, DEFAULT_WORKER);
    let text = std::fs::read_to_string(&path).ok()?;
    let mut session: Value = serde_json::from_str(&text).ok()?;
    let Some(logs) = session.get("logs").cloned() else {
        return Some(session);
    };
    let dir = path.parent()?;
    let entries = read_log(&dir.join("conversation.jsonl"), &logs["conversation"])?;
    let messages = read_log(&dir.join("messages.jsonl"), &logs["messages"])?;
    session["conversation"]["entries"] = Value::Array(entries);
    session["messages"] = Value::Array(messages);
    Some(session)
}

/// The first `lines` lines of the log at `path`, parsed.
fn read_log(path: &Path, lines: &Value) -> Option<Vec<Value>> {
    let lines = usize::try_from(lines.as_u64()?).ok()?;
    if lines == 0 {
        return Some(Vec::new());
    }
    let text = std::fs::read_to_string(path).ok()?;
    let items: Vec<Value> = text
        .split_inclusive('\n')
        .take(lines)
        .take_while(|line| line.ends_with('\n'))
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .ok()?;
    (items.len() == lines).then_some(items)
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
    crate::within(timeout, || saved_session(project).filter(|s| done(s))).ok_or_else(|| {
        format!(
            "timed out waiting until {what}; saved session: {}",
            saved_session(project).map_or_else(|| "none".to_owned(), |s| s.to_string())
        )
    })
}
