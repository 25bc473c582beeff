//! `File_glob`: project files whose path matches a glob, newest first, bounded.
//!
//! The walk is ripgrep's (the `ignore` crate): parallel, and it honours `.gitignore`,
//! `.ignore` and git's exclude files, and skips hidden files and directories. Symbolic links
//! are not followed and not listed, so nothing outside the project is reached through one.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use cp_base::{Args, ToolResult};
use globset::{Glob, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use serde_json::Value;

use super::confine::confine;
use super::error::{FileError, refused};

/// Most paths listed; the rest are counted.
pub(super) const MAX_PATHS: usize = 100;

/// A parallel, gitignore-aware walk of `dir` that calls `visit` for every regular file (not
/// symlinks, which are skipped). `visit` returns false to stop the whole walk.
pub(super) fn walk_files(dir: &Path, visit: &(dyn Fn(&ignore::DirEntry) -> bool + Sync)) {
    walk_files_with(dir, &|| |entry: &ignore::DirEntry| visit(entry));
}

/// [`walk_files`] with per-thread state: `make` builds one visitor for each walker thread (so
/// a searcher and its buffers are reused across that thread's files, as ripgrep does).
pub(super) fn walk_files_with<'s, F>(dir: &Path, make: &'s (dyn Fn() -> F + Sync))
where
    F: FnMut(&ignore::DirEntry) -> bool + Send + 's,
{
    WalkBuilder::new(dir)
        .follow_links(false)
        // Gitignore rules apply even outside a git repository, as the project's intent.
        .require_git(false)
        .build_parallel()
        .run(|| {
            let mut visit = make();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if visit(&entry) {
                    WalkState::Continue
                } else {
                    WalkState::Quit
                }
            })
        });
}

/// The search directory: `path` confined to the project, or the root.
pub(super) fn search_dir(
    root: &Path,
    path: Option<&str>,
    tool: &str,
) -> Result<PathBuf, FileError> {
    let Some(path) = path else {
        return Ok(root.to_path_buf());
    };
    let confined = confine(root, path, tool)?;
    if !confined.absolute.exists() {
        return Err(refused!(
            "{tool}: 'path' `{}` does not exist; give a directory inside the project, e.g. \
             \"src\"",
            confined.relative
        ));
    }
    Ok(confined.absolute)
}

/// `path` relative to `root`, with `/` separators.
pub(super) fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// A file filter from a glob: a pattern without `/` matches file names at any depth (as in
/// `.gitignore`); one with `/` matches the path relative to the search directory.
pub(super) struct PathFilter {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathFilter {
    pub(super) fn new(pattern: &str, tool: &str, param: &str) -> Result<Self, FileError> {
        let glob = Glob::new(pattern).map_err(|source| FileError::Glob {
            tool: tool.to_owned(),
            param: param.to_owned(),
            pattern: pattern.to_owned(),
            source,
        })?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            by_name: !pattern.contains('/'),
        })
    }

    pub(super) fn matches(&self, dir: &Path, path: &Path) -> bool {
        if self.by_name {
            path.file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher
                .is_match(path.strip_prefix(dir).unwrap_or(path))
        }
    }
}

pub(super) fn run(root: &Path, args: &Value) -> Result<ToolResult, FileError> {
    const TOOL: &str = "File_glob";
    let args = Args::new(TOOL, args);
    let pattern = args.str("pattern")?;
    let filter = PathFilter::new(pattern, TOOL, "pattern")?;
    let dir = search_dir(root, args.opt_str("path")?, TOOL)?;
    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    walk_files(&dir, &|entry| {
        if filter.matches(&dir, entry.path()) {
            let modified = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            if let Ok(mut found) = found.lock() {
                found.push((modified, entry.path().to_path_buf()));
            }
        }
        true
    });
    let mut found = found.into_inner().unwrap_or_default();
    if found.is_empty() {
        return Ok(ToolResult::ok(format!(
            "No files match `{pattern}` in {} (gitignored and hidden files are skipped).",
            shown_dir(root, &dir)
        )));
    }
    // Newest first; the path breaks ties so the order is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out = String::new();
    for (_, path) in found.iter().take(MAX_PATHS) {
        let _ = writeln!(out, "{}", relative(root, path));
    }
    if total > MAX_PATHS {
        let _ = write!(
            out,
            "[{MAX_PATHS} of {total} files, newest first; {} more not shown — narrow the \
             pattern or give a 'path']",
            total - MAX_PATHS
        );
    }
    Ok(ToolResult::ok(out))
}

fn shown_dir(root: &Path, dir: &Path) -> String {
    let rel = relative(root, dir);
    if rel.is_empty() {
        "the project".to_owned()
    } else {
        format!("'{rel}'")
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn glob(root: &Path, args: &Value) -> ToolResult {
        run(root, args).unwrap_or_else(|e| ToolResult::error(e.to_string()))
    }

    fn set_age(root: &Path, rel: &str, seconds_ago: u64) {
        let file = fs::File::options()
            .write(true)
            .open(root.join(rel))
            .unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
            .unwrap();
    }

    #[test]
    fn newest_first_and_gitignore_and_hidden_files_are_skipped() {
        let (_dir, root) = project();
        write(&root, ".gitignore", "target/\n*.log\n");
        write(&root, "src/old.rs", "");
        write(&root, "src/new.rs", "");
        write(&root, "src/deep/mid.rs", "");
        write(&root, "target/debug/gen.rs", "");
        write(&root, ".hidden/secret.rs", "");
        write(&root, "notes.log", "");
        set_age(&root, "src/old.rs", 300);
        set_age(&root, "src/deep/mid.rs", 200);
        set_age(&root, "src/new.rs", 100);
        let result = glob(&root, &json!({"pattern": "*.rs"}));
        assert!(!result.is_error, "{}", result.text);
        assert_eq!(result.text, "src/new.rs\nsrc/deep/mid.rs\nsrc/old.rs\n");
        let result = glob(&root, &json!({"pattern": "deep/*.rs", "path": "src"}));
        assert_eq!(result.text, "src/deep/mid.rs\n");
        let none = glob(&root, &json!({"pattern": "*.log"}));
        assert!(
            none.text.starts_with("No files match `*.log`"),
            "{}",
            none.text
        );
    }

    #[test]
    fn output_is_bounded_with_a_count_of_the_rest() {
        let (_dir, root) = project();
        for n in 0..150 {
            write(&root, &format!("data/f{n:03}.txt"), "");
        }
        let result = glob(&root, &json!({"pattern": "*.txt"}));
        assert_eq!(result.text.lines().count(), MAX_PATHS + 1);
        assert!(
            result
                .text
                .ends_with("[100 of 150 files, newest first; 50 more not shown — narrow the pattern or give a 'path']"),
            "{}",
            result.text
        );
    }

    #[test]
    fn confined_to_the_project_and_symlinks_are_not_followed() {
        let (_dir, root) = project();
        let (_outside_dir, outside) = project();
        write(&outside, "leak.rs", "");
        write(&root, "src/ok.rs", "");
        std::os::unix::fs::symlink(&outside, root.join("src/escape")).unwrap();
        std::os::unix::fs::symlink(outside.join("leak.rs"), root.join("src/link.rs")).unwrap();
        let result = glob(&root, &json!({"pattern": "*.rs"}));
        assert_eq!(result.text, "src/ok.rs\n");
        let outside_arg = glob(
            &root,
            &json!({"pattern": "*.rs", "path": outside.display().to_string()}),
        );
        assert!(outside_arg.is_error, "{}", outside_arg.text);
        let up = glob(&root, &json!({"pattern": "*.rs", "path": "../"}));
        assert!(up.is_error, "{}", up.text);
        let bad = glob(&root, &json!({"pattern": "src/["}));
        assert!(bad.text.contains("is not a valid glob"), "{}", bad.text);
    }
}
