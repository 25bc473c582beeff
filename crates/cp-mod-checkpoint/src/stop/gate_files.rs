//! Files the gate's own test runs wrote (`.coverage`, `.nyc_output/`, caches, reports) are
//! never the agent's changes.
//!
//! Around each run the gate lists the repository's untracked, non-ignored files; those that
//! appeared during the run are the run's, recorded with a digest of their bytes in
//! `.context-pilot/state/gate-files.json`. A later stop leaves out an untracked entry whose
//! files are all recorded and unchanged since; one the agent then edits (or a new file
//! beside them) is listed again. A file that was there before the run, even if the run
//! rewrote it, stays the agent's. A cache: a lost record only lists those files again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cp_base::{FileLock, Project};
use cp_git::{ChangedFile, FileStatus};
use serde::{Deserialize, Serialize};

use super::fingerprint::Fnv;

const FILE: &str = "gate-files.json";

/// Files remembered at most; past it the record starts again with the latest run's.
const MAX_FILES: usize = 20_000;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    /// Repository root → path (relative, `/`-separated) → digest of its bytes.
    #[serde(default)]
    repos: BTreeMap<String, BTreeMap<String, String>>,
}

/// The record of a project's gate-written files.
pub(crate) struct GateFiles {
    path: PathBuf,
    lock: PathBuf,
}

/// The untracked files of the repository holding a run's directory, before the run.
pub(crate) struct Before {
    repo: PathBuf,
    files: BTreeSet<String>,
}

/// The repository's untracked, non-ignored files (each file, not collapsed to folders).
fn untracked(repo: &Path, under: Option<&str>) -> Option<BTreeSet<String>> {
    let mut cmd = Command::new("git");
    cmd.args(["ls-files", "-z", "--others", "--exclude-standard", "--"]);
    if let Some(under) = under {
        cmd.arg(under);
    }
    let out = cmd
        .current_dir(repo)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(
        out.stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect(),
    )
}

/// A digest of a file's bytes; `None` when it cannot be read.
fn digest(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let mut hash = Fnv::new();
    hash.write(&(bytes.len() as u64).to_le_bytes());
    hash.write(&bytes);
    Some(format!("{:016x}", hash.finish()))
}

impl GateFiles {
    pub(crate) fn new(project: &Project) -> Self {
        Self {
            path: project.dir().join("state").join(FILE),
            lock: project.locks_dir().join(FILE),
        }
    }

    fn load(&self) -> Saved {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Lists the untracked files of the repository holding `cwd`, before a run there.
    pub(crate) fn before(cwd: &Path) -> Option<Before> {
        let out = Command::new("git")
            .args(["rev-parse", "--show-toplevel"])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let repo = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim_end());
        let files = untracked(&repo, None)?;
        Some(Before { repo, files })
    }

    /// Records the untracked files that appeared since `before`: the run's.
    pub(crate) fn record_run(&self, before: &Before) {
        let Some(after) = untracked(&before.repo, None) else {
            return;
        };
        let new: BTreeMap<String, String> = after
            .difference(&before.files)
            .filter_map(|p| digest(&before.repo.join(p)).map(|d| (p.clone(), d)))
            .collect();
        if new.is_empty() {
            return;
        }
        // A warm run and a stop may record at once.
        let _lock = FileLock::acquire(&self.lock)
            .inspect_err(|e| tracing::warn!("gate files recorded without a lock: {e}"));
        let mut saved = self.load();
        let repo = saved
            .repos
            .entry(before.repo.display().to_string())
            .or_default();
        if repo.len() + new.len() > MAX_FILES {
            repo.clear();
        }
        repo.extend(new);
        let written = serde_json::to_vec(&saved)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                if let Some(dir) = self.path.parent() {
                    cp_base::private::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                cp_base::write_atomic(&self.path, &bytes).map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!(path = %self.path.display(), "cannot save the gate's files: {e}");
        }
    }

    /// `files` without the untracked entries the gate's runs wrote and nobody changed since.
    pub(crate) fn without_gate_files(
        &self,
        repo: &Path,
        files: Vec<ChangedFile>,
    ) -> Vec<ChangedFile> {
        let saved = self.load();
        let Some(recorded) = saved.repos.get(&repo.display().to_string()) else {
            return files;
        };
        let unchanged = |path: &str| {
            recorded
                .get(path)
                .is_some_and(|d| digest(&repo.join(path)).as_ref() == Some(d))
        };
        files
            .into_iter()
            .filter(|file| {
                if file.status != FileStatus::Untracked {
                    return true;
                }
                let gate_wrote = if file.path.ends_with('/') {
                    // A folder git lists as one entry: every file in it must be the gate's.
                    untracked(repo, Some(&file.path)).is_some_and(|inside| {
                        !inside.is_empty() && inside.iter().all(|p| unchanged(p))
                    })
                } else {
                    unchanged(&file.path)
                };
                !gate_wrote
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn untracked_entry(path: &str) -> ChangedFile {
        ChangedFile::new(path, FileStatus::Untracked)
    }

    #[test]
    fn what_a_run_wrote_is_left_out_until_someone_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().canonicalize().unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("mine.py"), "x = 1\n").unwrap();
        let project = Project::at(&repo);
        let files = GateFiles::new(&project);
        let before = GateFiles::before(&repo).unwrap();
        // The run writes a file at the root and a folder of reports.
        std::fs::write(repo.join(".coverage"), "data").unwrap();
        std::fs::create_dir_all(repo.join("coverage/lcov")).unwrap();
        std::fs::write(repo.join("coverage/lcov/index.html"), "<html>").unwrap();
        std::fs::write(repo.join("coverage/lcov.info"), "TN:").unwrap();
        files.record_run(&before);
        let listed = || {
            vec![
                untracked_entry("mine.py"),
                untracked_entry(".coverage"),
                untracked_entry("coverage/"),
            ]
        };
        let kept: Vec<String> = files
            .without_gate_files(&repo, listed())
            .into_iter()
            .map(|f| f.path)
            .collect();
        // The file that was there before the run stays the agent's.
        assert_eq!(kept, ["mine.py"]);
        // Changed since the run, or with a new file beside: listed again.
        std::fs::write(repo.join(".coverage"), "edited").unwrap();
        std::fs::write(repo.join("coverage/notes.md"), "mine").unwrap();
        let kept: Vec<String> = files
            .without_gate_files(&repo, listed())
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(kept, ["mine.py", ".coverage", "coverage/"]);
        // Another repository's record does not apply.
        let other = tempfile::tempdir().unwrap();
        assert_eq!(files.without_gate_files(other.path(), listed()).len(), 3);
    }
}
