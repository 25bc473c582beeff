//! Finding the test command when none is configured, one file per ecosystem.
//!
//! Each directory given (project root first, then the repository root) is asked in turn.
//! Within a directory, what the project declares wins over a guess from a manifest: a
//! Makefile's `test` target, then `package.json`'s `test` script, then tox's commands, a nox
//! `tests` session or a `runtests.py`; only then Rust (with the Python tests of a crate that
//! has them), Python (pytest), Go. Every result says why it was chosen. The command uses the
//! project's own tools (its virtualenv, its lockfile's package manager) so it runs the way
//! the project's developers run it.
//!
//! When neither directory is a project (a monorepo whose root holds only folders of
//! projects), [`nearest_projects`] finds each changed file's own project instead.

mod go;
mod install;
mod make;
mod nearest;
mod node;
mod probe;
mod python;
mod rust;
mod tox;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub(crate) use install::{install_hint, missing_before_run, venv_bin};
pub(crate) use nearest::nearest_projects;
use probe::Probe;

/// A detected test command and where to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    /// Shell command, run with `sh -c` in `dir`.
    pub(crate) command: String,
    pub(crate) dir: PathBuf,
    /// Why this command: what the project declares, or which manifest it was guessed from.
    pub(crate) why: String,
    /// The environment the project declares for the command where it declares it (tox's
    /// `setenv`), given to the run. A Makefile's exports and npm's configuration need
    /// nothing here: `make` and `npm` apply their own.
    pub(crate) env: Vec<(String, String)>,
}

/// What one directory's files say: the command and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) command: String,
    pub(crate) why: String,
    pub(crate) env: Vec<(String, String)>,
}

impl Found {
    fn new(command: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            why: why.into(),
            env: Vec::new(),
        }
    }
}

/// Looks in each of `dirs` in turn for what declares or suggests the tests. `path_env`
/// replaces `PATH` when deciding whether a tool (uv, poetry, pnpm…) is installed.
pub(crate) fn detect_test_command(dirs: &[&Path], path_env: Option<&OsStr>) -> Option<Detected> {
    dirs.iter().find_map(|dir| {
        let probe = Probe::new(dir, path_env);
        detect_in(&probe).map(|found| Detected {
            command: found.command,
            dir: dir.to_path_buf(),
            why: found.why,
            env: found.env,
        })
    })
}

fn detect_in(probe: &Probe<'_>) -> Option<Found> {
    // Declared first.
    make::detect(probe)
        .or_else(|| node::detect(probe))
        .or_else(|| python::declared(probe))
        // Then guesses from the manifest.
        .or_else(|| rust::detect(probe))
        .or_else(|| python::detect(probe))
        .or_else(|| go::detect(probe))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Writes `files` (parent directories created) into a temp dir and detects there with
    /// `path` as `PATH`.
    pub(crate) fn detect_with_path(files: &[(&str, &str)], path: &OsStr) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let file = dir.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        detect_test_command(&[dir.path()], Some(path)).map(|d| d.command)
    }

    /// Why the command for `files` was chosen.
    pub(crate) fn why(files: &[(&str, &str)]) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let file = dir.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        detect_test_command(&[dir.path()], Some(OsStr::new(""))).map(|d| d.why)
    }

    /// Detects with an empty `PATH`: no optional tool is installed.
    pub(crate) fn detect(files: &[(&str, &str)]) -> Option<String> {
        detect_with_path(files, OsStr::new(""))
    }

    /// A directory holding fake executables named `tools`, for `PATH`.
    pub(crate) fn tools(names: &[&str]) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            let file = dir.path().join(name);
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    #[test]
    fn nothing_to_detect() {
        assert_eq!(detect(&[("README.md", "")]), None);
    }

    #[test]
    fn what_the_project_declares_wins_over_a_manifest_and_says_so() {
        let files = [("Makefile", "test:\n\tpytest\n"), ("go.mod", "module x\n")];
        assert_eq!(detect(&files).as_deref(), Some("make test"));
        assert_eq!(
            why(&files).as_deref(),
            Some("the project declares it: Makefile's `test` target")
        );
        assert_eq!(
            why(&[("go.mod", "module x\n")]).as_deref(),
            Some("go.mod (no test command declared)")
        );
    }

    #[test]
    fn first_directory_wins() {
        let project = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let d = detect_test_command(&[project.path(), repo.path()], None).unwrap();
        assert_eq!(d.dir, repo.path());
        std::fs::write(project.path().join("go.mod"), "").unwrap();
        let d = detect_test_command(&[project.path(), repo.path()], None).unwrap();
        assert_eq!(
            (d.command.as_str(), d.dir.as_path()),
            ("go test ./...", project.path())
        );
    }

    #[test]
    fn on_path_needs_an_executable_file() {
        let bin = tools(&["uv"]);
        std::fs::write(bin.path().join("poetry"), "not executable").unwrap();
        let probe = Probe::new(bin.path(), Some(bin.path().as_os_str()));
        assert!(probe.on_path("uv"));
        assert!(!probe.on_path("poetry"));
        assert!(!probe.on_path("pnpm"));
    }
}
