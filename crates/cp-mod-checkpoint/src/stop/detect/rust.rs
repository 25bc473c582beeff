//! Rust: `Cargo.toml`. A workspace root tests every member (`cargo test --workspace`; a root
//! package's plain `cargo test` would test only itself); a member crate's directory tests
//! that crate, with cargo finding the workspace above it. Always `--no-fail-fast`: cargo
//! otherwise stops at the first failing target, and the tests of every later target (the
//! doctests among them) never run.
//!
//! A crate whose directory is also a Python project (`PyO3` and maturin: `Cargo.toml` beside
//! `pyproject.toml`) usually keeps its tests on the Python side: both suites run.

use super::probe::Probe;
use super::{Found, python};

pub(super) fn detect(probe: &Probe<'_>) -> Option<Found> {
    let manifest = probe.read("Cargo.toml")?;
    let workspace = manifest.lines().any(|l| l.trim() == "[workspace]");
    let cargo = if workspace {
        "cargo test --workspace --no-fail-fast"
    } else {
        "cargo test --no-fail-fast"
    };
    if let Some(py) = python::detect(probe).filter(|_| python::is_python_project(probe)) {
        // Both run whatever the first gives; the run fails when either does.
        return Some(Found::new(
            format!("{cargo}; status=$?; {} && exit $status", py.command),
            "Cargo.toml and a Python project beside it (a Rust crate with Python tests): \
             both suites run",
        ));
    }
    Some(Found::new(cargo, "Cargo.toml (no test command declared)"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::detect;

    #[test]
    fn workspace_root_and_member() {
        assert_eq!(
            detect(&[("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n")]).as_deref(),
            Some("cargo test --workspace --no-fail-fast")
        );
        assert_eq!(
            detect(&[("Cargo.toml", "[package]\nname = \"calc\"\n")]).as_deref(),
            Some("cargo test --no-fail-fast")
        );
    }

    #[test]
    fn a_crate_with_python_tests_runs_both() {
        let files = [
            ("Cargo.toml", "[package]\nname = \"calc\"\n"),
            (
                "pyproject.toml",
                "[build-system]\nbuild-backend = \"maturin\"\n",
            ),
            (".venv/bin/python", ""),
        ];
        assert_eq!(
            detect(&files).as_deref(),
            Some(
                "cargo test --no-fail-fast; status=$?; .venv/bin/python -m pytest && exit $status"
            )
        );
    }
}
