//! What a session may leave behind: no process after a timeout or a kill (even one that
//! left the process group with `setsid`), a bounded log, private files, and a clear error
//! when the server is at its limit.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns also fail loudly on any unexpected error"
)]

mod util;

use std::time::Duration;

use cp_mod_console::{KillCause, SessionStatus, SpawnSpec};
use util::{Project, Stray, eventually};

const LONG: Duration = Duration::from_secs(60);

#[test]
fn a_timeout_ends_a_daemon_that_left_the_group_with_setsid() {
    let p = Project::new();
    let stray = Stray::new();
    let s = p
        .client
        .spawn(SpawnSpec::new(stray.script(), &p.root).timeout(Duration::from_secs(2)))
        .unwrap();
    let done = s.wait_exit(LONG).unwrap();
    assert_eq!(
        done.info.status,
        SessionStatus::Killed {
            cause: KillCause::Timeout
        }
    );
    assert!(
        eventually(LONG, || stray.pids().is_empty()),
        "processes of the timed-out session survive: {:?}",
        stray.pids()
    );
}

#[test]
fn a_kill_ends_a_daemon_that_left_the_group_with_setsid() {
    let p = Project::new();
    let stray = Stray::new();
    let s = p.spawn(&stray.script());
    assert!(
        eventually(LONG, || stray.daemon_running()),
        "the setsid daemon never started"
    );
    let info = s.kill().unwrap();
    assert_eq!(
        info.status,
        SessionStatus::Killed {
            cause: KillCause::Request
        }
    );
    assert!(
        eventually(LONG, || stray.pids().is_empty()),
        "processes of the killed session survive: {:?}",
        stray.pids()
    );
}

#[test]
fn run_files_are_private_even_when_they_existed_with_loose_modes() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let p = Project::new();
    // What an older version left: a world-readable run dir and log.
    let consoles = p.root.join(".context-pilot/run/consoles");
    std::fs::create_dir_all(&consoles).unwrap();
    let old_log = consoles.join("old.log");
    std::fs::write(&old_log, "secret").unwrap();
    for (path, m) in [
        (p.root.join(".context-pilot/run"), 0o755),
        (consoles.clone(), 0o755),
        (old_log.clone(), 0o644),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let s = p.spawn("echo private");
    assert!(s.wait_exit(LONG).unwrap().met);
    let run = p.root.join(".context-pilot/run");
    assert_eq!(mode(&run), 0o700);
    assert_eq!(mode(&consoles), 0o700);
    assert_eq!(mode(&old_log), 0o600);
    let id = s.id();
    for file in [
        consoles.join(format!("{id}.log")),
        consoles.join(format!("{id}.json")),
        run.join("console-server.pid"),
        run.join("console-server.lock"),
        run.join("console-launch.lock"),
        run.join("console-server.log"),
    ] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}
