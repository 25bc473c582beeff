//! tox.ini's `[testenv]`, read for a run outside tox in the project's own environment.
//!
//! The gate runs the plain test environment, one with no extra factor (as `py` would be):
//! a line with a factor condition (`coverage: coverage combine`) applies only when its
//! factors are the environment's, so positive conditions are left out and negated ones
//! (`!coverage: pytest`) kept. `setenv`'s variables are given to the run as tox would give
//! them. Substitutions are made as tox makes them: `{posargs}` is empty and
//! `{posargs:default}` its default, `{env:NAME:default}` is the value `setenv` gives `NAME`,
//! else its default, and the directories are the project's (`{toxinidir}` is `.`,
//! `{toxworkdir}` is `.tox`). A substitution with no meaning outside tox gives up: the
//! caller then falls back on a guess rather than run a wrong command.

/// The environment name the gate's run stands for, for `{envname}`.
const ENV_NAME: &str = "py";

/// The commands (joined with `&&`) and the environment of tox.ini's `[testenv]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ToxEnv {
    pub(super) command: String,
    pub(super) env: Vec<(String, String)>,
}

/// The `[testenv]` section's keys, each with its lines (continuations included).
fn section(ini: &str) -> Vec<(String, Vec<String>)> {
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    let mut inside = false;
    for line in ini.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && !line.starts_with([' ', '\t']) {
            inside = trimmed == "[testenv]";
            continue;
        }
        if !inside || trimmed.starts_with('#') || trimmed.starts_with(';') || trimmed.is_empty() {
            continue;
        }
        let continued = line.starts_with([' ', '\t']);
        match (continued, keys.last_mut()) {
            (true, Some((_, lines))) => lines.push(trimmed.to_owned()),
            _ => {
                if let Some((key, value)) = trimmed.split_once('=') {
                    let value = value.trim();
                    let lines = if value.is_empty() {
                        Vec::new()
                    } else {
                        vec![value.to_owned()]
                    };
                    keys.push((key.trim().to_owned(), lines));
                }
            }
        }
    }
    keys
}

/// The line without its factor condition when it applies to the plain environment; `None`
/// when it is for other factors only.
fn for_plain_env(line: &str) -> Option<&str> {
    let Some((condition, rest)) = line.split_once(':') else {
        return Some(line);
    };
    let is_condition = !condition.is_empty()
        && condition
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ',' | '!' | '.'))
        && !rest.starts_with('/');
    if !is_condition {
        return Some(line);
    }
    // `a,b:` is either factor; `a-b:` both; `!a:` not `a`. The plain environment has none,
    // so a condition holds only when one of its alternatives is negated factors alone.
    let holds = condition
        .split(',')
        .any(|alternative| alternative.split('-').all(|factor| factor.starts_with('!')));
    holds.then(|| rest.trim())
}

/// `text` with tox's substitutions made; `None` when one has no meaning outside tox.
fn expand(text: &str, python: &str, env: &[(String, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        // The matching brace: defaults may hold substitutions of their own.
        let mut depth = 1;
        let end = after.char_indices().find_map(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(':') {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let value = match name {
            "posargs" => expand(default.unwrap_or(""), python, env)?,
            "env" => {
                let spec = default?;
                let (var, default) = match spec.split_once(':') {
                    Some((var, default)) => (var, Some(default)),
                    None => (spec, None),
                };
                match env.iter().rev().find(|(k, _)| k == var) {
                    Some((_, value)) => value.clone(),
                    // Unset with no default: what tox's caller would set is not known here.
                    None => expand(default?, python, env)?,
                }
            }
            "envpython" => python.to_owned(),
            "toxinidir" => ".".to_owned(),
            "toxworkdir" => ".tox".to_owned(),
            "envname" => ENV_NAME.to_owned(),
            "/" => "/".to_owned(),
            ":" if default.is_none() => ":".to_owned(),
            _ => return None,
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// tox.ini's `[testenv]` commands and `setenv` for a run with `python` outside tox; `None`
/// when it declares no command or one cannot be made.
pub(super) fn testenv(ini: &str, python: &str) -> Option<ToxEnv> {
    let keys = section(ini);
    let lines = |key: &str| -> Vec<String> {
        keys.iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, lines)| lines.iter())
            .filter_map(|l| for_plain_env(l))
            .map(str::to_owned)
            .collect()
    };
    let mut env: Vec<(String, String)> = Vec::new();
    for line in lines("setenv") {
        let (name, value) = line.split_once('=')?;
        let value = expand(value.trim(), python, &env)?;
        env.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut commands = Vec::new();
    for line in lines("commands") {
        let line = line.trim_start_matches('-').trim();
        let line = line.replace("{toxinidir}/", "").replace("{envbindir}/", "");
        let mut line = expand(&line, python, &env)?;
        if let Some(rest) = line.strip_prefix("python ") {
            line = format!("{python} {rest}");
        }
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if !line.is_empty() {
            commands.push(line);
        }
    }
    (!commands.is_empty()).then(|| ToxEnv {
        command: commands.join(" && "),
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    // pluggy 1.7.0's tox.ini, as published on PyPI.
    const PLUGGY: &str = "[tox]\nenvlist=docs,py{310,311,312,313,314,py3},py{310}-pytestmain\n\n[testenv]\ncommands=\n  {env:_PLUGGY_TOX_CMD:pytest} {posargs}\n  coverage: coverage combine\n  coverage: coverage report -m\n  coverage: coverage xml\nsetenv=\n  _PYTEST_SETUP_SKIP_PLUGGY_DEP=1\n  coverage: _PLUGGY_TOX_CMD=coverage run -m pytest\ndependency_groups=testing\n\n[testenv:benchmark]\ncommands=pytest {posargs:testing/benchmark.py}\n";

    // python-dateutil 4.0.0's tox.ini's [testenv], as published on PyPI.
    const DATEUTIL: &str = "[tox]\nenvlist = py311,\n          coverage\n[testenv]\ndescription = run the unit tests with pytest under {basepython}\nsetenv =\n    COVERAGE_FILE={toxworkdir}/.coverage.{envname}\n    PYTEST_ADDOPTS=-n auto --dist worksteal {env:PYTEST_ADDOPTS:}\ncommands = python -m pytest {posargs: \"{toxinidir}/tests\" \"{toxinidir}/docs\" --cov-config=\"{toxinidir}/tox.ini\" --cov=dateutil}\ndeps = -rrequirements-dev.txt\n\n[testenv:coverage]\nsetenv = COVERAGE_FILE=.coverage\ncommands = python -m coverage erase\n";

    #[test]
    fn factor_lines_apply_only_to_their_factors() {
        let tox = testenv(PLUGGY, ".venv/bin/python").unwrap();
        assert_eq!(tox.command, "pytest");
        assert_eq!(tox.env, vars(&[("_PYTEST_SETUP_SKIP_PLUGGY_DEP", "1")]));
        let negated = "[testenv]\ncommands =\n  !cov: pytest\n  cov,lint: ruff\n  !a-!b: x\n";
        assert_eq!(testenv(negated, "python3").unwrap().command, "pytest && x");
    }

    #[test]
    fn setenv_and_nested_defaults_are_applied() {
        let tox = testenv(DATEUTIL, "python").unwrap();
        assert_eq!(
            tox.command,
            "python -m pytest \"tests\" \"docs\" --cov-config=\"tox.ini\" --cov=dateutil"
        );
        assert_eq!(
            tox.env,
            vars(&[
                ("COVERAGE_FILE", ".tox/.coverage.py"),
                ("PYTEST_ADDOPTS", "-n auto --dist worksteal"),
            ])
        );
    }

    #[test]
    fn what_has_no_meaning_outside_tox_gives_up() {
        assert_eq!(
            testenv("[testenv]\ncommands = {envsitepackagesdir}/x\n", "python"),
            None
        );
        assert_eq!(testenv("[testenv]\ndeps = pytest\n", "python"), None);
        assert_eq!(
            testenv("[testenv]\ncommands = {env:RUNNER} x\n", "python"),
            None
        );
    }
}
