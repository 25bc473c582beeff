//! A long session saved to disk, as a person's all-day session leaves it: the long-session
//! test (`it`'s `tui_long_day`) and the `long-day` bench group both restore it.

use std::path::Path;
use std::time::Duration;

use cp_base::ToolResult;
use cp_llm::Message;
use cp_tui::{Conversation, Entry, SavedState};
use serde_json::json;

/// Writes the saved state of a session of `turns` turns for the default worker: each turn a
/// question, a `File_write` call with its result, and an answer.
pub fn seed(root: &Path, turns: usize) {
    let mut conversation = Conversation::default();
    let mut messages = Vec::new();
    for i in 0..turns {
        let question = format!("Turn {i}: note the next finding.");
        let answer = format!("Noted **finding {i}** in `notes/n{i}.md`; nothing else changed.");
        conversation.push(Entry::User(question.clone()));
        conversation.push(Entry::Tool {
            name: "File_write".into(),
            args: json!({"file_path": format!("notes/n{i}.md"), "content": "…"}).to_string(),
            result: Some(ToolResult::ok(format!(
                "Created notes/n{i}.md (1 lines, 20 bytes)."
            ))),
            expanded: false,
        });
        conversation.push(Entry::Assistant(answer.clone()));
        messages.push(Message::user_text(question));
        messages.push(Message::assistant_text(answer));
    }
    let state = SavedState {
        version: 1,
        conversation,
        messages,
        selected: "conversation".into(),
        ..SavedState::default()
    };
    let path = cp_e2e::session_path(root, cp_e2e::DEFAULT_WORKER);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(&state).unwrap()).unwrap();
}

/// The conversation's saved scroll offset (lines up from the end), once `done` holds for it
/// in the state the TUI saved.
pub fn conversation_scroll(
    root: &Path,
    what: &str,
    wait: Duration,
    done: impl Fn(u64) -> bool,
) -> u64 {
    let offset = |s: &serde_json::Value| s["scroll"]["conversation"].as_u64().unwrap_or(0);
    let session = cp_e2e::wait_saved_session(root, what, wait, |s| {
        s["selected"] == "conversation" && done(offset(s))
    })
    .unwrap();
    offset(&session)
}
