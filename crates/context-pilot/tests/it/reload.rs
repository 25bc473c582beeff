//! Live reload on SIGUSR2, end to end: the real binary in a PTY.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic, eventually, git_repo};

const WAIT: Duration = Duration::from_secs(60);

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a child process we started.
    let rc = unsafe { libc::kill(i32::try_from(pid).unwrap(), sig) };
    assert_eq!(rc, 0, "kill failed");
}

fn palette(tui: &mut TuiSession, command: &str) {
    tui.send(b"\x10");
    tui.wait_for("Command palette", WAIT).unwrap();
    tui.type_text(command);
    tui.send(b"\r");
}

fn reload_count(repo: &Path) -> usize {
    std::fs::read_to_string(repo.join(".context-pilot/logs/reload-times.log"))
        .map_or(0, |s| s.lines().count())
}

/// Waits until a console log of the project holds `needle`.
fn wait_log(repo: &Path, needle: &str) {
    eventually(&format!("a console log holding {needle:?}"), WAIT, || {
        console_logs(repo).contains(needle)
    });
}

/// Waits until the console logs hold at least `n` ticks.
fn wait_ticks(repo: &Path, n: usize) {
    eventually(&format!("{n} ticks logged"), WAIT, || {
        ticks(repo).len() >= n
    });
}

/// Every console log of the project, concatenated.
fn console_logs(repo: &Path) -> String {
    let Ok(dir) = std::fs::read_dir(repo.join(".context-pilot/run/consoles")) else {
        return String::new();
    };
    dir.flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap_or_default()).into_owned())
        .collect()
}

fn wait_reloads(repo: &Path, n: usize) {
    eventually(&format!("reload {n}"), WAIT, || reload_count(repo) >= n);
}

/// Waits until the callback `id` is defined in the project's `config.json`, where
/// `Callback_upsert` saves it.
fn wait_callback_saved(repo: &Path, id: &str) {
    let config = repo.join(".context-pilot/config.json");
    eventually(&format!("{id} in config.json"), WAIT, || {
        std::fs::read_to_string(&config)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v["callbacks"]["definitions"].as_array().cloned())
            .is_some_and(|defs| defs.iter().any(|d| d["id"] == id))
    });
}

/// Lines `tick N` in the console's log, which must count up without a gap.
fn ticks(repo: &Path) -> Vec<u32> {
    console_logs(repo)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("tick ")?.parse::<u32>().ok())
        .collect()
}

#[test]
fn sigusr2_reload_keeps_pid_screen_console_and_callback() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    palette(
        &mut tui,
        r#"Callback_upsert action=create name=keep-me pattern=*.txt script_content="echo ok" blocking=true timeout=10"#,
    );
    wait_callback_saved(repo.path(), "CB1");
    palette(
        &mut tui,
        r#"console_create command="for i in $(seq 1 400); do echo tick $i; sleep 0.02; done" description=ticker"#,
    );
    // Ticks scroll through the panel far faster than a loaded machine can be sure to look:
    // wait on the console's log, then on the panel's title, which stays.
    wait_ticks(repo.path(), 5);
    tui.wait_for("┌ ticker", WAIT).unwrap();
    tui.type_text("a draft that must survive");
    let before = tui.wait_for("a draft that must survive", WAIT).unwrap();
    let pid = tui.pid().unwrap();

    // Only what the new binary draws counts.
    tui.forget_drawn();
    signal(pid, libc::SIGUSR2);
    wait_reloads(repo.path(), 1);
    let after = tui.wait_for("a draft that must survive", WAIT).unwrap();
    assert_eq!(tui.pid(), Some(pid), "reload must keep the pid");
    // Same panels in the sidebar and the same panel selected (the console). The status bar
    // below (rows starting with a space) is not the sidebar: it says "reloaded" now.
    let sidebar = |s: &str| {
        s.lines()
            .take_while(|l| !l.starts_with(' '))
            .map(|l| l.chars().take(26).collect::<String>())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        sidebar(&before),
        sidebar(&after),
        "sidebar changed:\n{before}\n---\n{after}"
    );
    assert!(
        after.contains("┌ ticker"),
        "console panel not selected after reload:\n{after}"
    );
    // The console kept running: later ticks arrive, and the log has no gap.
    wait_ticks(repo.path(), 120);
    let seen = ticks(repo.path());
    assert!(seen.len() >= 120);
    assert!(
        seen.windows(2).all(|w| w[1] == w[0] + 1),
        "gap in console output"
    );
    // The callback is still listed and active.
    tui.send(b"\t");
    tui.send(b"2");
    let screen = tui.wait_for("┌ Callbacks", WAIT).unwrap();
    let row = screen.lines().find(|l| l.contains("keep-me")).unwrap();
    assert!(row.contains("yes"), "{row}");
    tui.quit(WAIT).unwrap();
}

/// Issue 17: a reload with no turn running used to leave no sign at all.
#[test]
fn a_reload_while_idle_leaves_a_visible_sign() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    let pid = tui.pid().unwrap();
    signal(pid, libc::SIGUSR2);
    wait_reloads(repo.path(), 1);
    // Durable: the marker is in the saved conversation.
    let session =
        cp_e2e::wait_saved_session(repo.path(), "the reload marker is saved", WAIT, |s| {
            cp_e2e::saved_conversation(s).contains("Reloaded: context-pilot")
        })
        .unwrap();
    assert_eq!(tui.pid(), Some(pid));
    // And on screen: the marker at the end of the idle conversation, the flash in the bar.
    let screen = tui
        .wait_until("the reload is shown", WAIT, |s| {
            s.contains("Reloaded: context-pilot") && s.contains(" reloaded ")
        })
        .unwrap();
    assert!(
        screen.contains("everything was kept"),
        "{screen}\n{session}"
    );
    tui.quit(WAIT).unwrap();
}

#[test]
fn a_broken_binary_does_not_reload_and_says_why() {
    let repo = git_repo();
    let bin_dir = tempfile::tempdir().unwrap();
    let exe = bin_dir.path().join("context-pilot");
    std::fs::copy(cp_e2e::binary_path(), &exe).unwrap();
    let mut tui = TuiSession::start_exe(&exe, repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    // Replace the binary with one that fails, as a half-finished build would leave it.
    std::fs::remove_file(&exe).unwrap();
    std::fs::write(&exe, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pid = tui.pid().unwrap();
    signal(pid, libc::SIGUSR2);
    let screen = tui.wait_for("Reload failed", WAIT).unwrap();
    assert!(screen.contains("--version failed"), "{screen}");
    assert_eq!(tui.pid(), Some(pid));
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn sigusr2_during_a_blocking_callback_reloads_after_the_batch_and_delivers_once() {
    let server = LlmServer::start().unwrap();
    server.push(anthropic::tool_use_turn(&[(
        "w1",
        "File_write",
        r#"{"file_path": "slow.txt", "content": "x\n"}"#,
    )]));
    server.push(anthropic::text_turn("Written."));
    // The checkpoint says once what changed (a note and Context Pilot's own config: no code,
    // nothing to commit), and the turn ends.
    server.push(anthropic::text_turn("Understood."));
    let repo = git_repo();
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(repo.path(), &[], &env).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    palette(
        &mut tui,
        r#"Callback_upsert action=create name=slow pattern=*.txt script_content="sleep 2; echo slow-callback-finished" blocking=true timeout=20"#,
    );
    wait_callback_saved(repo.path(), "CB1");
    tui.type_text("write slow.txt");
    tui.send(b"\r");
    // The write has started and its blocking callback is running.
    eventually("slow.txt", WAIT, || repo.path().join("slow.txt").exists());
    let pid = tui.pid().unwrap();
    signal(pid, libc::SIGUSR2);
    wait_reloads(repo.path(), 1);
    // The reload waited for the batch: the write's result, with the blocking callback's output,
    // reaches the model exactly once (checked below), from the same pid.
    tui.wait_turn_end(repo.path(), "Understood.", WAIT).unwrap();
    let requests = server.requests();
    let second = &requests[1].raw_body;
    assert_eq!(
        second.matches("slow-callback-finished").count(),
        1,
        "{second}"
    );
    assert_eq!(tui.pid(), Some(pid));
    let last = &requests.last().unwrap().raw_body;
    assert_eq!(
        last.matches("slow-callback-finished").count(),
        1,
        "result delivered twice: {last}"
    );
    tui.quit(WAIT).unwrap();
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn status_field(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap()
}

#[test]
fn twenty_reloads_grow_no_fds_threads_or_memory() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    let pid = tui.pid().unwrap();
    signal(pid, libc::SIGUSR2);
    wait_reloads(repo.path(), 1);
    tui.wait_for("Conversation", WAIT).unwrap();
    // The figures to compare with are those the reloaded process settles at: the same
    // descriptors and threads in two readings in a row (a connection being set up comes and
    // goes), and its memory then.
    let settled = || {
        let mut last = (fd_count(pid), status_field(pid, "Threads:"));
        cp_e2e::eventually(
            "the reloaded TUI's figures settle",
            Duration::from_secs(10),
            || {
                let now = (fd_count(pid), status_field(pid, "Threads:"));
                std::mem::replace(&mut last, now) == now
            },
        );
        (last.0, last.1, status_field(pid, "VmRSS:"))
    };
    let (fds, threads, rss) = settled();
    for n in 2..=21 {
        signal(pid, libc::SIGUSR2);
        wait_reloads(repo.path(), n);
    }
    tui.wait_for("Conversation", WAIT).unwrap();
    assert_eq!(tui.pid(), Some(pid));
    // A process that just started may hold a descriptor or thread for a moment (a connection
    // being set up): what counts is where the figures settle, so poll until they do.
    let figures = || {
        (
            fd_count(pid),
            status_field(pid, "Threads:"),
            status_field(pid, "VmRSS:"),
        )
    };
    // At the limit, the figures as they are: the assertions below say which grew.
    let (fds2, threads2, rss2) = cp_e2e::within(Duration::from_secs(10), || {
        Some(figures()).filter(|now| now.0 <= fds && now.1 <= threads + 1)
    })
    .unwrap_or_else(figures);
    assert!(fds2 <= fds, "fds grew from {fds} to {fds2}");
    assert!(
        threads2 <= threads + 1,
        "threads grew from {threads} to {threads2}"
    );
    assert!(rss2 < rss + 8 * 1024, "RSS grew from {rss} kB to {rss2} kB");
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}

#[test]
fn sigusr2_leaves_the_console_server_running() {
    let repo = git_repo();
    let mut tui = TuiSession::start(repo.path(), &[], &[]).unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    palette(
        &mut tui,
        r#"console_create command="sleep 30" description=sleeper"#,
    );
    tui.wait_for("sleeper", WAIT).unwrap();
    let pid_file = repo.path().join(".context-pilot/run/console-server.pid");
    eventually("the console server's pid file", WAIT, || pid_file.exists());
    let server: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // What `pkill -USR2 -x context-pilot` does to every process of that name.
    signal(server, libc::SIGUSR2);
    // The server still serves: a new console it starts writes its log, and the pid is the same
    // live process (a killed daemon would be gone, or a zombie until init reaps it).
    palette(
        &mut tui,
        r#"console_create command="echo still-served-after-usr2" description=after"#,
    );
    wait_log(repo.path(), "still-served-after-usr2");
    let state = std::fs::read_to_string(format!("/proc/{server}/stat")).unwrap_or_default();
    let state = state
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next();
    assert!(
        matches!(state, Some("S" | "R" | "D")),
        "SIGUSR2 killed the console server (state {state:?})"
    );
    tui.quit(WAIT).unwrap();
}

#[test]
fn a_reload_during_a_tui_workflow_resumes_the_run() {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/tiny.yaml"),
        "name: tiny\nphases:\n  - id: only\n    prompt: Do the only thing.\n    checkpoint:\n      approval_required: true\n",
    )
    .unwrap();
    cp_e2e::git(dir, &["add", "-A"]);
    cp_e2e::git(dir, &["commit", "-q", "-m", "workflow"]);
    let server = LlmServer::start().unwrap();
    server.push(anthropic::tool_use_turn(&[(
        "b1",
        "console_easy_bash",
        r#"{"command": "echo tool-started; sleep 2; echo slept"}"#,
    )]));
    server.push(anthropic::text_turn("Did the only thing."));
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui =
        TuiSession::start(dir, &["run", ".context-pilot/workflows/tiny.yaml"], &env).unwrap();
    server.wait_for_requests(1, WAIT);
    // The reload comes while the phase's tool runs: its console has begun.
    wait_log(dir, "tool-started");
    let pid = tui.pid().unwrap();
    signal(pid, libc::SIGUSR2);
    wait_reloads(dir, 1);
    assert_eq!(tui.pid(), Some(pid));
    // The resumed run re-runs the phase and stops at its approval gate (the file names the
    // block `checkpoint:`, its old name, which still reads).
    tui.wait_for("┌ Approval gate · phase only", WAIT).unwrap();
    tui.send(b"\r"); // Continue
    tui.wait_for("Workflow finished", WAIT).unwrap();
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "the phase ran once before and once after the reload"
    );
    assert!(requests[1].raw_body.contains("Do the only thing."));
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(WAIT).unwrap(), 0);
}
