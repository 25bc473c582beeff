//! Python: pytest, run through the project's own environment.
//!
//! Always `python -m pytest`, never bare `pytest`: `-m` puts the working directory on
//! `sys.path`, so a flat layout (package `calc/` at the root, `tests/` beside it) imports
//! `calc`, where bare `pytest` fails with `ModuleNotFoundError` (issue 15). In order:
//! a `.venv`/`venv` → its interpreter; `uv.lock` with `uv` installed → `uv run`;
//! `poetry.lock` with `poetry` installed → `poetry run`; otherwise `python3`.

use super::probe::Probe;

/// Files that make a directory a Python project.
const MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pytest.ini",
    "tox.ini",
    "conftest.py",
    "uv.lock",
    "poetry.lock",
];

pub(super) fn detect(probe: &Probe<'_>) -> Option<String> {
    if !MARKERS.iter().any(|m| probe.has_file(m)) {
        return None;
    }
    let venv = [".venv", "venv"]
        .into_iter()
        .find(|v| probe.has_file(&format!("{v}/bin/python")));
    Some(if let Some(venv) = venv {
        format!("{venv}/bin/python -m pytest")
    } else if probe.has_file("uv.lock") && probe.on_path("uv") {
        "uv run python -m pytest".to_owned()
    } else if probe.has_file("poetry.lock") && probe.on_path("poetry") {
        "poetry run python -m pytest".to_owned()
    } else {
        "python3 -m pytest".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{detect, detect_with_path, tools};

    const PYPROJECT: &str =
        "[project]\nname = \"calc\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";

    #[test]
    fn plain_pyproject_uses_python3_module() {
        assert_eq!(
            detect(&[("pyproject.toml", PYPROJECT)]).as_deref(),
            Some("python3 -m pytest")
        );
        assert_eq!(
            detect(&[("setup.py", "")]).as_deref(),
            Some("python3 -m pytest")
        );
    }

    #[test]
    fn the_project_venv_comes_first() {
        let venv = [("pyproject.toml", PYPROJECT), (".venv/bin/python", "")];
        assert_eq!(detect(&venv).as_deref(), Some(".venv/bin/python -m pytest"));
        let named = [("setup.cfg", ""), ("venv/bin/python", "")];
        assert_eq!(detect(&named).as_deref(), Some("venv/bin/python -m pytest"));
        // Even when uv is installed, an existing environment is the project's own.
        let bin = tools(&["uv"]);
        let with_lock = [
            ("pyproject.toml", PYPROJECT),
            ("uv.lock", ""),
            (".venv/bin/python", ""),
        ];
        assert_eq!(
            detect_with_path(&with_lock, bin.path().as_os_str()).as_deref(),
            Some(".venv/bin/python -m pytest")
        );
    }

    #[test]
    fn uv_and_poetry_only_when_installed() {
        let bin = tools(&["uv", "poetry"]);
        let path = bin.path().as_os_str();
        let uv = [("pyproject.toml", PYPROJECT), ("uv.lock", "")];
        assert_eq!(
            detect_with_path(&uv, path).as_deref(),
            Some("uv run python -m pytest")
        );
        assert_eq!(detect(&uv).as_deref(), Some("python3 -m pytest"));
        let poetry = [("pyproject.toml", PYPROJECT), ("poetry.lock", "")];
        assert_eq!(
            detect_with_path(&poetry, path).as_deref(),
            Some("poetry run python -m pytest")
        );
        assert_eq!(detect(&poetry).as_deref(), Some("python3 -m pytest"));
    }
}
