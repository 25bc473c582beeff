//! Real git repositories in temp dirs for this crate's unit tests.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir`; a failure fails the test.
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stages everything and commits it.
pub(crate) fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

/// A repository on `main` with an identity and `clean.txt` and `edited.txt` committed.
pub(crate) fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["config", "user.name", "T"]);
    git(dir.path(), &["config", "user.email", "t@example.invalid"]);
    git(dir.path(), &["config", "commit.gpgsign", "false"]);
    std::fs::write(dir.path().join("clean.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("edited.txt"), "one\n").unwrap();
    commit_all(dir.path(), "init");
    dir
}
