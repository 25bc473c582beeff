//! What several groups set up or time the same way: the projects they measure in, a hook
//! process fed its payload on stdin, and `git status` as the reference beside a measurement.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::stats::ms;

/// A repository with `src/greet.sh` (`echo hello`) committed: the project a hook per edit
/// runs in. The repository (removed on drop) and its canonical root.
pub fn greet_project() -> (tempfile::TempDir, PathBuf) {
    let repo = cp_e2e::git_repo();
    let root = repo.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/greet.sh"), "echo hello\n").unwrap();
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-qm", "init"]);
    (repo, root)
}

/// A repository with `files` small files committed, a hundred a folder
/// (`src/d<i / 100>/f<i>.rs`). The repository (removed on drop) and its canonical root.
pub fn many_files_project(files: usize) -> (tempfile::TempDir, PathBuf) {
    let repo = cp_e2e::git_repo();
    let root = repo.path().canonicalize().unwrap();
    for i in 0..files {
        let dir = root.join(format!("src/d{}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), format!("// file {i}\n")).unwrap();
    }
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-q", "-m", "files"]);
    (repo, root)
}

/// Runs `command` with `input` on its stdin and its output thrown away, as an agent CLI runs a
/// hook; it must succeed. How long it took, in ms.
pub fn time_with_stdin(command: &mut Command, input: &str) -> f64 {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "{command:?}");
    ms(started.elapsed())
}

/// How long `git status --porcelain -uall` takes in `root`, in ms: the reference a group
/// times right after its own measurement, so both see the same machine load.
pub fn time_git_status(root: &Path) -> f64 {
    let started = Instant::now();
    let out = Command::new("git")
        .args(["status", "--porcelain", "-uall"])
        .current_dir(root)
        .output()
        .unwrap();
    let took = ms(started.elapsed());
    assert!(out.status.success());
    took
}
