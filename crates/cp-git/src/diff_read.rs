//! Reading the diff of a work tree ([`Git::review`], [`Git::diff`]): git runs with fixed
//! settings, its output is parsed (`parse.rs`), and untracked files are read as new files
//! (`untracked.rs`). The shapes it fills are in `diff.rs`.

use std::collections::HashSet;
use std::path::Path;

use crate::diff::{
    EMPTY_TREE, FileDiff, MAX_SHOWN_BYTES, MAX_SHOWN_LINES, ReadOptions, Review, Summary,
};
use crate::git::{Git, GitError};
use crate::status::is_host_runtime;
use crate::untracked::{self, UntrackedBudget};

impl Git {
    /// The commit `HEAD` names now, if any.
    pub fn head(&self, root: &Path) -> Option<String> {
        self.run(root, &["rev-parse", "--verify", "-q", "HEAD"])
            .ok()
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The uncommitted diff of the repository at `root` (its top directory): tracked
    /// changes against `HEAD`, then untracked files as new files; sorted by path, the host's
    /// own runtime files left out.
    pub fn diff(&self, root: &Path) -> Result<Vec<FileDiff>, GitError> {
        self.diff_from(root, None)
    }

    /// Like [`Git::diff`], but against commit `base` when given (a workflow phase's changes,
    /// committed since `base` or not), instead of `HEAD`.
    pub fn diff_from(&self, root: &Path, base: Option<&str>) -> Result<Vec<FileDiff>, GitError> {
        let options = ReadOptions {
            base,
            ..ReadOptions::default()
        };
        Ok(self.review(root, &options)?.files)
    }

    /// The changes of the repository at `root` as [`Git::diff_from`] reads them, taking what
    /// did not change from `options.previous`, with the nested repositories named.
    pub fn review(&self, root: &Path, options: &ReadOptions<'_>) -> Result<Review, GitError> {
        let base = match options.base {
            Some(base) => base,
            None if self.head(root).is_some() => "HEAD",
            None => EMPTY_TREE,
        };
        let out = self.run_diff(root, &[base])?;
        let mut review = Review {
            files: crate::parse::parse_diff(&out),
            ..Review::default()
        };
        let unmerged = self.unmerged(root)?;
        for file in &mut review.files {
            file.conflicted = unmerged.contains(&file.path_bytes);
        }
        review.untracked_hidden = self.untracked_hidden(root);
        if !review.untracked_hidden {
            let listed = self.run(
                root,
                &[
                    "-c",
                    "core.quotePath=false",
                    "ls-files",
                    "--others",
                    "--exclude-standard",
                    "-z",
                ],
            )?;
            let mut budget = UntrackedBudget::new(options.previous, options.load);
            for path in listed.split(|b| *b == 0).filter(|p| !p.is_empty()) {
                // Git lists a directory holding a `.git` of its own (a nested repository, a
                // worktree) as `dir/` and never looks inside.
                if let Some(dir) = path.strip_suffix(b"/") {
                    review
                        .nested
                        .push(String::from_utf8_lossy(dir).into_owned());
                    continue;
                }
                if is_host_runtime(&String::from_utf8_lossy(path)) {
                    continue;
                }
                review.files.push(untracked::read(root, path, &mut budget));
            }
            review.read_files = budget.read_files;
            review.read_bytes = budget.read_bytes;
        }
        review.files.retain(|f| !is_host_runtime(&f.path));
        for file in &mut review.files {
            if file.summary.is_none() {
                file.summary = summary_of(root, file);
            }
            let wanted = options.load.contains(&file.path);
            if wanted && file.summary == Some(Summary::Binary) && file.hunks.is_empty() {
                self.show_binary(root, file, base);
            }
        }
        review.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(review)
    }

    /// The paths with unresolved merge conflicts in the index.
    pub(crate) fn unmerged(&self, root: &Path) -> Result<HashSet<Vec<u8>>, GitError> {
        let out = self.run(root, &["ls-files", "--unmerged", "-z"])?;
        Ok(out
            .split(|b| *b == 0)
            .filter_map(|record| {
                let at = record.iter().position(|b| *b == b'\t')?;
                Some(record[at + 1..].to_vec())
            })
            .collect())
    }

    /// Whether the repository says untracked files are not to be listed
    /// (`status.showUntrackedFiles=no`).
    fn untracked_hidden(&self, root: &Path) -> bool {
        self.run(root, &["config", "--get", "status.showUntrackedFiles"])
            .is_ok_and(|out| {
                let value = String::from_utf8_lossy(&out).trim().to_ascii_lowercase();
                matches!(value.as_str(), "no" | "false" | "off" | "0")
            })
    }
}

/// Whether a file's diff is summarised: too many lines, or too large a file.
fn summary_of(root: &Path, file: &FileDiff) -> Option<Summary> {
    let lines = file.line_count();
    if lines > MAX_SHOWN_LINES {
        return Some(Summary::ManyLines(lines));
    }
    let bytes = std::fs::symlink_metadata(file.full_path(root)).map_or(0, |m| m.len());
    (bytes > MAX_SHOWN_BYTES).then_some(Summary::LargeFile(bytes))
}

impl Git {
    /// `git diff` with the settings a reading relies on whatever the person's config says
    /// (prefixes, no colour, no external diff or textconv, full blob ids, renames), then
    /// `args` (what to compare) and `--`.
    fn run_diff(&self, root: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let mut all = vec![
            "-c",
            "core.quotePath=false",
            "-c",
            "diff.noprefix=false",
            "-c",
            "diff.mnemonicPrefix=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
            "--full-index",
            "--submodule=short",
            "--ignore-submodules=dirty",
            "-M",
            "--src-prefix=a/",
            "--dst-prefix=b/",
        ];
        all.extend_from_slice(args);
        all.push("--");
        self.run(root, &all)
    }

    /// What is staged: the index against `HEAD`, read as [`Git::diff`] reads the work tree.
    pub fn staged(&self, root: &Path) -> Result<Vec<FileDiff>, GitError> {
        Ok(crate::parse::parse_diff(
            self.run_diff(root, &["--cached", "HEAD"])?,
        ))
    }
}
