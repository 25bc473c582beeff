//! Real git repositories in temp dirs.

use std::path::Path;
use std::process::Command;

/// A new git repository with an identity configured, in a temp dir removed on drop.
///
/// # Panics
/// When git cannot create the repository: the test cannot run without one.
pub fn git_repo() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("cp-e2e-")
        .tempdir()
        .unwrap_or_else(|e| panic!("tempdir: {e}"));
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(
        dir.path(),
        &["config", "user.email", "e2e@context-pilot.invalid"],
    );
    git(dir.path(), &["config", "user.name", "Context Pilot E2E"]);
    git(dir.path(), &["config", "commit.gpgsign", "false"]);
    dir
}

/// Runs git in `dir` and returns its stdout.
///
/// # Panics
/// When git fails: a test's setup step failing should fail the test loudly.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
