//! What a session committed: the files whose committed state changed between the HEAD the
//! session began at and HEAD now.
//!
//! The usual case is one `git merge-base --is-ancestor` and one `git diff --raw` of the two
//! commits: their net change, so work committed and then reverted counts as nothing, and a
//! merge counts with what it brought in. The awkward cases are named in [`Committed::note`]:
//! - another branch checked out: what was committed since the switch (HEAD's reflog says
//!   where it was), not how the two branches differ, even when the other branch is ahead;
//! - HEAD no longer descends from where the session began (a rebase, a reset, an amended
//!   commit): how HEAD's files differ from that commit;
//! - the repository had no commit when the session began: every file of HEAD;
//! - no commit now (a new orphan branch), or the session's commit gone: nothing.

use std::path::Path;

use crate::changed_file::{ChangedFile, EntryKind, FileStatus, SubmoduleChange};
use crate::git::{Git, GitError};
use crate::head::Head;

/// HEAD's reflog entries read when looking for a branch switch.
const REFLOG_ENTRIES: &str = "200";

/// The files a session committed, and how that was worked out when it was not simple.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Committed {
    /// The files whose committed state differs, sorted by path, the host's runtime files left
    /// out.
    pub files: Vec<ChangedFile>,
    /// The commit HEAD was compared with (the session's start, or a branch switch).
    pub since: Option<String>,
    /// Set when HEAD did not simply move forward: what happened and what `files` means.
    pub note: Option<String>,
}

impl Git {
    /// What was committed in the repository at `root` between `base` (HEAD when the session
    /// began) and `now` (HEAD now). See the module's documentation for the awkward cases.
    pub fn committed_since(
        &self,
        root: &Path,
        base: &Head,
        now: &Head,
    ) -> Result<Committed, GitError> {
        let Some(to) = now.commit.as_deref() else {
            return Ok(Committed {
                note: base.commit.is_some().then(|| {
                    format!(
                        "HEAD has no commit now (branch {}); nothing committed is listed",
                        now.branch.as_deref().unwrap_or("?")
                    )
                }),
                ..Committed::default()
            });
        };
        let Some(from) = base.commit.as_deref() else {
            return Ok(Committed {
                files: self.every_file(root)?,
                since: None,
                note: None,
            });
        };
        if from == to {
            return Ok(Committed::default());
        }
        if base.branch != now.branch
            && let Some(switched) = self.switch_point(root, now.branch.as_deref())
            && (switched == to || self.is_ancestor(root, &switched, to)?)
        {
            let note = format!(
                "branch {} was checked out (the session began on {}): listing what was \
                 committed since the switch",
                now.branch.as_deref().unwrap_or("?"),
                base.branch.as_deref().unwrap_or("a detached HEAD"),
            );
            // `git checkout -b fix` where the session began is plain forward work.
            let note = (switched != from).then_some(note);
            return self.diff_commits(root, &switched, to, note);
        }
        let ancestor = match self.is_ancestor(root, from, to) {
            Ok(ancestor) => ancestor,
            Err(_) if !self.exists(root, from)? => {
                return Ok(Committed {
                    note: Some(format!(
                        "the commit this session began at ({}) no longer exists; nothing \
                         committed is listed",
                        base.short()
                    )),
                    ..Committed::default()
                });
            }
            Err(e) => return Err(e),
        };
        if ancestor {
            return self.diff_commits(root, from, to, None);
        }
        let note = format!(
            "HEAD no longer descends from {}, where this session began (a rebase, a reset or \
             an amended commit): listing how HEAD's files differ from it",
            base.short()
        );
        self.diff_commits(root, from, to, Some(note))
    }

    fn exists(&self, root: &Path, commit: &str) -> Result<bool, GitError> {
        let object = format!("{commit}^{{commit}}");
        Ok(self
            .run_answer(root, &["rev-parse", "-q", "--verify", &object])?
            .is_some())
    }

    fn is_ancestor(&self, root: &Path, from: &str, to: &str) -> Result<bool, GitError> {
        Ok(self
            .run_answer(root, &["merge-base", "--is-ancestor", from, to])?
            .is_some())
    }

    /// The commit HEAD was at right after the latest checkout of `branch`, from HEAD's
    /// reflog (`checkout: moving from A to B`).
    fn switch_point(&self, root: &Path, branch: Option<&str>) -> Option<String> {
        let branch = branch?;
        // No reflog (`core.logAllRefUpdates` off): no switch is known.
        let Ok(out) = self.run(
            root,
            &[
                "log",
                "-g",
                "-n",
                REFLOG_ENTRIES,
                "--format=%H%x09%gs",
                "HEAD",
            ],
        ) else {
            return None;
        };
        let suffix = format!(" to {branch}");
        String::from_utf8_lossy(&out).lines().find_map(|line| {
            let (commit, subject) = line.split_once('\t')?;
            (subject.starts_with("checkout: moving from ") && subject.ends_with(&suffix))
                .then(|| commit.to_owned())
        })
    }

    /// The net change between two commits, as `git diff --raw` lists it.
    fn diff_commits(
        &self,
        root: &Path,
        from: &str,
        to: &str,
        note: Option<String>,
    ) -> Result<Committed, GitError> {
        let out = self.run(
            root,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--raw",
                "-z",
                "-M",
                "--no-ext-diff",
                from,
                to,
                "--",
            ],
        )?;
        let mut files = parse_raw_diff(&out);
        files.retain(|f| !crate::status::is_host_runtime(&f.path));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Committed {
            files,
            since: Some(from.to_owned()),
            note,
        })
    }

    /// Every file of HEAD, as new: what the first commits of a repository brought.
    fn every_file(&self, root: &Path) -> Result<Vec<ChangedFile>, GitError> {
        let out = self.run(
            root,
            &["-c", "core.quotePath=false", "ls-tree", "-r", "-z", "HEAD"],
        )?;
        let mut files: Vec<ChangedFile> = out
            .split(|b| *b == 0)
            .filter_map(|record| {
                let text = String::from_utf8_lossy(record);
                let (meta, path) = text.split_once('\t')?;
                let mut file = ChangedFile::new(path, FileStatus::Added);
                if meta.starts_with("160000 ") {
                    file.kind = EntryKind::Submodule(SubmoduleChange {
                        new_commits: true,
                        ..SubmoduleChange::default()
                    });
                }
                Some(file)
            })
            .filter(|f| !crate::status::is_host_runtime(&f.path))
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }
}

/// Parses `git diff --raw -z`: `:mode mode oid oid STATUS\0path\0`, and for renames and
/// copies `…R100\0old\0new\0`.
fn parse_raw_diff(out: &[u8]) -> Vec<ChangedFile> {
    let mut records = out.split(|b| *b == 0).filter(|r| !r.is_empty());
    let mut files = Vec::new();
    while let Some(meta) = records.next() {
        let meta = String::from_utf8_lossy(meta);
        let fields: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, _, _, status] = fields.as_slice() else {
            tracing::debug!(record = %meta, "unexpected git diff --raw record");
            continue;
        };
        let Some(first) = records.next() else { break };
        let first = String::from_utf8_lossy(first).into_owned();
        let (status, path, renamed_from) = match status.as_bytes().first() {
            Some(b'R' | b'C') => {
                let Some(second) = records.next() else { break };
                let moved = if status.starts_with('R') {
                    FileStatus::Renamed
                } else {
                    FileStatus::Copied
                };
                (
                    moved,
                    String::from_utf8_lossy(second).into_owned(),
                    Some(first),
                )
            }
            Some(b'A') => (FileStatus::Added, first, None),
            Some(b'D') => (FileStatus::Deleted, first, None),
            Some(b'T') => (FileStatus::TypeChanged, first, None),
            _ => (FileStatus::Modified, first, None),
        };
        let kind = if *old_mode == "160000" || *new_mode == "160000" {
            EntryKind::Submodule(SubmoduleChange {
                new_commits: true,
                ..SubmoduleChange::default()
            })
        } else {
            EntryKind::File
        };
        files.push(ChangedFile {
            path,
            status,
            renamed_from,
            kind,
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::{commit_all, git, repo};

    fn g() -> Git {
        Git { path_env: None }
    }

    fn paths(c: &Committed) -> Vec<(&str, FileStatus)> {
        c.files
            .iter()
            .map(|f| (f.path.as_str(), f.status))
            .collect()
    }

    #[test]
    fn raw_records_of_every_kind() {
        let raw = b":100644 100644 aaa bbb M\0src/a b.rs\0:100644 100644 aaa aaa R100\0old.py\0new.py\0:000000 100644 000 aaa A\0x\0:160000 160000 aaa bbb M\0sub\0";
        let files = parse_raw_diff(raw);
        assert_eq!(files.len(), 4);
        assert_eq!(files[1].renamed_from.as_deref(), Some("old.py"));
        assert_eq!(files[1].path, "new.py");
        assert!(matches!(files[3].kind, EntryKind::Submodule(_)));
        assert!(files[3].is_own());
    }

    #[test]
    fn commits_forward_a_revert_and_a_merge() {
        let dir = repo();
        let root = dir.path();
        let base = g().head_state(root).unwrap();
        assert_eq!(
            g().committed_since(root, &base, &base).unwrap(),
            Committed::default()
        );

        std::fs::write(root.join("clean.txt"), "two\n").unwrap();
        std::fs::write(root.join("new.txt"), "n\n").unwrap();
        commit_all(root, "work");
        let now = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &now).unwrap();
        assert_eq!(
            paths(&c),
            [
                ("clean.txt", FileStatus::Modified),
                ("new.txt", FileStatus::Added)
            ]
        );
        assert_eq!(c.since, base.commit);
        assert!(c.note.is_none());

        // Committed, then reverted: nothing net.
        git(root, &["revert", "--no-edit", "HEAD"]);
        let reverted = g().head_state(root).unwrap();
        assert!(
            g().committed_since(root, &base, &reverted)
                .unwrap()
                .files
                .is_empty()
        );

        // A merge brings in what the other branch changed.
        git(
            root,
            &[
                "checkout",
                "-q",
                "-b",
                "side",
                base.commit.as_deref().unwrap(),
            ],
        );
        std::fs::write(root.join("side.txt"), "s\n").unwrap();
        commit_all(root, "side");
        git(root, &["checkout", "-q", "main"]);
        git(root, &["merge", "-q", "--no-edit", "side"]);
        let merged = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &merged).unwrap();
        assert_eq!(paths(&c), [("side.txt", FileStatus::Added)]);
    }

    #[test]
    fn a_branch_switch_lists_what_was_committed_since_the_switch() {
        let dir = repo();
        let root = dir.path();
        git(root, &["checkout", "-q", "-b", "other"]);
        std::fs::write(root.join("theirs.txt"), "t\n").unwrap();
        commit_all(root, "someone else's work");
        git(root, &["checkout", "-q", "main"]);
        let base = g().head_state(root).unwrap();

        git(root, &["checkout", "-q", "other"]);
        let switched = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &switched).unwrap();
        assert!(c.files.is_empty(), "{c:?}");
        assert!(
            c.note
                .as_deref()
                .unwrap()
                .contains("branch other was checked out")
        );

        std::fs::write(root.join("mine.txt"), "m\n").unwrap();
        commit_all(root, "the session's work");
        let now = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &now).unwrap();
        assert_eq!(paths(&c), [("mine.txt", FileStatus::Added)]);

        // A new branch made from where the session began is plain forward work.
        git(root, &["checkout", "-q", "main"]);
        git(root, &["checkout", "-q", "-b", "fix"]);
        std::fs::write(root.join("fix.txt"), "f\n").unwrap();
        commit_all(root, "fix");
        let fix = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &fix).unwrap();
        assert_eq!(paths(&c), [("fix.txt", FileStatus::Added)]);
        assert!(c.note.is_none());
    }

    #[test]
    fn a_reset_or_rebase_lists_how_head_differs_and_a_lost_commit_lists_nothing() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("clean.txt"), "two\n").unwrap();
        commit_all(root, "before the session");
        let base = g().head_state(root).unwrap();
        git(root, &["reset", "-q", "--hard", "HEAD~1"]);
        let reset = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &reset).unwrap();
        assert_eq!(paths(&c), [("clean.txt", FileStatus::Modified)]);
        assert!(
            c.note.as_deref().unwrap().contains("no longer descends"),
            "{c:?}"
        );

        let gone = Head {
            commit: Some("0123456789012345678901234567890123456789".into()),
            branch: Some("main".into()),
        };
        let c = g().committed_since(root, &gone, &reset).unwrap();
        assert!(c.files.is_empty());
        assert!(
            c.note.as_deref().unwrap().contains("no longer exists"),
            "{c:?}"
        );
    }

    #[test]
    fn unborn_heads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        git(root, &["config", "user.name", "T"]);
        git(root, &["config", "user.email", "t@example.invalid"]);
        let base = g().head_state(root).unwrap();
        assert!(
            g().committed_since(root, &base, &base)
                .unwrap()
                .files
                .is_empty()
        );
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::fs::create_dir_all(root.join(".context-pilot/state")).unwrap();
        std::fs::write(root.join(".context-pilot/state/x.json"), "{}").unwrap();
        commit_all(root, "first");
        let now = g().head_state(root).unwrap();
        let c = g().committed_since(root, &base, &now).unwrap();
        assert_eq!(paths(&c), [("a.txt", FileStatus::Added)]);

        git(root, &["checkout", "-q", "--orphan", "fresh"]);
        let orphan = g().head_state(root).unwrap();
        let c = g().committed_since(root, &now, &orphan).unwrap();
        assert!(c.files.is_empty());
        assert!(
            c.note.as_deref().unwrap().contains("no commit now"),
            "{c:?}"
        );
    }
}
