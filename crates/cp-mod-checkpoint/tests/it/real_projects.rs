//! Issue 48: real projects no one here wrote, fetched from their registry, each with one line
//! broken: the verdict is exact (counts and failing names), and what the gate's own run wrote
//! (nyc's `.nyc_output/` and `coverage/`) is never listed as the agent's change.
//!
//! minimist 1.2.7 is the last release whose npm package ships its tape tests (1.2.8's has an
//! empty `test/`); its `npm test` lints with eslint, then runs `nyc tape 'test/*.js'`. The
//! package and its devDependencies are installed once under `target/real-projects` (about a
//! minute the first time; later runs reuse it, and the test itself takes a few seconds).
//! minimist 1.2.6 runs node-tap 0.4 (`tap test/*.js`); toolz 1.2.0's sdist comes from `PyPI`
//! with pytest from the cached wheels (its test needs about 40 s: two pytest runs and a venv);
//! python-dateutil 4.0.0's sdist too, with its test requirements from `PyPI` (about 40 s).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::util::{Repo, reason, require, stop_in};
use cp_mod_checkpoint::{StopGateConfig, TestFramework, TestVerdict};

/// minimist 1.2.7 (tape) and 1.2.6 (node-tap 0.4), from npm.
fn minimist(version: &str) -> Option<&'static Path> {
    static V127: OnceLock<Option<PathBuf>> = OnceLock::new();
    static V126: OnceLock<Option<PathBuf>> = OnceLock::new();
    let cell = if version == "1.2.7" { &V127 } else { &V126 };
    cell.get_or_init(|| fetch_minimist(version)).as_deref()
}

/// `npm pack minimist@version`, unpacked, with its devDependencies installed: the package's
/// directory.
fn fetch_minimist(version: &str) -> Option<PathBuf> {
    {
        let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/real-projects");
        let package = base.join(format!("minimist-{version}"));
        if package.join("node_modules/.bin/tape").exists() {
            return Some(package);
        }
        let partial = base.join(format!("minimist-{version}-partial-{}", std::process::id()));
        std::fs::create_dir_all(&partial).ok()?;
        let run = |cmd: &mut Command| cmd.status().is_ok_and(|s| s.success());
        let ok = run(Command::new("npm")
            .args(["pack", "--silent", &format!("minimist@{version}")])
            .current_dir(&partial))
            && run(Command::new("tar")
                .args([
                    "xzf",
                    &format!("minimist-{version}.tgz"),
                    "--strip-components=1",
                ])
                .current_dir(&partial))
            && run(Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&partial));
        if !ok || std::fs::rename(&partial, &package).is_err() && !package.exists() {
            eprintln!("minimist {version} could not be fetched and installed from npm");
            return None;
        }
        Some(package)
    }
}

/// A repository holding the package's files (its `node_modules` linked, not copied).
fn repo_of(package: &Path) -> Repo {
    let repo = Repo::empty();
    for entry in std::fs::read_dir(package).unwrap().flatten() {
        let name = entry.file_name();
        if name == "node_modules" || name.to_string_lossy().ends_with(".tgz") {
            continue;
        }
        let ok = Command::new("cp")
            .arg("-a")
            .arg(entry.path())
            .arg(repo.root())
            .status()
            .unwrap()
            .success();
        assert!(ok, "copy {}", entry.path().display());
    }
    std::os::unix::fs::symlink(
        package.join("node_modules"),
        repo.root().join("node_modules"),
    )
    .unwrap();
    repo.write(".gitignore", "node_modules\n");
    repo.commit_all("minimist 1.2.7 as published");
    repo
}

#[test]
fn minimist_tape_failures_are_counted_and_named_and_nyc_s_files_are_not_changes() {
    let on_path = |p: &str| cp_base::find_program(p, std::env::var_os("PATH").as_deref()).is_some();
    if !require(on_path("npm") && on_path("node"), "node and npm") {
        return;
    }
    let package = minimist("1.2.7");
    if !require(package.is_some(), "minimist 1.2.7 from npm") {
        return;
    }
    let repo = repo_of(package.unwrap());
    // One line broken: hexadecimal numbers are no longer numbers.
    let index = std::fs::read_to_string(repo.root().join("index.js")).unwrap();
    let broken = index.replace(
        "if (/^0x[0-9a-f]+$/i.test(x)) return true;",
        "if (/^0y[0-9a-f]+$/i.test(x)) return true;",
    );
    assert_ne!(
        broken, index,
        "the line to break is in minimist 1.2.7's index.js"
    );
    repo.write("index.js", &broken);
    let project = repo.project();
    let checkpoint = repo.checkpoint(&project, StopGateConfig::load(&project).unwrap());
    let outcome = stop_in(&checkpoint, &project, "minimist-1");
    let tests = outcome.report.tests.first().unwrap();
    assert_eq!(tests.command, "npm test");
    assert_eq!(tests.verdict(), TestVerdict::Failed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.framework, TestFramework::Tap);
    assert_eq!((summary.passed, summary.failed), (Some(146), Some(2)));
    assert_eq!(
        summary.failing,
        [
            "nums › should be deeply equivalent (#53)",
            "nums › should be deeply equivalent (#58)"
        ]
    );
    let msg = reason(&outcome);
    assert!(
        msg.contains(
            "2 failed, 146 passed (TAP); failing: nums › should be deeply equivalent (#53), \
             nums › should be deeply equivalent (#58)"
        ),
        "{msg}"
    );
    assert!(msg.contains("modified index.js"), "{msg}");
    // nyc wrote its files during the run: they are there, and not the agent's.
    assert!(repo.root().join(".nyc_output").is_dir());
    assert!(
        !msg.contains(".nyc_output") && !msg.contains("coverage/"),
        "{msg}"
    );
    // The agent fixes the line: the next stop lists index.js only, never nyc's files.
    repo.write("index.js", &index);
    let fixed = stop_in(&checkpoint, &project, "minimist-2");
    let listed: Vec<&str> = fixed
        .report
        .files
        .iter()
        .map(|f| f.file.path.as_str())
        .collect();
    assert!(listed.is_empty(), "{listed:?}: {fixed:#?}");
}

// minimist 1.2.6's `npm test` is `tap test/*.js` (node-tap 0.4): its classic reporter prints
// one line a file, the failing file's TAP indented below it, and a `total` line.
#[test]
fn minimist_node_tap_failures_are_counted_and_named() {
    let on_path = |p: &str| cp_base::find_program(p, std::env::var_os("PATH").as_deref()).is_some();
    if !require(on_path("npm") && on_path("node"), "node and npm") {
        return;
    }
    let package = minimist("1.2.6");
    if !require(package.is_some(), "minimist 1.2.6 from npm") {
        return;
    }
    let repo = repo_of(package.unwrap());
    let index = std::fs::read_to_string(repo.root().join("index.js")).unwrap();
    let broken = index.replace("/^0x[0-9a-f]+$/i", "/^0y[0-9a-f]+$/i");
    assert_ne!(
        broken, index,
        "the line to break is in minimist 1.2.6's index.js"
    );
    repo.write("index.js", &broken);
    let project = repo.project();
    let checkpoint = repo.checkpoint(&project, StopGateConfig::load(&project).unwrap());
    let outcome = stop_in(&checkpoint, &project, "minimist-tap-1");
    let tests = outcome.report.tests.first().unwrap();
    assert_eq!(tests.command, "npm test");
    assert_eq!(tests.verdict(), TestVerdict::Failed, "{tests:#?}");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(summary.framework, TestFramework::Tap);
    assert_eq!(
        (summary.passed, summary.failed),
        (Some(160), Some(3)),
        "{tests:#?}"
    );
    assert_eq!(
        summary.failing,
        [
            "test/num.js › should be equivalent (#1)",
            "test/num.js › should be equivalent (#6)",
            "test/num.js › test/num.js (#11)",
        ]
    );
    let msg = reason(&outcome);
    assert!(msg.contains("3 failed, 160 passed (TAP)"), "{msg}");
    repo.write("index.js", &index);
    let fixed = stop_in(&checkpoint, &project, "minimist-tap-2");
    assert!(fixed.report.files.is_empty(), "{:#?}", fixed.report.files);
}

/// toolz 1.2.0's source distribution from the Python Package Index, unpacked: its directory.
fn toolz() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| fetch_sdist("toolz", "1.2.0")).as_deref()
}

fn dateutil() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| fetch_sdist("python_dateutil", "4.0.0"))
        .as_deref()
}

/// `name==version`'s source distribution from `PyPI`, unpacked under `target/real-projects`
/// (once; later runs reuse it): its directory.
fn fetch_sdist(name: &str, version: &str) -> Option<PathBuf> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/real-projects");
    let dir = base.join(format!("{name}-{version}"));
    if dir.join("pyproject.toml").exists() {
        return Some(dir);
    }
    let partial = base.join(format!("{name}-partial-{}", std::process::id()));
    std::fs::create_dir_all(&partial).ok()?;
    let run = |cmd: &mut Command| cmd.status().is_ok_and(|s| s.success());
    let ok = run(Command::new("python3")
        .args(["-m", "pip", "download", "-q", "--disable-pip-version-check"])
        .args(["--no-deps", "--no-binary", ":all:"])
        .arg(format!("{name}=={version}"))
        .args(["-d", "."])
        .current_dir(&partial))
        && run(Command::new("tar")
            .args([
                "xzf",
                &format!("{name}-{version}.tar.gz"),
                "--strip-components=1",
            ])
            .current_dir(&partial));
    if !ok || std::fs::rename(&partial, &dir).is_err() && !dir.exists() {
        eprintln!("{name} {version} could not be fetched from PyPI");
        return None;
    }
    Some(dir)
}

/// A repository holding the files of the unpacked sdist at `source` (not the archive), with
/// `.venv/` ignored and everything committed.
fn repo_of_sdist(source: &Path, what: &str) -> Repo {
    let repo = Repo::empty();
    for entry in std::fs::read_dir(source).unwrap().flatten() {
        if entry.file_name().to_string_lossy().ends_with(".tar.gz") {
            continue;
        }
        let ok = Command::new("cp")
            .arg("-a")
            .arg(entry.path())
            .arg(repo.root())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    let ignore = std::fs::read_to_string(repo.root().join(".gitignore")).unwrap_or_default();
    if !ignore.lines().any(|l| l.trim() == ".venv/") {
        repo.write(".gitignore", &format!("{ignore}\n.venv/\n"));
    }
    repo.commit_all(what);
    repo
}

// toolz declares its test dependencies as a PEP 735 group (`[dependency-groups] test`): the
// install hint names the group, not an extra pip refuses. With pytest installed and one line
// broken, the verdict counts the skipped test and names the four failures; once the
// line is fixed the next stop lists nothing.
#[test]
fn toolz_dependency_group_hint_verdict_and_no_cache_listed() {
    let Some(source) = toolz() else {
        assert!(require(false, "toolz 1.2.0 from PyPI"));
        return;
    };
    let Some((_env, _bin, bare)) = crate::util::bare_python3() else {
        assert!(require(false, "python3 -m venv"));
        return;
    };
    let repo = repo_of_sdist(source, "toolz 1.2.0 as published");
    let project = repo.project();
    // No pytest anywhere: the hint installs the dependency group.
    let gate = repo.checkpoint(&project, StopGateConfig::load(&project).unwrap());
    let planned = gate.planned_tests(&project, &repo.root()).unwrap();
    assert_eq!(planned.command, "python3 -m pytest");
    let missing = planned
        .missing_runner(Some(&bare))
        .expect("pytest is missing");
    let install = missing.install.unwrap_or_default();
    assert!(install.contains("install -e . --group test"), "{install}");
    assert!(install.contains("`uv sync --group test`"), "{install}");
    assert!(!install.contains(".[test]"), "{install}");
    // With pytest in the project's venv, one line broken.
    if crate::util::make_venv(&repo.root()).is_none() {
        return;
    }
    let module = repo.root().join("toolz/itertoolz.py");
    let text = std::fs::read_to_string(&module).unwrap();
    let broken = text.replacen(
        "    next(seq)\n    return next(seq)\n",
        "    next(seq)\n    return next(seq) + 1\n",
        1,
    );
    assert_ne!(broken, text, "toolz 1.2.0's second() is as expected");
    repo.write("toolz/itertoolz.py", &broken);
    let outcome = stop_in(&gate, &project, "toolz-1");
    let tests = outcome.report.tests.first().unwrap();
    assert_eq!(tests.command, ".venv/bin/python -m pytest");
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(
        (summary.passed, summary.failed, summary.skipped),
        (Some(188), Some(4), Some(1)),
        "{tests:#?}"
    );
    assert_eq!(
        summary.failing,
        [
            "toolz/tests/test_itertoolz.py::test_second",
            "toolz/tests/test_itertoolz.py::test_join",
            "toolz/tests/test_itertoolz.py::test_join_double_repeats",
            "toolz/tests/test_itertoolz.py::test_join_missing_element",
        ]
    );
    assert!(
        reason(&outcome).contains("4 failed, 188 passed, 1 skipped in "),
        "{}",
        reason(&outcome)
    );
    repo.write("toolz/itertoolz.py", &text);
    let fixed = stop_in(&gate, &project, "toolz-2");
    assert!(fixed.report.files.is_empty(), "{:#?}", fixed.report.files);
}

// python-dateutil declares how it tests in tox.ini: `python -m pytest "{toxinidir}/tests" …`
// with `setenv` giving `COVERAGE_FILE={toxworkdir}/.coverage.{envname}` and
// `PYTEST_ADDOPTS=-n auto …`. Run without that environment, the suite writes `.coverage` at the
// root, which the next stop then asked the agent to commit. With it, the coverage file lands in
// `.tox/` (ignored by the project), the suite runs on xdist's workers, and a broken line gives
// the exact verdict. The published suite takes minutes; the test keeps its relativedelta and
// easter modules (256 tests, about 10 s), and the rest of the project as published.
#[test]
fn dateutil_tox_setenv_reaches_the_run_and_its_coverage_file_is_not_a_change() {
    let Some(source) = dateutil() else {
        assert!(require(false, "python-dateutil 4.0.0 from PyPI"));
        return;
    };
    let repo = repo_of_sdist(source, "python-dateutil 4.0.0 as published");
    let kept = [
        "__init__.py",
        "_common.py",
        "conftest.py",
        "test_easter.py",
        "test_relativedelta.py",
    ];
    for entry in std::fs::read_dir(repo.root().join("tests"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !kept.contains(&name.as_str()) {
            let path = entry.path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    repo.commit_all("a shorter suite");
    // The project's test requirements, and the project itself, in its own venv.
    let venv = Command::new("python3")
        .args(["-m", "venv", ".venv"])
        .current_dir(repo.root())
        .status()
        .is_ok_and(|s| s.success());
    if !require(venv, "python3 with venv") {
        return;
    }
    let installed = Command::new(repo.root().join(".venv/bin/python"))
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args([
            "pytest",
            "pytest-cov",
            "pytest-xdist",
            "freezegun",
            "hypothesis",
            "-e",
            ".",
        ])
        .current_dir(repo.root())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        require(installed, "python-dateutil's test requirements from PyPI"),
        "pip install failed"
    );
    let project = repo.project();
    let gate = repo.checkpoint(&project, StopGateConfig::load(&project).unwrap());
    let module = repo.root().join("src/dateutil/relativedelta.py");
    let text = std::fs::read_to_string(&module).unwrap();
    let broken = text.replacen("days=-self.days,", "days=self.days,", 1);
    assert_ne!(broken, text, "relativedelta.__neg__ is as expected");
    repo.write("src/dateutil/relativedelta.py", &broken);
    let outcome = stop_in(&gate, &project, "dateutil-1");
    let tests = outcome.report.tests.first().unwrap();
    assert!(
        tests.command.contains("-m pytest") && tests.command.contains("--cov=dateutil"),
        "{tests:#?}"
    );
    let why = tests.why.as_deref().unwrap_or_default();
    assert!(
        why.contains("tox.ini") && why.contains("COVERAGE_FILE") && why.contains("PYTEST_ADDOPTS"),
        "{why}"
    );
    let summary = tests.summary.as_ref().unwrap();
    assert_eq!(
        (summary.passed, summary.failed),
        (Some(255), Some(1)),
        "{tests:#?}"
    );
    assert_eq!(
        summary.failing,
        ["tests/test_relativedelta.py::RelativeDeltaTest::testRightSubtractionFromDatetime"]
    );
    assert!(
        reason(&outcome).contains("1 failed, 255 passed in "),
        "{}",
        reason(&outcome)
    );
    // setenv reached the run: the coverage file is where tox.ini puts it, none at the root.
    assert!(repo.root().join(".tox/.coverage.py").exists());
    assert!(!repo.root().join(".coverage").exists());
    repo.write("src/dateutil/relativedelta.py", &text);
    // Fixed, the tree is HEAD's again: nothing is listed, `.tox/`'s coverage file included.
    let fixed = stop_in(&gate, &project, "dateutil-2");
    assert!(fixed.report.files.is_empty(), "{:#?}", fixed.report.files);
    assert!(
        fixed.report.tests.iter().all(|t| t.passed),
        "{:#?}",
        fixed.report.tests
    );
}
