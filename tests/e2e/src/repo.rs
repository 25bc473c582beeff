//! Real git repositories in temp dirs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

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

/// A git repository in a temp dir (removed on drop) that a test writes, commits and reads
/// through: `git init` with an identity, then the files it is given.
pub struct TempRepo {
    pub dir: tempfile::TempDir,
}

impl TempRepo {
    /// `git init` with an identity, and nothing committed.
    ///
    /// # Panics
    /// When the temp dir or the repository cannot be made.
    #[must_use]
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let repo = Self { dir };
        repo.git(&["init", "-q"]);
        repo.git(&["config", "user.name", "Checkpoint Test"]);
        repo.git(&["config", "user.email", "test@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// A repository with `files` (path, content) committed.
    ///
    /// # Panics
    /// When a file cannot be written or git fails.
    #[must_use]
    pub fn with_commit(files: &[(&str, &str)]) -> Self {
        let repo = Self::empty();
        for (path, content) in files {
            repo.write(path, content);
        }
        repo.commit_all("initial");
        repo
    }

    /// The repository's canonical root.
    ///
    /// # Panics
    /// When the temp dir is gone.
    #[must_use]
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path())
            .unwrap_or_else(|e| panic!("canonicalize {}: {e}", self.dir.path().display()))
    }

    /// Runs git in the repository; its stdout.
    ///
    /// # Panics
    /// When git fails.
    pub fn git(&self, args: &[&str]) -> String {
        git(self.dir.path(), args)
    }

    /// Writes `content` to `path` (relative), making its folders.
    ///
    /// # Panics
    /// When it cannot be written.
    pub fn write(&self, path: &str, content: &str) {
        let full = self.dir.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
        }
        std::fs::write(&full, content).unwrap_or_else(|e| panic!("write {}: {e}", full.display()));
    }

    /// Deletes `path` (relative).
    ///
    /// # Panics
    /// When it cannot be deleted.
    pub fn remove(&self, path: &str) {
        let full = self.dir.path().join(path);
        std::fs::remove_file(&full).unwrap_or_else(|e| panic!("rm {}: {e}", full.display()));
    }

    /// Stages everything and commits it with `message`.
    ///
    /// # Panics
    /// When git fails.
    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }
}

/// pytest and its dependencies as wheels, downloaded once from the Python package index into
/// `target/pytest-wheels` (as `scripts/test.sh` does), for tests that make a venv with
/// pytest. `None` (said on stderr) when they cannot be downloaded.
pub fn pytest_wheels() -> Option<&'static Path> {
    static WHEELS: OnceLock<Option<PathBuf>> = OnceLock::new();
    WHEELS
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pytest-wheels");
            let has_pytest = |dir: &Path| {
                std::fs::read_dir(dir).is_ok_and(|entries| {
                    entries
                        .flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with("pytest-"))
                })
            };
            if !has_pytest(&dir) {
                // Download beside it, then move into place, so a half-done download is
                // never taken for a cache.
                let partial = dir.with_extension(format!("partial-{}", std::process::id()));
                let ok = Command::new("python3")
                    .args(["-m", "pip", "download", "-q", "pytest", "-d"])
                    .arg(&partial)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok || std::fs::rename(&partial, &dir).is_err() && !has_pytest(&dir) {
                    eprintln!("pytest wheels could not be downloaded from PyPI");
                    return None;
                }
            }
            Some(dir)
        })
        .as_deref()
}
