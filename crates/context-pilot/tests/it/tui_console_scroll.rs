//! End to end: scrolling a console panel in the real binary is bounded by the retained
//! output; Home and End jump to its first and last line; `/` finds text (issue 17).
//!
//! Every step waits on a durable fact: the console's log on disk, or the scroll offset in
//! the session the TUI saves. The screen is read only once the console has finished, when
//! nothing on it can scroll away.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use cp_e2e::{TuiSession, eventually, git_repo, wait_saved_session};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(60);
const PG_UP: &[u8] = b"\x1b[5~";
const PG_DOWN: &[u8] = b"\x1b[6~";
const HOME: &[u8] = b"\x1b[H";
const END: &[u8] = b"\x1b[F";

/// Every console log of the project, concatenated.
fn console_logs(project: &Path) -> String {
    let Ok(dir) = std::fs::read_dir(project.join(".context-pilot/run/consoles")) else {
        return String::new();
    };
    dir.flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect()
}

/// The selected panel's saved scroll offset, once a console panel is selected.
fn console_scroll(session: &Value) -> Option<u64> {
    let selected = session["selected"].as_str()?;
    if !selected.starts_with("console:") {
        return None;
    }
    Some(session["scroll"][selected].as_u64().unwrap_or(0))
}

/// Waits until the saved scroll offset of the selected console satisfies `done`.
fn wait_scroll(project: &Path, what: &str, done: impl Fn(u64) -> bool) -> u64 {
    let session = wait_saved_session(project, what, WAIT, |s| {
        console_scroll(s).is_some_and(&done)
    })
    .unwrap();
    console_scroll(&session).unwrap()
}

/// A screen row of the panel shows exactly `text` (not, say, `row-10` for `row-1`).
fn shows_row(screen: &str, text: &str) -> bool {
    let padded = format!("{text} ");
    screen.lines().any(|l| l.contains(&padded))
}

/// The `N` of the console header's `[scrolled up N]`.
fn scrolled_up(screen: &str) -> Option<u64> {
    let rest = &screen[screen.find("[scrolled up ")? + "[scrolled up ".len()..];
    rest[..rest.find(']')?].parse().ok()
}

#[test]
fn console_scrolling_is_bounded_and_home_end_jump_to_the_ends() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.send(b"\x10"); // Ctrl-P
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(
        r#"console_create command="for i in $(seq 1 300); do echo row-$i; done; echo all-rows-out" description=rows"#,
    );
    tui.send(b"\r");
    eventually("the console to finish", WAIT, || {
        console_logs(repo.path()).contains("all-rows-out")
    });
    // Select the console panel (the last sidebar entry); keys stay in the sidebar.
    tui.send(b"\t");
    for _ in 0..9 {
        tui.send(b"j");
    }
    tui.wait_until("the console finished", WAIT, |s| s.contains("exited 0"))
        .unwrap();

    // Far more PgUps than there are lines: the offset stops at the first retained line.
    for _ in 0..100 {
        tui.send(PG_UP);
    }
    // Once at the top the view stays there, whatever PgUps are still queued: the offset it
    // shows is the bound.
    let screen = tui
        .wait_until("the first line shows", WAIT, |s| shows_row(s, "row-1"))
        .unwrap();
    let top = scrolled_up(&screen).expect("a scrolled-up marker");
    // 301 lines of output, a part of them on the console's own screen.
    assert!(
        top > 0 && top < 301,
        "offset {top} is past the content:\n{screen}"
    );
    wait_scroll(repo.path(), "all PgUps applied", |n| n == top);

    // More PgUps change nothing, and one PgDn moves back at once (keys apply in order).
    for _ in 0..20 {
        tui.send(PG_UP);
    }
    tui.send(PG_DOWN);
    wait_scroll(repo.path(), "one PgDn", |n| n == top - 10);

    // End: the last line; Home: the first retained line again.
    tui.send(END);
    wait_scroll(repo.path(), "End", |n| n == 0);
    tui.wait_until("the last line shows", WAIT, |s| {
        shows_row(s, "all-rows-out")
    })
    .unwrap();
    tui.send(HOME);
    wait_scroll(repo.path(), "Home", |n| n == top);
    tui.wait_until("the first line shows again", WAIT, |s| {
        shows_row(s, "row-1")
    })
    .unwrap();
    // `G` and `g` do the same from the sidebar.
    tui.send(b"G");
    wait_scroll(repo.path(), "G", |n| n == 0);
    tui.send(b"g");
    wait_scroll(repo.path(), "g", |n| n == top);

    // `/` finds from the newest line upwards: row-159 is the nearest "row-15" above the
    // bottom; n goes further up (row-158), N back down.
    tui.send(END);
    wait_scroll(repo.path(), "End again", |n| n == 0);
    tui.send(b"/");
    tui.type_text("row-15");
    tui.send(b"\r");
    // Row 159 (index 158) at the top of the window: `top` is the offset of index 0.
    wait_scroll(repo.path(), "the search found row-159", |n| n == top - 158);
    tui.send(b"n");
    wait_scroll(repo.path(), "n: row-158", |n| n == top - 157);
    tui.send(b"N");
    wait_scroll(repo.path(), "N: row-159 again", |n| n == top - 158);
    tui.wait_until("row-159 shows", WAIT, |s| shows_row(s, "row-159"))
        .unwrap();

    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}
