//! End to end: the real binary in a PTY opens the palette, runs a tool and quits.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::time::Duration;

use cp_e2e::{TuiSession, eventually, git_repo};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn palette_runs_file_write_and_quit_restores() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    // Focus starts in the input line: ':' on an empty input opens the palette.
    tui.send(b":");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text("File_write file_path=docs/hello.txt content=\"hello from the palette\"");
    tui.send(b"\r");
    let screen = tui.wait_for("Created docs/hello.txt", WAIT).unwrap();
    // The result names the file once: no duplicate "created docs/hello.txt" line (issue 17).
    assert!(!screen.contains("created docs/hello.txt"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("docs/hello.txt")).unwrap(),
        "hello from the palette"
    );

    // A bad call shows the validation error and changes nothing.
    tui.send(b"\x10"); // Ctrl-P
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text("File_edit file_path=docs/hello.txt old_string=nope new_string=x");
    tui.send(b"\r");
    tui.wait_for("'old_string' was not found", WAIT).unwrap();

    // A draft left in the input line survives a restart, as does the conversation.
    tui.type_text("half-written thought");
    tui.send(b"\x03"); // Ctrl-C with nothing running quits at once.
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
    let again = TuiSession::start(repo.path(), &[], &[]).unwrap();
    let screen = again.wait_for("half-written thought", WAIT).unwrap();
    assert!(
        screen.contains("Created docs/hello.txt"),
        "conversation not restored:\n{screen}"
    );
    drop(again);
    let raw = tui.raw_output();
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(200)..]).into_owned();
    // The alternate screen was left and the cursor shown again.
    assert!(
        tail.contains("\u{1b}[?1049l"),
        "alternate screen not left: {tail:?}"
    );
    assert!(
        tail.contains("\u{1b}[?25h"),
        "cursor not restored: {tail:?}"
    );
}

#[test]
fn sigterm_exits_cleanly_and_restores_the_terminal() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    let pid = tui.pid().unwrap();
    // SAFETY: plain kill(2) on a child we own.
    let rc = unsafe { libc_kill(pid) };
    assert_eq!(rc, 0);
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
    let raw = tui.raw_output();
    let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(200)..]).into_owned();
    assert!(
        tail.contains("\u{1b}[?1049l"),
        "alternate screen not left: {tail:?}"
    );
}

unsafe fn libc_kill(pid: u32) -> i32 {
    // SAFETY: the caller passes the pid of a live child process.
    unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGTERM) }
}

#[test]
fn a_console_survives_a_killed_host_with_all_its_output() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.send(b"\x10");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(
        r#"console_create command="for i in $(seq 1 60); do echo beat $i; sleep 0.05; done; echo all-done" description=beats"#,
    );
    tui.send(b"\r");
    // The host has saved its session with the console panel in it, and the console is running:
    // now kill the host without a chance to clean up.
    cp_e2e::wait_saved_session(repo.path(), "the console panel is saved", WAIT, |s| {
        s["modules"]["console"]["consoles"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    })
    .unwrap();
    wait_log(repo.path(), "beat 3");
    let pid = tui.pid().unwrap();
    // SAFETY: kill(2) on a child process we started.
    assert_eq!(
        unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGKILL) },
        0
    );
    let _ = tui.wait_exit(WAIT);
    // Output keeps coming while no host runs; then a new host shows all of it.
    wait_log(repo.path(), "all-done");
    let again = TuiSession::start(repo.path(), &[], &[]).unwrap();
    let screen = again.wait_for("all-done", WAIT).unwrap();
    assert!(screen.contains("beats"), "console panel missing:\n{screen}");
    // Nothing was lost: the console's log holds every line, printed with or without a host.
    let log = console_logs(repo.path());
    for i in 1..=60 {
        assert!(
            log.contains(&format!("beat {i}\r\n")),
            "beat {i} missing from the log"
        );
    }
}

#[test]
fn the_tui_stays_responsive_while_a_console_floods_output() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.send(b"\x10");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(
        r#"console_create command="timeout 8 yes flood-line-of-output" description=flood"#,
    );
    tui.send(b"\r");
    wait_log(repo.path(), "flood-line-of-output");
    // While the flood runs, keys still echo promptly and the screen keeps up.
    tui.send(b"\x1b1"); // Alt-1: back to the conversation
    for word in ["still", "responsive"] {
        let sent = std::time::Instant::now();
        tui.type_text(word);
        tui.wait_for(word, Duration::from_secs(15)).unwrap();
        assert!(
            sent.elapsed() < Duration::from_secs(15),
            "keys took {:?} to echo",
            sent.elapsed()
        );
    }
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

/// Every console log of the project, concatenated.
fn console_logs(project: &std::path::Path) -> String {
    let Ok(dir) = std::fs::read_dir(project.join(".context-pilot/run/consoles")) else {
        return String::new();
    };
    dir.flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect()
}

/// Waits until a console log holds `needle`: output on disk, which nothing scrolls away.
fn wait_log(project: &std::path::Path, needle: &str) {
    eventually(&format!("a console log holding {needle:?}"), WAIT, || {
        console_logs(project).contains(needle)
    });
}

#[test]
fn ctrl_w_in_the_message_deletes_a_word_and_closes_nothing() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.send(b"\x10"); // Ctrl-P
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(r#"console_create command="echo ready-for-keys" description=keys"#);
    tui.send(b"\r");
    wait_log(repo.path(), "ready-for-keys");
    // Select the console panel (the last sidebar entry), then give the keys back to the input.
    tui.send(b"\t");
    for _ in 0..9 {
        tui.send(b"j");
    }
    tui.send(b"\t");
    let is_console = |s: &serde_json::Value| {
        s["selected"]
            .as_str()
            .is_some_and(|id| id.starts_with("console:"))
    };
    tui.type_text("hello brave world");
    cp_e2e::wait_saved_session(repo.path(), "the draft is typed", WAIT, |s| {
        s["draft"] == "hello brave world" && is_console(s)
    })
    .unwrap();
    tui.send(b"\x17"); // Ctrl-W
    let saved = cp_e2e::wait_saved_session(repo.path(), "Ctrl-W deleted a word", WAIT, |s| {
        s["draft"] == "hello brave "
    })
    .unwrap();
    // The console panel is still there and still selected: Ctrl-W closed nothing.
    assert!(is_console(&saved), "{saved}");
    assert_eq!(
        saved["modules"]["console"]["consoles"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{saved}"
    );
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn f1_opens_the_key_help_and_esc_closes_it() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.send(b"\x1bOP"); // F1, as xterm sends it
    // The whole help, not a frame caught while it was being drawn.
    tui.wait_until("the key help is drawn", WAIT, |s| {
        s.contains("Keys: typing") && s.contains("delete the word before the cursor")
    })
    .unwrap();
    tui.send(b"\x1b"); // Esc
    tui.wait_until("help closed", WAIT, |s| !s.contains("Keys: typing"))
        .unwrap();
    // `?` on the empty input opens it too, and is not typed.
    tui.send(b"?");
    tui.wait_for("Keys: typing", WAIT).unwrap();
    tui.send(b"\x1b");
    tui.wait_until("help closed", WAIT, |s| !s.contains("Keys: typing"))
        .unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
    let saved = cp_e2e::saved_session(repo.path()).unwrap();
    assert_eq!(saved["draft"], "", "{saved}");
}
