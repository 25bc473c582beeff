//! Guessing the test command when none is configured.

use std::path::{Path, PathBuf};

/// A detected test command and where to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    pub(crate) command: &'static str,
    pub(crate) dir: PathBuf,
}

/// Looks in each of `dirs` in turn (project root first, then the repository root) for a
/// manifest that names the test runner.
pub(crate) fn detect_test_command(dirs: &[&Path]) -> Option<Detected> {
    dirs.iter().find_map(|dir| {
        detect_in(dir).map(|command| Detected {
            command,
            dir: dir.to_path_buf(),
        })
    })
}

fn detect_in(dir: &Path) -> Option<&'static str> {
    if dir.join("Cargo.toml").is_file() {
        return Some("cargo test");
    }
    if dir.join("package.json").is_file() && has_npm_test_script(&dir.join("package.json")) {
        return Some("npm test");
    }
    if dir.join("pyproject.toml").is_file() || dir.join("setup.py").is_file() {
        return Some("pytest");
    }
    if dir.join("go.mod").is_file() {
        return Some("go test ./...");
    }
    None
}

/// `npm init` writes a test script that always fails ("no test specified"); that is not a
/// test suite, and neither is a package.json without one.
fn has_npm_test_script(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        tracing::warn!(path = %path.display(), "package.json does not parse; not running npm test");
        return false;
    };
    json.pointer("/scripts/test")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|script| !script.contains("no test specified"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(files: &[(&str, &str)]) -> Option<&'static str> {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).unwrap();
        }
        detect_test_command(&[dir.path()]).map(|d| d.command)
    }

    #[test]
    fn detects_each_ecosystem() {
        assert_eq!(detect(&[("Cargo.toml", "")]), Some("cargo test"));
        assert_eq!(
            detect(&[("package.json", r#"{"scripts": {"test": "jest"}}"#)]),
            Some("npm test")
        );
        assert_eq!(detect(&[("pyproject.toml", "")]), Some("pytest"));
        assert_eq!(detect(&[("setup.py", "")]), Some("pytest"));
        assert_eq!(detect(&[("go.mod", "module x")]), Some("go test ./..."));
        assert_eq!(detect(&[("README.md", "")]), None);
    }

    #[test]
    fn npm_placeholder_or_missing_test_script_is_not_a_suite() {
        let placeholder = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
        assert_eq!(detect(&[("package.json", placeholder)]), None);
        assert_eq!(detect(&[("package.json", "{}")]), None);
        assert_eq!(detect(&[("package.json", "{broken")]), None);
    }

    #[test]
    fn first_directory_wins() {
        let project = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("Cargo.toml"), "").unwrap();
        let d = detect_test_command(&[project.path(), repo.path()]).unwrap();
        assert_eq!(d.dir, repo.path());
        std::fs::write(project.path().join("go.mod"), "").unwrap();
        let d = detect_test_command(&[project.path(), repo.path()]).unwrap();
        assert_eq!(
            (d.command, d.dir.as_path()),
            ("go test ./...", project.path())
        );
    }
}
