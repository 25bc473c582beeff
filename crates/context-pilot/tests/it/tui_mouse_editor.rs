//! End to end: the real binary in a PTY. A mouse click (an SGR mouse report, as a terminal
//! sends it) selects a sidebar panel, and `e` on the Callbacks panel hands the open callback's
//! script to `$EDITOR`, restores the screen and saves the edited script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use cp_e2e::{TuiSession, git_repo, saved_session};

const WAIT: Duration = Duration::from_secs(60);

/// The 0-based cell where `text` first shows in the sidebar (its left 26 columns).
fn sidebar_cell(screen: &str, text: &str) -> (usize, usize) {
    screen
        .lines()
        .enumerate()
        .find_map(|(row, line)| {
            let left: String = line.chars().take(26).collect();
            left.find(text).map(|at| (left[..at].chars().count(), row))
        })
        .unwrap_or_else(|| panic!("`{text}` is not in the sidebar:\n{screen}"))
}

/// A left click at a 0-based cell, as an SGR mouse report (press, then release).
fn click(tui: &mut TuiSession, (column, row): (usize, usize)) {
    let (x, y) = (column + 1, row + 1);
    tui.send(format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m").as_bytes());
}

/// Polls until `path` holds `needle` (the durable fact that the change was applied).
fn wait_file_contains(path: &Path, needle: &str) {
    let text = || std::fs::read_to_string(path).unwrap_or_default();
    cp_e2e::eventually_with(
        &format!("{} to hold {needle:?}", path.display()),
        WAIT,
        || text().contains(needle),
        || format!("it holds:\n{}", text()),
    );
}

#[test]
fn a_click_selects_a_panel_and_e_edits_the_callback_script_in_the_editor() {
    let repo = git_repo();
    let editor = repo.path().join("fake-editor.sh");
    std::fs::write(&editor, "sed -i 's/echo old/echo new/' \"$1\"\n").unwrap();
    let editor_cmd = format!("sh {}", editor.display());
    let mut tui = TuiSession::start(repo.path(), &[], &[("EDITOR", editor_cmd.as_str())]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();

    // Create callback CB1 and open it in the Callbacks panel's editor, from the palette.
    tui.send(b":");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(
        "Callback_upsert action=create name=fmt pattern=*.rs script_content=\"echo old\"",
    );
    tui.send(b"\r");
    let script = repo.path().join(".context-pilot/scripts/fmt.sh");
    wait_file_contains(&script, "echo old");
    tui.send(b":");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text("Callback_open_editor id=CB1");
    tui.send(b"\r");
    tui.wait_for("Editor open on CB1", WAIT).unwrap();

    // A click on the Callbacks row selects that panel and gives the sidebar the keys.
    let screen = tui.screen();
    click(&mut tui, sidebar_cell(&screen, "Callbacks"));
    tui.wait_for("Editor: CB1 fmt", WAIT).unwrap();

    // `e` hands the script to the editor; the edited script is saved through Callback_upsert.
    tui.send(b"e");
    wait_file_contains(&script, "echo new");
    let saved = std::fs::read_to_string(&script).unwrap();
    assert!(!saved.contains("echo old"), "{saved}");
    // The TUI took the screen back, and the update's batch has finished (✓, not the spinner
    // of a batch still running): a Ctrl-C now quits without asking.
    tui.wait_for(r#"✓ Callback_upsert {"action":"update""#, WAIT)
        .unwrap();

    // Applying the edit showed the conversation; a click brings the Callbacks panel back,
    // and that selection is what the TUI saves on exit (a durable record of the click).
    let screen = tui.screen();
    click(&mut tui, sidebar_cell(&screen, "Callbacks"));
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
    let session = saved_session(repo.path()).expect("the session is saved on exit");
    assert_eq!(session["selected"], "callbacks", "{session}");
    let raw = String::from_utf8_lossy(&tui.raw_output()).into_owned();
    // The editor got a normal screen: the alternate screen was left before it ran and entered
    // again after (left once more on exit).
    assert!(
        raw.matches("\u{1b}[?1049l").count() >= 2,
        "the screen was not handed over"
    );
    assert!(raw.matches("\u{1b}[?1049h").count() >= 2);
}
