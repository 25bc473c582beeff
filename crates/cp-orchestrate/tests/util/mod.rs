//! Shared helpers: real git repositories in temp dirs.

#![expect(
    clippy::unwrap_used,
    reason = "test setup: a failed step must fail the test loudly"
)]
#![allow(
    dead_code,
    reason = "shared by several test binaries; each uses a part of it"
)]

pub mod scripted;
pub mod tester;
pub mod writers;

use std::path::PathBuf;
use std::process::Command;

use cp_base::Project;

/// A git repository in a temp dir.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// `git init` with an identity, and nothing committed.
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = Self { dir };
        repo.git(&["init", "-q"]);
        repo.git(&["config", "user.name", "Checkpoint Test"]);
        repo.git(&["config", "user.email", "test@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// A repository with `files` committed.
    pub fn with_commit(files: &[(&str, &str)]) -> Self {
        let repo = Self::empty();
        for (path, content) in files {
            repo.write(path, content);
        }
        repo.commit_all("initial");
        repo
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(self.dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn remove(&self, path: &str) {
        std::fs::remove_file(self.dir.path().join(path)).unwrap();
    }

    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    pub fn project(&self) -> Project {
        Project::at(self.root())
    }
}
