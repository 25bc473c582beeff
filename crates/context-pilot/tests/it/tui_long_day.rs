//! End to end: a day's session. The real binary restores 2,000 turns (a question, a short
//! markdown answer and a `File_write` each), the scripted model drives one more turn, then 40
//! Page Up keys move the view 400 lines up and 40 Page Down keys bring it back to the end.
//!
//! The turns are restored from a saved state rather than driven one by one: what is checked
//! is that the TUI works and scrolls with that much history (the time it takes is measured by
//! the bench group `day`). Every step waits on a durable fact, the saved state's history and
//! scroll offset; the screen is read only once it can no longer change.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::time::Duration;

use cp_e2e::{
    LlmServer, TuiSession, anthropic, git_repo, last_assistant_message, wait_saved_session,
};
use serde_json::json;

use crate::util::long_session::{conversation_scroll, seed};

const WAIT: Duration = Duration::from_secs(90);
const TURNS: usize = 2_000;
const PG_UP: &[u8] = b"\x1b[5~";
const PG_DOWN: &[u8] = b"\x1b[6~";

/// The turn numbers of the questions on screen.
fn visible_turns(screen: &str) -> Vec<usize> {
    screen
        .match_indices("Turn ")
        .filter_map(|(at, _)| {
            let digits: String = screen[at + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn two_thousand_turns_restore_take_another_and_scroll_forty_pages_up_and_back() {
    let repo = git_repo();
    let root = repo.path().canonicalize().unwrap();
    // The live turn writes under notes/, which git ignores: the stop gate has nothing to hold.
    std::fs::write(root.join(".gitignore"), "notes/\n").unwrap();
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-q", "-m", "ignore notes/"]);
    seed(&root, TURNS);

    let server = LlmServer::start().unwrap();
    let write = json!({"file_path": "notes/last.md", "content": "last\n"}).to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_last",
        "File_write",
        &write,
    )]));
    server.push(anthropic::text_turn("Turn 2000 is noted too."));
    let url = server.url();
    let mut tui = TuiSession::start(
        &root,
        &[],
        &[
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_API_KEY", ""),
        ],
    )
    .unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();

    // One more turn on top of the restored ones: the model sees the whole history.
    tui.type_text("Turn 2000: note the last finding.");
    tui.send(b"\r");
    wait_saved_session(&root, "the live turn ended", WAIT, |s| {
        last_assistant_message(s).is_some_and(|m| m.contains("Turn 2000 is noted too."))
    })
    .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "a tool call and the answer");
    let history = requests[1].body["messages"].as_array().unwrap().len();
    assert!(
        history > 2 * TURNS,
        "the request carries the restored history ({history})"
    );
    assert!(root.join("notes/last.md").exists());
    assert_eq!(
        conversation_scroll(&root, "at the end", WAIT, |n| n == 0),
        0
    );

    // 40 PgUp, 10 lines each.
    for _ in 0..40 {
        tui.send(PG_UP);
    }
    conversation_scroll(&root, "40 PgUp applied", WAIT, |n| n == 400);
    let screen = tui
        .wait_until("the view left the end", WAIT, |s| {
            !s.contains("Turn 2000 is noted too.")
        })
        .unwrap();
    let turns = visible_turns(&screen);
    assert!(!turns.is_empty(), "questions on screen:\n{screen}");
    // Each turn takes at least a line, at most a few dozen: 400 lines up is well back in the
    // history, and not at its start.
    assert!(
        turns.iter().all(|&t| t < TURNS - 10 && t > TURNS - 400),
        "{turns:?}\n{screen}"
    );

    // And back to the end.
    for _ in 0..40 {
        tui.send(PG_DOWN);
    }
    conversation_scroll(&root, "40 PgDn applied", WAIT, |n| n == 0);
    tui.wait_until("the end is shown again", WAIT, |s| {
        s.contains("Turn 2000 is noted too.")
    })
    .unwrap();
    tui.send(b"\x03");
    tui.wait_exit(WAIT).unwrap();
}
