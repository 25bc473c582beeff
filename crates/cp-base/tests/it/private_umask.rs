//! The private helpers under `umask 022`, the umask most users have: what they create under
//! `run/`, `logs/` and `state/` is 0700/0600 all the same. The umask is process-wide, so the
//! test re-runs itself in a child started through `sh -c 'umask 022; exec …'`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use cp_base::{FileLock, private, write_atomic};

/// Set in the child that runs the checks.
const CHILD: &str = "CP_PRIVATE_UMASK_CHILD";
const TEST: &str = "private_umask::private_files_and_dirs_ignore_a_loose_umask";

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn private_files_and_dirs_ignore_a_loose_umask() {
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().unwrap();
        let out = Command::new("sh")
            .arg("-c")
            .arg("umask 022; exec \"$0\" \"$@\"")
            .arg(exe)
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the check under umask 022 failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dot = tmp.path().join(".context-pilot");
    // Control: the umask really is 022 here.
    let control = tmp.path().join("control");
    fs::create_dir(&control).unwrap();
    assert_eq!(mode(&control), 0o755);

    private::create_dir_all(&dot.join("run/consoles")).unwrap();
    let _lock = FileLock::acquire(&dot.join("run/locks/a.lock")).unwrap();
    let _hook_lock = FileLock::acquire(&dot.join("state/main/.hook.lock")).unwrap();
    write_atomic(&dot.join("state/other/session.json"), b"{}").unwrap();
    let log = dot.join("logs/context-pilot.log");
    private::create_dir_all(log.parent().unwrap()).unwrap();
    private::open_options(&log)
        .append(true)
        .create(true)
        .open(&log)
        .unwrap();
    // Not private: the ordinary modes.
    write_atomic(&dot.join("config.json"), b"{}").unwrap();

    for dir in [
        "run",
        "run/consoles",
        "run/locks",
        "state",
        "state/main",
        "state/other",
        "logs",
    ] {
        assert_eq!(mode(&dot.join(dir)), 0o700, "{dir}");
    }
    for file in [
        "run/locks/a.lock",
        "state/main/.hook.lock",
        "state/other/session.json",
        "logs/context-pilot.log",
    ] {
        assert_eq!(mode(&dot.join(file)), 0o600, "{file}");
    }
    assert_eq!(mode(&dot), 0o755);
    assert_eq!(mode(&dot.join("config.json")), 0o644);
}
