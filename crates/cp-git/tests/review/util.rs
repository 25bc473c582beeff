//! Repositories in temp directories, git run directly, and the repository state the
//! acceptance compares (`git status --porcelain=v2` and `git ls-files -s`).

use std::path::Path;
use std::process::Command;

use cp_git::{FileDiff, Git};

pub const G: Git = Git { path_env: None };

/// Runs git in `dir` (identity set, failures fail the test); returns its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit of `files` (path, bytes).
pub fn repo(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@t.invalid"]);
    git(root, &["config", "commit.gpgsign", "false"]);
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "--allow-empty", "-m", "first"]);
    dir
}

pub fn write(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
}

/// `git status --porcelain=v2` and `git ls-files -s`: what must not change when an action
/// is refused.
pub fn state(root: &Path) -> (String, String) {
    (
        git(root, &["status", "--porcelain=v2", "--untracked-files=all"]),
        git(root, &["ls-files", "-s"]),
    )
}

/// The changes as the panel reads them.
pub fn files(root: &Path) -> Vec<FileDiff> {
    G.diff(root).unwrap()
}

/// The file at `path` in the reading.
pub fn file(root: &Path, path: &str) -> FileDiff {
    files(root)
        .into_iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} is not listed: {:?}", paths(root)))
}

pub fn paths(root: &Path) -> Vec<String> {
    files(root).into_iter().map(|f| f.path).collect()
}

/// `lines` lines `line N` (`\n`-ended), with `edit` applied to some.
pub fn numbered(lines: usize, eol: &str, edit: impl Fn(usize) -> Option<String>) -> Vec<u8> {
    let mut out = String::new();
    for i in 1..=lines {
        out.push_str(&edit(i).unwrap_or_else(|| format!("line {i}")));
        out.push_str(eol);
    }
    out.into_bytes()
}
