//! When the tests cannot run because something is not installed: what to install, with the
//! command the project's own files name (its lockfile, its manifest's test extras), and the
//! one case seen before any run (`node_modules` absent while `package.json` has
//! dependencies).

use std::path::{Path, PathBuf};

/// Python modules that are test runners, not the project's code.
const PYTHON_RUNNERS: &[&str] = &["pytest", "tox", "nox", "coverage", "xdist", "hypothesis"];

/// How to install what the tests of the project at `dir` need when `tool` is missing, as
/// text with the commands in backticks, e.g. `` `npm ci` `` or `` `uv sync` ``; `None` when
/// the files say nothing useful.
pub(crate) fn install_hint(dir: &Path, tool: &str) -> Option<String> {
    let has = |name: &str| dir.join(name).is_file();
    match tool {
        "node" | "npm" | "npx" => {
            return Some("install Node.js with npm (e.g. `apt-get install nodejs npm`)".into());
        }
        "cargo" | "rustc" => return Some("install Rust with rustup".into()),
        "go" => return Some("install Go (e.g. `apt-get install golang-go`)".into()),
        "make" => return Some("install make (e.g. `apt-get install make`)".into()),
        "python" | "python3" => {
            return Some("install Python 3 (e.g. `apt-get install python3 python3-venv`)".into());
        }
        "uv" => return Some("install uv: `pip install uv`".into()),
        "poetry" => return Some("install Poetry: `pip install poetry`".into()),
        _ => {}
    }
    let python = PYTHON_RUNNERS.contains(&tool)
        || (!has("package.json") && (has("pyproject.toml") || has("setup.py")));
    if python {
        return Some(python_install(dir, tool));
    }
    has("package.json").then(|| {
        let install = node_install(dir);
        if tool == "node_modules" || declares(dir, tool) {
            format!("`{install}`")
        } else {
            // A program no dependency provides: the package usually has its name.
            format!(
                "`{install}`, and if no dependency provides `{tool}`: `npm install --save-dev {tool}`"
            )
        }
    })
}

/// Whether `package.json` lists `name` among its dependencies.
fn declares(dir: &Path, name: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|key| json.get(key).and_then(|d| d.get(name)).is_some())
}

/// `npm ci`, `pnpm install --frozen-lockfile`, … from the lockfile.
fn node_install(dir: &Path) -> String {
    let has = |name: &str| dir.join(name).is_file();
    if has("pnpm-lock.yaml") {
        "pnpm install --frozen-lockfile"
    } else if has("yarn.lock") {
        "yarn install --frozen-lockfile"
    } else if has("bun.lock") || has("bun.lockb") {
        "bun install"
    } else if has("package-lock.json") || has("npm-shrinkwrap.json") {
        "npm ci"
    } else {
        "npm install"
    }
    .to_owned()
}

/// Names declared in a TOML table of `pyproject` (`[dependency-groups]`,
/// `[project.optional-dependencies]`): the keys of its `name = [` lines.
fn table_keys(pyproject: &str, table: &str) -> Vec<String> {
    let mut inside = false;
    let mut keys = Vec::new();
    for line in pyproject.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && !trimmed.starts_with("[[") && trimmed.ends_with(']') {
            inside = trimmed == format!("[{table}]");
            continue;
        }
        if inside && let Some((key, _)) = trimmed.split_once('=') {
            keys.push(key.trim().trim_matches('"').to_owned());
        }
    }
    keys
}

/// The test dependencies' name among `names`, by the usual spellings.
fn test_name(names: &[String]) -> Option<&'static str> {
    ["test", "tests", "testing", "dev"]
        .into_iter()
        .find(|n| names.iter().any(|name| name == n))
}

/// `uv sync`, `poetry install`, or a venv with the project and its test dependencies: a
/// PEP 735 dependency group (`pip install --group`, pip 25.1 or later) or an extra
/// (`.[test]`), as hint text with the commands in backticks.
fn python_install(dir: &Path, tool: &str) -> String {
    let has = |name: &str| dir.join(name).is_file();
    let pyproject = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap_or_default();
    let group = test_name(&table_keys(&pyproject, "dependency-groups"));
    if has("uv.lock") {
        // uv installs the `dev` group by default; another group is asked for.
        return match group {
            Some(group) if group != "dev" => format!("`uv sync --group {group}`"),
            _ => "`uv sync`".into(),
        };
    }
    if has("poetry.lock") {
        return "`poetry install`".into();
    }
    let pip = if has(".venv/bin/python") {
        ".venv/bin/pip".to_owned()
    } else if has("venv/bin/python") {
        "venv/bin/pip".to_owned()
    } else {
        "python3 -m venv .venv && .venv/bin/pip".to_owned()
    };
    let extra = test_name(&table_keys(&pyproject, "project.optional-dependencies"));
    let requirements = [
        "requirements-test.txt",
        "requirements-dev.txt",
        "requirements.txt",
    ]
    .into_iter()
    .find(|r| has(r));
    let project = has("pyproject.toml") || has("setup.py");
    match (group, extra, requirements) {
        (Some(group), _, _) => {
            let bare = pip.rsplit(" && ").next().unwrap_or(&pip);
            format!(
                "`{pip} install -U 'pip>=25.1' && {bare} install -e . --group {group}` \
                 (dependency groups need pip 25.1 or later), or `uv sync --group {group}`"
            )
        }
        (_, Some(extra), _) if project => format!("`{pip} install -e '.[{extra}]'`"),
        (_, _, Some(requirements)) => format!("`{pip} install -r {requirements} {tool}`"),
        _ if project => format!("`{pip} install -e . {tool}`"),
        _ => format!("`{pip} install {tool}`"),
    }
}

/// Seen without running anything: `package.json` lists dependencies and no `node_modules`
/// is in `dir` or above it (workspaces install theirs at the root). Returns the evidence.
pub(crate) fn missing_before_run(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let has_deps = ["dependencies", "devDependencies"].iter().any(|key| {
        json.get(key)
            .and_then(serde_json::Value::as_object)
            .is_some_and(|deps| !deps.is_empty())
    });
    let installed = dir.ancestors().any(|d| d.join("node_modules").is_dir());
    (has_deps && !installed).then(|| {
        "package.json lists dependencies, and there is no node_modules folder: they are not \
         installed"
            .to_owned()
    })
}

/// The `bin` folder of the project's venv, put first on the tests' `PATH` (as if it were
/// activated), so a declared `make test` that runs `python -m unittest` uses the project's
/// Python.
pub(crate) fn venv_bin(dir: &Path) -> Option<PathBuf> {
    [".venv", "venv"]
        .into_iter()
        .map(|v| dir.join(v).join("bin"))
        .find(|bin| bin.join("python").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let file = dir.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        dir
    }

    #[test]
    fn node_hints_follow_the_lockfile() {
        let pkg = r#"{"devDependencies": {"jest": "^29"}}"#;
        let npm = dir_with(&[("package.json", pkg), ("package-lock.json", "{}")]);
        assert_eq!(
            install_hint(npm.path(), "jest").as_deref(),
            Some("`npm ci`")
        );
        assert_eq!(
            install_hint(npm.path(), "c8").as_deref(),
            Some("`npm ci`, and if no dependency provides `c8`: `npm install --save-dev c8`")
        );
        let pnpm = dir_with(&[("package.json", pkg), ("pnpm-lock.yaml", "")]);
        assert_eq!(
            install_hint(pnpm.path(), "jest").as_deref(),
            Some("`pnpm install --frozen-lockfile`")
        );
        assert!(missing_before_run(npm.path()).is_some());
        std::fs::create_dir(npm.path().join("node_modules")).unwrap();
        assert!(missing_before_run(npm.path()).is_none());
        let no_deps = dir_with(&[("package.json", r#"{"scripts": {"test": "node --test"}}"#)]);
        assert!(missing_before_run(no_deps.path()).is_none());
    }

    #[test]
    fn python_hints_follow_the_project_files() {
        let uv = dir_with(&[("pyproject.toml", ""), ("uv.lock", "")]);
        assert_eq!(
            install_hint(uv.path(), "pytest").as_deref(),
            Some("`uv sync`")
        );
        let extras = dir_with(&[(
            "pyproject.toml",
            "[project.optional-dependencies]\ntest = [\"pytest\"]\n",
        )]);
        assert_eq!(
            install_hint(extras.path(), "pytest").as_deref(),
            Some("`python3 -m venv .venv && .venv/bin/pip install -e '.[test]'`")
        );
        // toolz 1.2.0's pyproject.toml declares its test dependencies as a PEP 735 group:
        // `pip install -e '.[test]'` fails there ("does not provide the extra 'test'").
        let groups = dir_with(&[(
            "pyproject.toml",
            "[project]\nname = \"toolz\"\n\n[dependency-groups]\ntest = [\n  \"coverage\",\n  \"pytest\",\n]\n",
        )]);
        assert_eq!(
            install_hint(groups.path(), "pytest").as_deref(),
            Some(
                "`python3 -m venv .venv && .venv/bin/pip install -U 'pip>=25.1' && \
                 .venv/bin/pip install -e . --group test` (dependency groups need pip 25.1 or \
                 later), or `uv sync --group test`"
            )
        );
        std::fs::write(groups.path().join("uv.lock"), "").unwrap();
        assert_eq!(
            install_hint(groups.path(), "pytest").as_deref(),
            Some("`uv sync --group test`")
        );
        // A `test =` line elsewhere (a tool's table) is not an extra.
        let tool_table = dir_with(&[
            ("pyproject.toml", "[tool.hatch.envs]\ntest = \"x\"\n"),
            (".venv/bin/python", ""),
        ]);
        assert_eq!(
            install_hint(tool_table.path(), "pytest").as_deref(),
            Some("`.venv/bin/pip install -e . pytest`")
        );
        let plain = dir_with(&[("setup.py", ""), (".venv/bin/python", "")]);
        assert_eq!(
            install_hint(plain.path(), "pytest").as_deref(),
            Some("`.venv/bin/pip install -e . pytest`")
        );
        assert_eq!(venv_bin(plain.path()), Some(plain.path().join(".venv/bin")));
    }
}
