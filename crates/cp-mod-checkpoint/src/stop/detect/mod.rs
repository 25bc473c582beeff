//! Guessing the test command when none is configured, one file per ecosystem.
//!
//! Each directory given (project root first, then the repository root) is asked in turn;
//! within a directory the most specific manifest wins: Rust, Node, Python, Go, and a
//! Makefile's `test` target only when nothing more specific applies. The command uses the
//! project's own tools (its virtualenv, its lockfile's package manager) so it runs the way
//! the project's developers run it.
//!
//! When neither directory is a project (a monorepo whose root holds only folders of
//! projects), [`nearest_projects`] finds each changed file's own project instead.

mod go;
mod make;
mod nearest;
mod node;
mod probe;
mod python;
mod rust;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub(crate) use nearest::nearest_projects;
use probe::Probe;

/// A detected test command and where to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    /// Shell command, run with `sh -c` in `dir`.
    pub(crate) command: String,
    pub(crate) dir: PathBuf,
}

/// Looks in each of `dirs` in turn for a manifest that names the test runner. `path_env`
/// replaces `PATH` when deciding whether a tool (uv, poetry, pnpm…) is installed.
pub(crate) fn detect_test_command(dirs: &[&Path], path_env: Option<&OsStr>) -> Option<Detected> {
    dirs.iter().find_map(|dir| {
        let probe = Probe::new(dir, path_env);
        detect_in(&probe).map(|command| Detected {
            command,
            dir: dir.to_path_buf(),
        })
    })
}

fn detect_in(probe: &Probe<'_>) -> Option<String> {
    rust::detect(probe)
        .or_else(|| node::detect(probe))
        .or_else(|| python::detect(probe))
        .or_else(|| go::detect(probe))
        .or_else(|| make::detect(probe))
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
    fn the_specific_manifest_wins_over_a_makefile() {
        assert_eq!(
            detect(&[("Makefile", "test:\n\tpytest\n"), ("go.mod", "module x\n")]).as_deref(),
            Some("go test ./...")
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
