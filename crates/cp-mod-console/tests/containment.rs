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
