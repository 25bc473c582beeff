//! In tmux, as a person would run it: quitting restores the terminal exactly (`stty -a`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux")
        .args(args)
        .output()
        .expect("tmux must be installed (.ci/run installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
}

#[test]
fn quitting_restores_stty_exactly() {
    let repo = cp_e2e::git_repo();
    let dir = repo.path();
    let session = format!("cp-stty-{}", std::process::id());
    let socket = dir.join("tmux.sock");
    let socket = socket.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_context-pilot");
    let script = format!(
        "cd {d}; export XDG_CONFIG_HOME={c}; stty -a > {d}/before.txt; {bin}; stty -a > {d}/after.txt; sleep 30",
        d = dir.display(),
        c = cp_e2e::config_home().display()
    );
    tmux(&[
        "-S",
        socket,
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "120",
        "-y",
        "32",
        "bash",
        "--norc",
        "-c",
        &script,
    ]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let screen = tmux(&["-S", socket, "capture-pane", "-p", "-t", &session]);
        if screen.contains("Conversation") && screen.contains("worker main") {
            break;
        }
        assert!(Instant::now() < deadline, "the TUI did not open:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux(&["-S", socket, "send-keys", "-t", &session, "C-c"]);
    wait_file(&dir.join("after.txt"));
    let before = std::fs::read_to_string(dir.join("before.txt")).unwrap();
    let after = std::fs::read_to_string(dir.join("after.txt")).unwrap();
    tmux(&["-S", socket, "kill-server"]);
    assert!(before.contains("speed"), "stty output missing: {before}");
    assert_eq!(before, after, "the terminal settings changed");
}
