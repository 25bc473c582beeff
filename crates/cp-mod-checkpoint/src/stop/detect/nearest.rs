//! A repository whose root is no project of its own (a monorepo: `backend/` with its
//! `pyproject.toml`, `web/` with its `package.json`): a changed file's tests are those of its
//! nearest project, the first directory above the file that detection recognises.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Detected, Found, detect_in, probe::Probe};

/// Folders that hold a project's tests rather than a project: a `tests/conftest.py` belongs
/// to the project above it, so the walk never stops at them.
const TEST_FOLDERS: &[&str] = &["tests", "test"];

/// The nearest project of each directory in `starts` (relative to `repo`: where a changed
/// file lies, or a project that failed last time), each project once, in path order. The
/// walk goes up to the repository root but does not ask the root itself: the caller does
/// that first, and a root that is a project is the one project of every file.
pub(crate) fn nearest_projects<'a>(
    repo: &Path,
    starts: impl IntoIterator<Item = &'a Path>,
    path_env: Option<&OsStr>,
) -> Vec<Detected> {
    // What each directory turned out to be, so ten thousand changed files cost one probe of
    // each directory above them.
    let mut seen: BTreeMap<PathBuf, Option<Found>> = BTreeMap::new();
    let mut found: BTreeMap<PathBuf, Found> = BTreeMap::new();
    for start in starts {
        let mut dir = Some(start);
        while let Some(rel) = dir.filter(|d| !d.as_os_str().is_empty()) {
            let is_test_folder = rel
                .file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|name| TEST_FOLDERS.contains(&name));
            if !is_test_folder {
                let command = seen
                    .entry(rel.to_path_buf())
                    .or_insert_with(|| detect_in(&Probe::new(&repo.join(rel), path_env)));
                if let Some(command) = command {
                    found.insert(rel.to_path_buf(), command.clone());
                    break;
                }
            }
            dir = rel.parent();
        }
    }
    found
        .into_iter()
        .map(|(rel, found)| Detected {
            command: found.command,
            dir: repo.join(rel),
            why: found.why,
            env: found.env,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (name, content) in files {
            let file = root.join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
    }

    fn projects(root: &Path, changed: &[&str]) -> Vec<(String, String)> {
        let starts: Vec<&Path> = changed
            .iter()
            .filter_map(|f| Path::new(f).parent())
            .collect();
        nearest_projects(root, starts, Some(OsStr::new("")))
            .into_iter()
            .map(|d| {
                let rel = d.dir.strip_prefix(root).unwrap().display().to_string();
                (rel, d.command)
            })
            .collect()
    }

    #[test]
    fn each_changed_file_belongs_to_the_project_above_it() {
        let repo = tempfile::tempdir().unwrap();
        write(
            repo.path(),
            &[
                ("README.md", ""),
                ("backend/pyproject.toml", ""),
                ("backend/.venv/bin/python", ""),
                ("backend/tests/conftest.py", ""),
                (
                    "web/package.json",
                    r#"{"scripts": {"test": "node --test"}}"#,
                ),
                ("web/src/deep/a.js", ""),
            ],
        );
        let found = projects(
            repo.path(),
            &[
                "web/src/deep/a.js",
                "backend/app/api/x.py",
                "backend/tests/test_x.py",
                "tools/script.sh",
                "top.txt",
            ],
        );
        assert_eq!(
            found,
            [
                (
                    "backend".to_owned(),
                    ".venv/bin/python -m pytest".to_owned()
                ),
                ("web".to_owned(), "npm test".to_owned()),
            ]
        );
    }
}
