//! Python: pytest, run through the project's own environment.
//!
//! Always `python -m pytest`, never bare `pytest`: `-m` puts the working directory on
//! `sys.path`, so a flat layout (package `calc/` at the root, `tests/` beside it) imports
//! `calc`, where bare `pytest` fails with `ModuleNotFoundError` (issue 15). In order:
//! a `.venv`/`venv` → its interpreter; `uv.lock` with `uv` installed → `uv run`;
//! `poetry.lock` with `poetry` installed → `poetry run`; otherwise `python3`.
//!
//! A directory with no project file is a Python project too when its `tests/` (or `test/`)
//! folder holds pytest files (`test_*.py`, `*_test.py`) and a pytest is there to run them:
//! the project's venv's (`python -m pytest` through it), or a `pytest` on `PATH`, run as
//! people run it there.

use std::fmt::Write;
use std::path::Path;

use super::Found;
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

/// Folders whose pytest files make a project of the directory above them.
const TEST_DIRS: &[&str] = &["tests", "test"];

/// How deep below a test folder pytest files are looked for (`tests/unit/api/test_x.py`).
const TEST_DIR_DEPTH: usize = 3;

/// The project's venv (`.venv` or `venv`), when it has an interpreter.
pub(super) fn venv(probe: &Probe<'_>) -> Option<&'static str> {
    [".venv", "venv"]
        .into_iter()
        .find(|v| probe.has_file(&format!("{v}/bin/python")))
}

/// Whether a project file says the directory is a Python project.
pub(super) fn is_python_project(probe: &Probe<'_>) -> bool {
    ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .any(|m| probe.has_file(m))
}

/// The interpreter of the project: its venv's, else `python3`.
fn python(probe: &Probe<'_>) -> String {
    venv(probe).map_or_else(|| "python3".to_owned(), |v| format!("{v}/bin/python"))
}

/// What the project declares: tox's `[testenv]` commands (run in the project's own
/// environment, as its developers run them day to day, instead of building tox's), a nox
/// `tests` session when nox is installed, or its own `runtests.py`.
pub(super) fn declared(probe: &Probe<'_>) -> Option<Found> {
    let tox_python = if venv(probe).is_some() {
        "python"
    } else {
        "python3"
    };
    if let Some(tox) = probe
        .read("tox.ini")
        .and_then(|t| super::tox::testenv(&t, tox_python))
    {
        let run_with = venv(probe).map_or_else(|| "python3".to_owned(), |v| format!("its {v}"));
        let mut why =
            format!("the project declares it: tox.ini's [testenv] commands, run with {run_with}");
        if !tox.env.is_empty() {
            let names: Vec<&str> = tox.env.iter().map(|(k, _)| k.as_str()).collect();
            let _ = write!(why, ", with its setenv ({})", names.join(", "));
        }
        let mut found = Found::new(tox.command, why);
        found.env = tox.env;
        return Some(found);
    }
    if let Some(text) = probe.read("noxfile.py") {
        let session = ["tests", "test"]
            .into_iter()
            .find(|s| text.contains(&format!("def {s}(")));
        let nox = venv(probe)
            .map(|v| format!("{v}/bin/nox"))
            .filter(|n| probe.has_file(n))
            .or_else(|| probe.on_path("nox").then(|| "nox".to_owned()));
        if let (Some(session), Some(nox)) = (session, nox) {
            return Some(Found::new(
                format!("{nox} -r -s {session}"),
                format!("the project declares it: noxfile.py's `{session}` session"),
            ));
        }
    }
    if probe.has_file("runtests.py") {
        return Some(Found::new(
            format!("{} runtests.py", python(probe)),
            "the project declares it: its runtests.py",
        ));
    }
    None
}

pub(super) fn detect(probe: &Probe<'_>) -> Option<Found> {
    let venv = venv(probe);
    if !MARKERS.iter().any(|m| probe.has_file(m)) {
        return detect_without_manifest(probe, venv)
            .map(|c| Found::new(c, "pytest files in a tests folder (no project file)"));
    }
    let why = "a Python project file (no test command declared): pytest";
    Some(Found::new(
        if let Some(venv) = venv {
            format!("{venv}/bin/python -m pytest")
        } else if probe.has_file("uv.lock") && probe.on_path("uv") {
            "uv run python -m pytest".to_owned()
        } else if probe.has_file("poetry.lock") && probe.on_path("poetry") {
            "poetry run python -m pytest".to_owned()
        } else {
            "python3 -m pytest".to_owned()
        },
        why,
    ))
}

/// No project file: pytest files in a test folder, and a pytest to run them.
fn detect_without_manifest(probe: &Probe<'_>, venv: Option<&str>) -> Option<String> {
    if !TEST_DIRS
        .iter()
        .any(|d| has_pytest_files(&probe.dir.join(d), TEST_DIR_DEPTH))
    {
        return None;
    }
    match venv {
        Some(venv) if probe.has_file(&format!("{venv}/bin/pytest")) => {
            Some(format!("{venv}/bin/python -m pytest"))
        }
        _ if probe.on_path("pytest") => Some("pytest".to_owned()),
        _ => None,
    }
}

/// Whether `dir` or a folder below it (down to `depth` levels) holds a pytest file.
fn has_pytest_files(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        match entry.file_type() {
            Ok(t) if t.is_file() => is_pytest_file(&name),
            Ok(t) if t.is_dir() && depth > 0 && !name.starts_with('.') => {
                has_pytest_files(&entry.path(), depth - 1)
            }
            _ => false,
        }
    })
}

/// pytest's default `python_files`: `test_*.py` and `*_test.py`.
fn is_pytest_file(name: &str) -> bool {
    name.strip_suffix(".py")
        .is_some_and(|stem| stem.starts_with("test_") || stem.ends_with("_test"))
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

    #[test]
    fn tox_commands_run_in_the_project_environment() {
        let ini = "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands =\n    {envpython} -m unittest {posargs}\n    - python -m doctest README.rst\n\n[testenv:lint]\ncommands = ruff check\n";
        let venv = [
            ("tox.ini", ini),
            ("pyproject.toml", PYPROJECT),
            (".venv/bin/python", ""),
        ];
        assert_eq!(
            detect(&venv).as_deref(),
            Some("python -m unittest && python -m doctest README.rst")
        );
        assert_eq!(
            detect(&[("tox.ini", "[testenv]\ncommands = pytest {posargs:tests}\n")]).as_deref(),
            Some("pytest tests")
        );
        // What cannot be translated is not guessed at.
        assert_eq!(
            detect(&[
                ("tox.ini", "[testenv]\ncommands = {env:RUNNER} x\n"),
                ("setup.py", "")
            ])
            .as_deref(),
            Some("python3 -m pytest")
        );
    }

    #[test]
    fn nox_when_installed_and_runtests() {
        let bin = tools(&["nox"]);
        let nox = [
            (
                "noxfile.py",
                "import nox\n\n@nox.session\ndef tests(session):\n    pass\n",
            ),
            ("pyproject.toml", PYPROJECT),
        ];
        assert_eq!(
            detect_with_path(&nox, bin.path().as_os_str()).as_deref(),
            Some("nox -r -s tests")
        );
        assert_eq!(detect(&nox).as_deref(), Some("python3 -m pytest"));
        assert_eq!(
            detect(&[
                ("runtests.py", ""),
                ("setup.py", ""),
                ("venv/bin/python", "")
            ])
            .as_deref(),
            Some("venv/bin/python runtests.py")
        );
    }

    #[test]
    fn a_tests_folder_without_a_project_file_needs_a_pytest() {
        let layout = [("calc.py", ""), ("tests/test_calc.py", "")];
        assert_eq!(detect(&layout), None, "no pytest anywhere");
        let bin = tools(&["pytest"]);
        assert_eq!(
            detect_with_path(&layout, bin.path().as_os_str()).as_deref(),
            Some("pytest")
        );
        let venv = [
            ("test/unit/calc_test.py", ""),
            (".venv/bin/python", ""),
            (".venv/bin/pytest", ""),
        ];
        assert_eq!(detect(&venv).as_deref(), Some(".venv/bin/python -m pytest"));
        // A venv without pytest does not make a test suite runnable.
        let no_pytest = [("tests/test_calc.py", ""), (".venv/bin/python", "")];
        assert_eq!(detect(&no_pytest), None);
        // Python files that are not pytest's are not a test suite.
        let helpers = [
            ("tests/helpers.py", ""),
            (".venv/bin/python", ""),
            (".venv/bin/pytest", ""),
        ];
        assert_eq!(detect(&helpers), None);
    }
}
