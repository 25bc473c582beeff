//! Where HEAD is: its commit (none on a branch yet to be born) and its branch (none when
//! detached). An agent session records it when it begins, so the stop gate can tell what the
//! session committed ([`Git::committed_since`](crate::Git::committed_since)).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::git::{Git, GitError};

/// HEAD at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The commit HEAD names; `None` before the first commit (an unborn branch).
    pub commit: Option<String>,
    /// The branch checked out, by its short name (`main`); `None` when HEAD is detached.
    pub branch: Option<String>,
}

impl Head {
    /// The commit abbreviated for messages (`1a2b3c4`), or `no commit yet`.
    pub fn short(&self) -> String {
        match &self.commit {
            Some(commit) => commit.chars().take(7).collect(),
            None => "no commit yet".to_owned(),
        }
    }
}

impl Git {
    /// Where HEAD is in the repository at `root`.
    pub fn head_state(&self, root: &Path) -> Result<Head, GitError> {
        let commit = self
            .run_answer(root, &["rev-parse", "-q", "--verify", "HEAD^{commit}"])?
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned());
        let branch = self
            .run_answer(root, &["symbolic-ref", "-q", "--short", "HEAD"])?
            .map(|out| String::from_utf8_lossy(&out).trim().to_owned());
        Ok(Head { commit, branch })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::{git, repo};

    #[test]
    fn head_before_and_after_the_first_commit_and_detached() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        let g = Git { path_env: None };
        assert_eq!(
            g.head_state(dir.path()).unwrap(),
            Head {
                commit: None,
                branch: Some("main".into())
            }
        );
        let dir = repo();
        let head = g.head_state(dir.path()).unwrap();
        assert_eq!(head.commit.as_deref().map(str::len), Some(40));
        assert_eq!(head.short().len(), 7);
        git(dir.path(), &["checkout", "-q", "--detach"]);
        let detached = g.head_state(dir.path()).unwrap();
        assert_eq!(detached.branch, None);
        assert_eq!(detached.commit, head.commit);
        // Outside a repository: an error, not "no commit".
        let plain = tempfile::tempdir().unwrap();
        assert!(g.head_state(plain.path()).is_err());
    }
}
