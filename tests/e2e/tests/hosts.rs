//! The test hosts themselves: two hosts answer over real OpenSSH, each its own user's HOME,
//! the binary and git there; and nothing of them is left once dropped, or once the test
//! process that started them is killed with SIGKILL.

use std::process::{Command, Stdio};
use std::time::Duration;

use cp_e2e::{TestHost, eventually_with};

fn netns_exists(name: &str) -> bool {
    Command::new("ip")
        .args(["netns", "list"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .any(|n| n == name)
        })
}

#[test]
fn two_hosts_answer_over_ssh_and_leave_nothing_when_dropped() {
    if !TestHost::can_start() {
        return;
    }
    let a = TestHost::start("host-a");
    let b = TestHost::start("host-b");
    assert_ne!(a.address(), b.address());
    let out = a.ssh(&[
        "echo",
        "$HOME;",
        "id",
        "-u;",
        "git",
        "--version;",
        "context-pilot",
        "--version",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(a.home().display().to_string().as_str()));
    assert_ne!(lines.next(), Some("0"), "sshd runs as an ordinary user");
    assert!(
        lines.next().is_some_and(|l| l.starts_with("git version")),
        "{text}"
    );
    assert!(
        lines.next().is_some_and(|l| l.starts_with("context-pilot")),
        "{text}"
    );
    let out = b.ssh(&["echo", "$HOME"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        b.home().display().to_string()
    );
    assert!(a.leftovers().is_empty(), "{:?}", a.leftovers());
    let names = [a.netns().to_owned(), b.netns().to_owned()];
    drop(a);
    drop(b);
    for name in &names {
        assert!(!netns_exists(name), "{name} is left");
    }
}

/// Started by [`a_killed_test_leaves_no_host_behind`] only: starts a host, says its
/// namespace, and waits to be killed.
#[test]
#[ignore = "a helper process, started by name"]
fn helper_host_until_killed() {
    let host = TestHost::start("doomed");
    println!("NETNS {}", host.netns());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_killed_test_leaves_no_host_behind() {
    if !TestHost::can_start() {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "helper_host_until_killed",
            "--nocapture",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let netns = loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(n > 0, "the helper ended before it said its namespace");
        if let Some(name) = line.trim().strip_prefix("NETNS ") {
            break name.to_owned();
        }
    };
    assert!(netns_exists(&netns));
    child.kill().unwrap();
    child.wait().unwrap();
    eventually_with(
        "the killed test's host torn down",
        Duration::from_secs(20),
        || !netns_exists(&netns),
        || format!("{netns} is still there"),
    );
}
