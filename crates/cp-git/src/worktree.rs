//! Worktrees and merges for phases that run side by side: each gets its own work tree on its
//! own branch, made from a known commit, and its branch is merged back with a merge commit
//! that names it. A merge that conflicts is aborted, so the tree is exactly as it was before.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed, with what git said.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The `git` program could not be started.
    #[error("git is not available ({0})")]
    Missing(std::io::Error),
    /// Git ran but refused.
    #[error("`git {args}` failed in {dir}: {stderr}")]
    Failed {
        /// The arguments given.
        args: String,
        /// Where it ran.
        dir: PathBuf,
        /// What git said.
        stderr: String,
    },
}

/// How merging a branch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Merged; the merge commit (or the commit the branch fast-forwarded to when the branch
    /// had nothing new, in which case nothing was made).
    Merged {
        /// The commit `HEAD` points at afterwards.
        commit: String,
    },
    /// The branch had no commits the target lacks: nothing to merge.
    UpToDate,
    /// The changes conflict in these files (repository-relative); the merge was aborted and the
    /// tree is as it was.
    Conflict {
        /// The conflicting paths, sorted.
        files: Vec<String>,
    },
}

/// Runs git in one repository.
#[derive(Debug, Clone)]
pub struct Repository {
    root: PathBuf,
}

impl Repository {
    /// The repository whose work tree is at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The work tree's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn git(&self, args: &[&str]) -> Result<String, WorktreeError> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .stdin(Stdio::null())
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .output()
            .map_err(WorktreeError::Missing)?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
        } else {
            Err(WorktreeError::Failed {
                args: args.join(" "),
                dir: self.root.clone(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    /// The commit `HEAD` points at.
    pub fn head(&self) -> Result<String, WorktreeError> {
        self.git(&["rev-parse", "HEAD"])
    }

    /// Where the work tree's root lies below the repository's top, with a trailing `/`
    /// (`""` at the top), e.g. `app/` for a project in a subdirectory.
    pub fn prefix(&self) -> Result<String, WorktreeError> {
        self.git(&["rev-parse", "--show-prefix"])
    }

    /// The branch checked out, or `None` on a detached `HEAD`.
    pub fn current_branch(&self) -> Result<Option<String>, WorktreeError> {
        let name = self.git(&["rev-parse", "--abbrev-ref", "HEAD"])?;
        Ok((name != "HEAD").then_some(name))
    }

    /// Makes a work tree at `path` on a new branch `branch` starting at `base`.
    pub fn add_worktree(&self, path: &Path, branch: &str, base: &str) -> Result<(), WorktreeError> {
        let path = path.to_string_lossy();
        self.git(&["worktree", "add", "--quiet", "-b", branch, &path, base])
            .map(drop)
    }

    /// Makes a work tree at `path` for the existing branch `branch` (a worktree removed by
    /// hand whose branch survived).
    pub fn checkout_worktree(&self, path: &Path, branch: &str) -> Result<(), WorktreeError> {
        self.git(&["worktree", "prune"])?;
        let path = path.to_string_lossy();
        self.git(&["worktree", "add", "--quiet", &path, branch])
            .map(drop)
    }

    /// Removes the work tree at `path` (whatever it holds) and deletes `branch`; either may be
    /// gone already.
    pub fn remove_worktree(&self, path: &Path, branch: &str) -> Result<(), WorktreeError> {
        self.drop_worktree(path)?;
        if !self.has_branch(branch) {
            // Deleted already (by an earlier call that was cut short).
            return Ok(());
        }
        self.git(&["branch", "-D", branch]).map(drop)
    }

    /// Removes the work trees at `trees` (whatever they hold) and deletes their branches, any
    /// of which may be gone already. A linked work tree (its `.git` a file) is deleted as a
    /// directory, all of them at once, then one `git worktree prune` forgets them and one
    /// `git branch -D` deletes the branches, so removing several costs little more than
    /// removing one. Anything else, or one still there, goes through `git worktree remove`,
    /// which refuses the repository's main work tree.
    pub fn remove_worktrees(&self, trees: &[(&Path, &str)]) -> Result<(), WorktreeError> {
        let linked: Vec<&Path> = trees
            .iter()
            .map(|(path, _)| *path)
            .filter(|path| is_linked_worktree(path))
            .collect();
        // One that stays (a permission, a failure) goes through git below, which says why.
        std::thread::scope(|scope| {
            for path in &linked {
                let spawned = std::thread::Builder::new()
                    .spawn_scoped(scope, move || std::fs::remove_dir_all(path));
                if spawned.is_err() {
                    let _ = std::fs::remove_dir_all(path);
                }
            }
        });
        for (path, _) in trees {
            if path.exists() {
                let shown = path.to_string_lossy();
                self.git(&["worktree", "remove", "--force", &shown])?;
            }
        }
        self.git(&["worktree", "prune"])?;
        let listed = self.git(&["branch", "--list", "--format=%(refname:short)"])?;
        let existing: Vec<&str> = listed.lines().collect();
        let mut delete = vec!["branch", "-D"];
        delete.extend(
            trees
                .iter()
                .map(|(_, branch)| *branch)
                .filter(|branch| existing.contains(branch)),
        );
        if delete.len() > 2 {
            self.git(&delete)?;
        }
        Ok(())
    }

    /// Removes the work tree at `path` (whatever it holds); its branch stays.
    pub fn drop_worktree(&self, path: &Path) -> Result<(), WorktreeError> {
        let shown = path.to_string_lossy();
        if path.exists() {
            self.git(&["worktree", "remove", "--force", &shown])?;
        }
        // A work tree deleted by hand leaves an entry behind; prune forgets it.
        self.git(&["worktree", "prune"]).map(drop)
    }

    /// Renames branch `from` to `to` (which must not exist), keeping every commit.
    pub fn rename_branch(&self, from: &str, to: &str) -> Result<(), WorktreeError> {
        self.git(&["branch", "-m", from, to]).map(drop)
    }

    /// The commit `rev` names (a branch, a tag, `HEAD~1`, …).
    pub fn resolve(&self, rev: &str) -> Result<String, WorktreeError> {
        self.git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
    }

    /// The tree commit `rev` holds (its `^{tree}` hash): what a test of that commit tested,
    /// the same for every commit with the same files.
    pub fn tree_of(&self, rev: &str) -> Result<String, WorktreeError> {
        self.git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{tree}}"),
        ])
    }

    /// The best common ancestor of `a` and `b`: where a branch and the branch it merges into
    /// parted.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<String, WorktreeError> {
        self.git(&["merge-base", a, b])
    }

    /// Checks out `rev` without a branch (a detached `HEAD`), so a merge made here moves no
    /// branch.
    pub fn checkout_detached(&self, rev: &str) -> Result<(), WorktreeError> {
        self.git(&["checkout", "--quiet", "--detach", rev])
            .map(drop)
    }

    /// Checks out `branch` in this work tree.
    pub fn checkout(&self, branch: &str) -> Result<(), WorktreeError> {
        self.git(&["checkout", "--quiet", branch]).map(drop)
    }

    /// Moves the branch checked out here forward to `commit`, a descendant of its tip, and the
    /// tree with it; nothing new is made. Untracked files in the way that hold exactly what
    /// `commit` has are removed first (nothing is lost); any other refusal is an error and
    /// leaves everything as it was.
    pub fn fast_forward(&self, commit: &str) -> Result<(), WorktreeError> {
        let attempt = self.git(&["merge", "--ff-only", "--quiet", commit]);
        match attempt {
            Err(WorktreeError::Failed { stderr, .. })
                if self.clear_identical_untracked(&stderr, commit) =>
            {
                self.git(&["merge", "--ff-only", "--quiet", commit])
                    .map(drop)
            }
            other => other.map(drop),
        }
    }

    /// The commits on `to`'s first-parent line that `from` lacks, newest first, one line each
    /// (`<short hash> <subject>`), at most `max` of them and then a line counting the rest.
    pub fn short_log(
        &self,
        from: &str,
        to: &str,
        max: usize,
    ) -> Result<Vec<String>, WorktreeError> {
        let out = self.git(&[
            "log",
            "--first-parent",
            "--format=%h %s",
            &format!("{from}..{to}"),
        ])?;
        let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
        let mut shown: Vec<String> = lines.iter().take(max).map(|l| (*l).to_owned()).collect();
        if lines.len() > max {
            shown.push(format!("… and {} more", lines.len() - max));
        }
        Ok(shown)
    }

    /// Whether `branch` exists.
    pub fn has_branch(&self, branch: &str) -> bool {
        self.git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .is_ok()
    }

    /// The files that differ between commits `from` and `to` (repository-relative, sorted).
    pub fn changed_between(&self, from: &str, to: &str) -> Result<Vec<String>, WorktreeError> {
        let out = self.git(&["diff", "--name-only", "-z", from, to])?;
        let mut files: Vec<String> = out
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        files.sort();
        Ok(files)
    }

    /// `git diff --stat from to`, for a person deciding on a phase's work.
    pub fn diff_stat(&self, from: &str, to: &str) -> Result<String, WorktreeError> {
        self.git(&["diff", "--stat", from, to])
    }

    /// How many commits `to` has that `from` lacks.
    pub fn commits_between(&self, from: &str, to: &str) -> Result<u32, WorktreeError> {
        let count = self.git(&["rev-list", "--count", &format!("{from}..{to}")])?;
        Ok(count.trim().parse().unwrap_or(0))
    }

    /// Whether commit `ancestor` is reachable from `descendant` (a merged branch is).
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> bool {
        self.git(&["merge-base", "--is-ancestor", ancestor, descendant])
            .is_ok()
    }

    /// Whether the work tree has changes not committed (untracked files included).
    pub fn is_dirty(&self) -> Result<bool, WorktreeError> {
        Ok(!self.git(&["status", "--porcelain"])?.is_empty())
    }

    /// Adds `pattern` to the repository's own exclude file (`info/exclude`, shared by its
    /// worktrees, never committed) unless it is there already.
    pub fn exclude_locally(&self, pattern: &str) -> Result<(), WorktreeError> {
        let common = self.git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
        let file = Path::new(&common).join("info").join("exclude");
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.lines().any(|l| l.trim() == pattern) {
            return Ok(());
        }
        let mut updated = text;
        if !updated.is_empty() && !updated.ends_with('\n') {
            updated.push('\n');
        }
        updated.push_str(pattern);
        updated.push('\n');
        let failed = |stderr: String| WorktreeError::Failed {
            args: "(write info/exclude)".into(),
            dir: file.clone(),
            stderr,
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
        }
        cp_base::write_atomic(&file, updated.as_bytes()).map_err(|e| failed(e.to_string()))
    }

    /// When git refused a merge because untracked files are in the way, removes those that
    /// hold exactly what `branch` has (e.g. a `.gitignore` both trees wrote): nothing is lost.
    /// Returns whether every file in the way was such a copy (and is gone).
    fn clear_identical_untracked(&self, stderr: &str, branch: &str) -> bool {
        let Some((_, rest)) = stderr.split_once("would be overwritten by merge:") else {
            return false;
        };
        let files: Vec<&str> = rest
            .lines()
            .map(str::trim)
            .skip_while(|l| l.is_empty())
            .take_while(|l| !l.is_empty() && !l.starts_with("Please move"))
            .collect();
        if files.is_empty() {
            return false;
        }
        let same = |file: &str| {
            let theirs = self.git(&["show", &format!("{branch}:{file}")]);
            let ours = std::fs::read_to_string(self.root.join(file));
            matches!((theirs, ours), (Ok(t), Ok(o)) if t.trim_end() == o.trim_end())
        };
        if !files.iter().all(|f| same(f)) {
            return false;
        }
        files
            .iter()
            .all(|f| std::fs::remove_file(self.root.join(f)).is_ok())
    }

    /// The newest merge commit on `HEAD` whose message is `message` (as [`merge`](Self::merge)
    /// made it), if any: what merged a branch that is already up to date, e.g. when a run was
    /// killed between the merge and recording it.
    pub fn merge_commit_named(&self, message: &str) -> Result<Option<String>, WorktreeError> {
        let found = self.git(&[
            "log",
            "--merges",
            "--fixed-strings",
            &format!("--grep={message}"),
            "--format=%H%x00%s",
            "HEAD",
        ])?;
        Ok(found.lines().find_map(|line| {
            let (commit, subject) = line.split_once('\0')?;
            (subject == message).then(|| commit.to_owned())
        }))
    }

    /// Merges `branch` into the branch checked out, always with a merge commit saying
    /// `message`. On a conflict the merge is aborted and the conflicting files returned.
    pub fn merge(&self, branch: &str, message: &str) -> Result<MergeOutcome, WorktreeError> {
        let ahead = self.git(&["rev-list", "--count", &format!("HEAD..{branch}")])?;
        if ahead == "0" {
            return Ok(MergeOutcome::UpToDate);
        }
        let mut attempt = self.git(&["merge", "--no-ff", "--no-edit", "-m", message, branch]);
        if let Err(WorktreeError::Failed { stderr, .. }) = &attempt
            && self.clear_identical_untracked(stderr, branch)
        {
            attempt = self.git(&["merge", "--no-ff", "--no-edit", "-m", message, branch]);
        }
        match attempt {
            Ok(_) => Ok(MergeOutcome::Merged {
                commit: self.head()?,
            }),
            Err(failed) => {
                let conflicts = self.git(&["diff", "--name-only", "--diff-filter=U", "-z"])?;
                let mut files: Vec<String> = conflicts
                    .split('\0')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect();
                if files.is_empty() {
                    // Not a content conflict (e.g. untracked files in the way): nothing merged.
                    let _ = self.git(&["merge", "--abort"]);
                    return Err(failed);
                }
                files.sort();
                self.git(&["merge", "--abort"])?;
                Ok(MergeOutcome::Conflict { files })
            }
        }
    }
}

/// Whether `path` is a linked work tree: its `.git` is a file naming an entry under a
/// repository's `worktrees/` (not a main work tree, not a submodule's checkout).
fn is_linked_worktree(path: &Path) -> bool {
    std::fs::read_to_string(path.join(".git")).is_ok_and(|text| {
        text.strip_prefix("gitdir:").is_some_and(|dir| {
            Path::new(dir.trim())
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|name| name == "worktrees")
        })
    })
}

#[cfg(test)]
mod tests {

    use super::*;

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::at(dir.path().canonicalize().unwrap());
        repo.git(&["init", "-q", "-b", "main"]).unwrap();
        repo.git(&["config", "user.name", "T"]).unwrap();
        repo.git(&["config", "user.email", "t@example.invalid"])
            .unwrap();
        std::fs::write(dir.path().join("shared.txt"), "one\ntwo\nthree\n").unwrap();
        repo.git(&["add", "-A"]).unwrap();
        repo.git(&["commit", "-qm", "base"]).unwrap();
        (dir, repo)
    }

    fn commit_in(tree: &Path, file: &str, content: &str) {
        std::fs::write(tree.join(file), content).unwrap();
        let repo = Repository::at(tree);
        repo.git(&["add", "-A"]).unwrap();
        repo.git(&["commit", "-qm", &format!("edit {file}")])
            .unwrap();
    }

    #[test]
    fn two_worktrees_merge_back_with_commits_that_name_them() {
        let (dir, repo) = repo();
        let base = repo.head().unwrap();
        let trees = tempfile::tempdir().unwrap();
        let (api, ui) = (trees.path().join("api"), trees.path().join("ui"));
        repo.add_worktree(&api, "cp/run/api", &base).unwrap();
        repo.add_worktree(&ui, "cp/run/ui", &base).unwrap();
        commit_in(&api, "api.txt", "api\n");
        commit_in(&ui, "ui.txt", "ui\n");

        let first = repo.merge("cp/run/api", "Merge phase api").unwrap();
        assert!(matches!(first, MergeOutcome::Merged { .. }), "{first:?}");
        let second = repo.merge("cp/run/ui", "Merge phase ui").unwrap();
        assert!(matches!(second, MergeOutcome::Merged { .. }), "{second:?}");
        assert!(dir.path().join("api.txt").exists() && dir.path().join("ui.txt").exists());
        let log = repo.git(&["log", "--format=%s"]).unwrap();
        assert!(log.starts_with("Merge phase ui\nMerge phase api"), "{log}");
        assert_eq!(
            repo.merge("cp/run/ui", "again").unwrap(),
            MergeOutcome::UpToDate
        );
        // The merge that made it up to date is found by its message, exactly.
        let merged = repo.merge_commit_named("Merge phase ui").unwrap();
        assert_eq!(merged, Some(repo.head().unwrap()));
        assert_eq!(repo.merge_commit_named("Merge phase").unwrap(), None);

        repo.remove_worktree(&api, "cp/run/api").unwrap();
        // Several at once, one of them gone already, one holding work nobody committed.
        std::fs::write(ui.join("left.txt"), "untracked\n").unwrap();
        repo.remove_worktrees(&[(&ui, "cp/run/ui"), (&api, "cp/run/api")])
            .unwrap();
        assert!(!api.exists() && !ui.exists());
        assert!(!repo.has_branch("cp/run/api") && !repo.has_branch("cp/run/ui"));
        assert_eq!(repo.current_branch().unwrap().as_deref(), Some("main"));
        assert!(repo.git(&["worktree", "list"]).unwrap().lines().count() == 1);
    }

    #[test]
    fn removing_worktrees_never_deletes_the_main_one() {
        let (dir, repo) = repo();
        assert!(repo.remove_worktrees(&[(dir.path(), "main")]).is_err());
        assert!(dir.path().join("shared.txt").exists() && dir.path().join(".git").is_dir());
        assert!(repo.has_branch("main"));
    }

    #[test]
    fn a_merge_made_on_a_detached_head_lands_by_fast_forward_only_when_asked() {
        let (dir, repo) = repo();
        let base = repo.head().unwrap();
        let trees = tempfile::tempdir().unwrap();
        let (a, b) = (trees.path().join("a"), trees.path().join("b"));
        repo.add_worktree(&a, "cp/r/a", &base).unwrap();
        repo.add_worktree(&b, "cp/r/b", &base).unwrap();
        commit_in(&a, "a.txt", "a\n");
        commit_in(&b, "b.txt", "b\n");
        // The candidate: main with a merged, made in a's worktree without moving any branch.
        let tree_a = Repository::at(&a);
        tree_a.checkout_detached(&base).unwrap();
        let first = tree_a.merge("cp/r/a", "Merge phase a").unwrap();
        let MergeOutcome::Merged { commit: first } = first else {
            panic!("{first:?}")
        };
        assert_eq!(
            repo.head().unwrap(),
            base,
            "main moved before the candidate landed"
        );
        assert!(repo.has_branch("cp/r/a"));
        // The next candidate is built on the first, in b's worktree.
        let tree_b = Repository::at(&b);
        tree_b.checkout_detached(&first).unwrap();
        let MergeOutcome::Merged { commit: second } =
            tree_b.merge("cp/r/b", "Merge phase b").unwrap()
        else {
            panic!("b did not merge")
        };
        assert_eq!(
            repo.short_log(&base, &second, 10).unwrap().len(),
            2,
            "one line per merge on the first-parent line"
        );
        let shown = repo.short_log(&base, &second, 1).unwrap();
        assert!(
            shown[0].ends_with("Merge phase b") && shown[1] == "… and 1 more",
            "{shown:?}"
        );
        repo.fast_forward(&first).unwrap();
        repo.fast_forward(&second).unwrap();
        assert_eq!(repo.head().unwrap(), second);
        assert_eq!(
            repo.tree_of("HEAD").unwrap(),
            repo.tree_of(&second).unwrap()
        );
        assert!(dir.path().join("a.txt").exists() && dir.path().join("b.txt").exists());
        assert_eq!(
            repo.merge_base("cp/r/b", "HEAD").unwrap(),
            repo.resolve("cp/r/b").unwrap()
        );
        // Not a descendant: refused, nothing moved.
        assert!(
            repo.fast_forward(&base).is_ok(),
            "an ancestor is already contained"
        );
        tree_a.checkout("cp/r/a").unwrap();
        commit_in(&a, "late.txt", "late\n");
        let late = tree_a.head().unwrap();
        commit_in(dir.path(), "main.txt", "main\n");
        let before = repo.head().unwrap();
        assert!(repo.fast_forward(&late).is_err());
        assert_eq!(repo.head().unwrap(), before);
        assert_eq!(repo.git(&["status", "--porcelain"]).unwrap(), "");
    }

    #[test]
    fn a_conflict_is_aborted_and_named() {
        let (dir, repo) = repo();
        let base = repo.head().unwrap();
        let trees = tempfile::tempdir().unwrap();
        let (a, b) = (trees.path().join("a"), trees.path().join("b"));
        repo.add_worktree(&a, "cp/r/a", &base).unwrap();
        repo.add_worktree(&b, "cp/r/b", &base).unwrap();
        commit_in(&a, "shared.txt", "one\nTWO from a\nthree\n");
        commit_in(&b, "shared.txt", "one\nTWO from b\nthree\n");
        assert!(matches!(
            repo.merge("cp/r/a", "Merge phase a").unwrap(),
            MergeOutcome::Merged { .. }
        ));
        let before = repo.head().unwrap();
        let outcome = repo.merge("cp/r/b", "Merge phase b").unwrap();
        assert_eq!(
            outcome,
            MergeOutcome::Conflict {
                files: vec!["shared.txt".into()]
            }
        );
        // Nothing half-merged: same commit, clean tree, a's content.
        assert_eq!(repo.head().unwrap(), before);
        assert_eq!(repo.git(&["status", "--porcelain"]).unwrap(), "");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("shared.txt")).unwrap(),
            "one\nTWO from a\nthree\n"
        );
        // The branch is kept for a merge by hand.
        assert!(repo.has_branch("cp/r/b"));
    }

    #[test]
    fn an_untracked_copy_identical_to_the_branchs_does_not_stop_the_merge() {
        let (dir, repo) = repo();
        let base = repo.head().unwrap();
        let trees = tempfile::tempdir().unwrap();
        let (a, b) = (trees.path().join("a"), trees.path().join("b"));
        repo.add_worktree(&a, "cp/r/a", &base).unwrap();
        repo.add_worktree(&b, "cp/r/b", &base).unwrap();
        commit_in(&a, "same.txt", "written by both\n");
        commit_in(&b, "other.txt", "theirs\n");
        // Both trees wrote `same.txt`; the project's copy is untracked and identical.
        std::fs::write(dir.path().join("same.txt"), "written by both\n").unwrap();
        assert!(matches!(
            repo.merge("cp/r/a", "Merge phase a").unwrap(),
            MergeOutcome::Merged { .. }
        ));
        // A different untracked copy is someone's work: the merge refuses and keeps it.
        std::fs::write(dir.path().join("other.txt"), "mine\n").unwrap();
        assert!(repo.merge("cp/r/b", "Merge phase b").is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("other.txt")).unwrap(),
            "mine\n"
        );
    }

    #[test]
    fn a_worktree_deleted_by_hand_is_still_removed() {
        let (_dir, repo) = repo();
        let base = repo.head().unwrap();
        let trees = tempfile::tempdir().unwrap();
        let gone = trees.path().join("gone");
        repo.add_worktree(&gone, "cp/r/gone", &base).unwrap();
        std::fs::remove_dir_all(&gone).unwrap();
        repo.remove_worktree(&gone, "cp/r/gone").unwrap();
        assert!(!repo.has_branch("cp/r/gone"));
        assert_eq!(repo.git(&["worktree", "list"]).unwrap().lines().count(), 1);
    }
}
