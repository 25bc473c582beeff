//! Edits made through an agent's shell (`sed -i`, `cat > f`), which no edit tool reports.
//!
//! Every hook call of a session saves a [`WorkTreeSnapshot`] (git's status, plus each listed
//! file's size and mtime) under the worker's state dir, one file per session, written
//! atomically (not synced: it is a cache). After a shell tool call (the descriptor's `shell_tools`: Claude Code's `Bash`,
//! Gemini CLI's `run_shell_command`, Codex CLI's shell) the hook compares the work tree with
//! the session's saved snapshot, and the files that changed fire callbacks as if an edit tool
//! had changed them. Only a change of a file's content counts: `git add -A && git commit` after
//! a `sed -i` changes what git says of the file, not the file, and fires nothing again. The
//! first shell call of a session has nothing to compare with and fires nothing. Context
//! Pilot's own `.context-pilot/` is never reported.
//!
//! One `git status` per hook call at most, and none after an edit tool's call: the session's
//! snapshot is then restamped for the files the payload names, which are all the agent wrote
//! ([`ShellSnapshots::restamp`]), and, when blocking callbacks answered the edit, for every
//! file it lists too (a callback's writes to files it does not list are older than the
//! restamp, which the next comparison tells from a shell's); after a shell call the snapshot
//! taken to compare is saved as it is, or restamped the same way after callbacks.
//!
//! It is on by default; `{"hooks": {"shell_edits": false}}` in `config.json` turns it off.

use std::path::PathBuf;

use cp_base::{ChangeKind, FileChange, Project, STATE_DIR, WorkerId};
use cp_git::{FileStatus, Git, WorkTreeSnapshot};
use serde::{Deserialize, Serialize};

use crate::{AgentEdit, EventKind, HookEvent, HookPayload, ToolCallPayload};

/// The key of the section in `config.json`.
pub const HOOKS_CONFIG_KEY: &str = "hooks";

/// `{"hooks": {"shell_edits": true}}`: what the hook receiver does beyond the edit tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// After a shell tool call, fire callbacks for the files it changed (default on).
    pub shell_edits: bool,
}

impl Default for HooksConfig {
    fn default() -> Self {
        Self { shell_edits: true }
    }
}

impl HooksConfig {
    /// The section, or the default and the problem to tell the person when it is invalid.
    pub fn load(project: &Project) -> (Self, Option<String>) {
        match project.config().section::<Self>(HOOKS_CONFIG_KEY) {
            Ok(config) => (config, None),
            Err(e) => (
                Self::default(),
                Some(format!(
                    "config.json '{HOOKS_CONFIG_KEY}': {e}; expected e.g. {{\"shell_edits\": false}} — shell edits are detected meanwhile"
                )),
            ),
        }
    }
}

/// The saved snapshots of one worker's sessions.
pub struct ShellSnapshots {
    dir: PathBuf,
    root: PathBuf,
    git: Git,
}

impl ShellSnapshots {
    /// Those of `worker` in `project`.
    pub fn new(project: &Project, worker: &WorkerId) -> Self {
        Self {
            dir: project.state_dir(worker).join("shell-snapshots"),
            root: project.root().to_path_buf(),
            git: Git { path_env: None },
        }
    }

    /// The file of `session`: its id, made safe as a file name.
    fn file(&self, session: &str) -> PathBuf {
        let safe: String = session
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(128)
            .collect();
        self.dir.join(format!("{safe}.json"))
    }

    /// The work tree now; `None` outside git (nothing to compare).
    pub fn take(&self) -> Option<WorkTreeSnapshot> {
        WorkTreeSnapshot::take(&self.git, &self.root)
            .map_err(|e| tracing::debug!("no work tree snapshot: {e}"))
            .ok()
    }

    /// `earlier` with the files at `paths` (project-relative) stamped as they are now: the
    /// work tree after edits that wrote those files and nothing else, without `git status`.
    pub fn restamp(&self, earlier: WorkTreeSnapshot, paths: &[String]) -> WorkTreeSnapshot {
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        earlier.restamped(&self.root, &paths)
    }

    /// The snapshot saved at the session's previous hook call.
    pub fn previous(&self, session: &str) -> Option<WorkTreeSnapshot> {
        let text = std::fs::read(self.file(session)).ok()?;
        serde_json::from_slice(&text)
            .map_err(|e| tracing::warn!("ignoring a broken shell snapshot of {session}: {e}"))
            .ok()
    }

    /// Saves `now` as the session's latest snapshot, atomically but not synced: a snapshot a
    /// crash took back or broke is read as none, which is what a session's first call has.
    pub fn save(&self, session: &str, now: &WorkTreeSnapshot) {
        let bytes = match serde_json::to_vec(now) {
            Ok(bytes) => bytes,
            Err(e) => return tracing::warn!("cannot encode the shell snapshot of {session}: {e}"),
        };
        if let Err(e) = cp_base::write_atomic_cache(&self.file(session), &bytes) {
            tracing::warn!("cannot save the shell snapshot of {session}: {e}");
        }
    }

    /// The files that changed between `earlier` and `now`, as edits (created, modified or
    /// deleted, by what is on disk now), without Context Pilot's own state.
    pub fn changes(&self, earlier: &WorkTreeSnapshot, now: &WorkTreeSnapshot) -> Vec<FileChange> {
        now.changed_since(earlier, &self.root)
            .into_iter()
            .filter(|path| !path.starts_with(&format!("{STATE_DIR}/")) && path != STATE_DIR)
            .map(|path| {
                let new = matches!(
                    now.stamp(&path).map(|s| s.status),
                    Some(FileStatus::Untracked | FileStatus::Added)
                ) && earlier.stamp(&path).is_none();
                let kind = if !self.root.join(&path).exists() {
                    ChangeKind::Deleted
                } else if new {
                    ChangeKind::Created
                } else {
                    ChangeKind::Modified
                };
                FileChange::new(path, kind)
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// At a hook call: which shell tool ran, what it changed, and the snapshot the next call
// compares with.

/// What may have been written since the work tree's last snapshot, besides the files the
/// payload names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Since {
    /// Nothing: no callback reported, so none of this call's blocking runs wrote files.
    NamedOnly,
    /// Whatever the blocking callbacks that answered this edit wrote, before they ended.
    Callbacks,
    /// Anything (a stop's tests, a session's start): only `git status` can tell.
    Anything,
}

/// The snapshot to save for the session's next shell call, with one `git status` at most
/// between this call and the last: the one a shell call of this call took, or the session's
/// last, restamped. After `NamedOnly` the snapshot a shell call just took is still true, and
/// without one the session's last restamped for the `named` files is. After `Callbacks` the
/// same snapshot is restamped for the named files and every file it lists: what the callbacks
/// wrote to those is taken as it is now. A file they made or changed that it does not list
/// (new, or committed until then) is one that `changed_since` counts only when it was written
/// after this restamp (its change time against the snapshot's, with the clock's slack), so the
/// next shell call takes their writes for theirs, and still sees every file it writes itself.
/// Otherwise (`Anything`, a tool whose paths are not all named, a session's first call) a new
/// snapshot.
pub(crate) fn next_snapshot(
    snapshots: &ShellSnapshots,
    session: &str,
    since: Since,
    shell_now: Option<cp_git::WorkTreeSnapshot>,
    named: Option<&[String]>,
) -> Option<cp_git::WorkTreeSnapshot> {
    if since == Since::NamedOnly
        && let Some(now) = shell_now
    {
        return Some(now);
    }
    let (Some(named), false) = (named, since == Since::Anything) else {
        return snapshots.take();
    };
    let Some(earlier) = shell_now.or_else(|| snapshots.previous(session)) else {
        return snapshots.take();
    };
    if since == Since::NamedOnly {
        return Some(snapshots.restamp(earlier, named));
    }
    let mut paths: Vec<String> = earlier.paths().map(str::to_owned).collect();
    paths.extend(named.iter().cloned());
    Some(snapshots.restamp(earlier, &paths))
}

/// The shell tool the call (or the batch) of `event` ran, if any: after it, the work tree is
/// compared with the session's last snapshot.
pub(crate) fn shell_tool_ran(event: HookEvent, payload: &HookPayload) -> Option<String> {
    let is_shell = |call: &&ToolCallPayload| call.is_shell_tool(event.agent);
    let call = match event.kind() {
        EventKind::AfterEdit => Some(&payload.call).filter(is_shell),
        EventKind::AfterBatch => payload.tool_calls.iter().flatten().find(is_shell),
        _ => None,
    };
    call.and_then(|call| call.tool_name.clone())
}

/// Adds to `edits` the files the shell tool `shell` changed since the session's previous
/// hook call that no edit of `edits` names.
pub(crate) fn add_shell_edits(
    snapshots: &ShellSnapshots,
    payload: &HookPayload,
    project: &Project,
    session: &str,
    shell: String,
    edits: &mut Vec<AgentEdit>,
) -> Option<cp_git::WorkTreeSnapshot> {
    let now = snapshots.take()?;
    let Some(before) = base_snapshot(snapshots, payload, project, session) else {
        return Some(now);
    };
    let named: Vec<&str> = edits
        .iter()
        .flat_map(|e| e.changes.iter().map(|c| c.path.as_str()))
        .collect();
    let by_shell: Vec<_> = snapshots
        .changes(&before, &now)
        .into_iter()
        .filter(|change| !named.contains(&change.path.as_str()))
        .collect();
    if !by_shell.is_empty() {
        edits.push(AgentEdit {
            tool: shell,
            changes: by_shell,
        });
    }
    Some(now)
}

/// What the work tree was at the session's previous hook call. A subagent's first call
/// compares with its main session's last snapshot in the same tree, or, in the fresh
/// worktree Claude Code made for it (`…/agent-<id>`), with the clean checkout.
pub(crate) fn base_snapshot(
    snapshots: &ShellSnapshots,
    payload: &HookPayload,
    project: &Project,
    session: &str,
) -> Option<cp_git::WorkTreeSnapshot> {
    if let Some(earlier) = snapshots.previous(session) {
        return Some(earlier);
    }
    let agent = payload.subagent()?;
    if let Some(main) = payload.session_id.as_deref()
        && let Some(earlier) = snapshots.previous(main)
    {
        return Some(earlier);
    }
    let own_worktree = project.worktree_of().is_some()
        && project
            .root()
            .file_name()
            .is_some_and(|name| name.to_string_lossy() == format!("agent-{agent}"));
    own_worktree.then(cp_git::WorkTreeSnapshot::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(root: &std::path::Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    fn commit_all(root: &std::path::Path) {
        git(root, &["add", "-A"]);
        git(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "work",
            ],
        );
    }

    #[test]
    fn each_session_compares_with_its_own_previous_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        std::fs::write(root.join("b.txt"), "one\n").unwrap();
        commit_all(&root);
        let project = Project::at(&root);
        let snaps = ShellSnapshots::new(&project, &WorkerId::default());

        assert!(
            snaps.previous("s1").is_none(),
            "a new session has no snapshot"
        );
        let start = snaps.take().unwrap();
        snaps.save("s1", &start);
        snaps.save("s/../2", &start);

        // `sed -i` on a committed file, a new file, and a state file of ours.
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        std::fs::create_dir_all(root.join(STATE_DIR)).unwrap();
        std::fs::write(root.join(STATE_DIR).join("x.json"), "{}").unwrap();
        let now = snaps.take().unwrap();
        let changes = snaps.changes(&snaps.previous("s1").unwrap(), &now);
        assert_eq!(
            changes,
            [
                FileChange::new("a.txt", ChangeKind::Modified),
                FileChange::new("new.txt", ChangeKind::Created),
            ]
        );
        snaps.save("s1", &now);
        assert!(
            snaps
                .changes(&snaps.previous("s1").unwrap(), &snaps.take().unwrap())
                .is_empty()
        );

        // Session 2 still compares with the start; a second edit of a dirty file is seen.
        std::fs::write(root.join("a.txt"), "three, longer\n").unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        let later = snaps.take().unwrap();
        let s1: Vec<String> = snaps
            .changes(&snaps.previous("s1").unwrap(), &later)
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(s1, ["a.txt", "b.txt"]);
        let s2 = snaps.changes(&snaps.previous("s/../2").unwrap(), &later);
        assert!(
            s2.contains(&FileChange::new("b.txt", ChangeKind::Deleted)),
            "{s2:?}"
        );
        assert!(
            s2.contains(&FileChange::new("new.txt", ChangeKind::Created)),
            "{s2:?}"
        );
        assert!(snaps.file("s/../2").starts_with(&snaps.dir));

        // Committing what was edited is no edit.
        snaps.save("s1", &later);
        commit_all(&root);
        let committed = snaps.take().unwrap();
        assert!(committed.is_empty());
        assert_eq!(
            snaps.changes(&snaps.previous("s1").unwrap(), &committed),
            [],
            "a commit is not an edit"
        );
    }

    #[test]
    fn the_config_section_is_strict_and_on_by_default() {
        assert!(HooksConfig::default().shell_edits);
        let off: HooksConfig =
            serde_json::from_value(serde_json::json!({"shell_edits": false})).unwrap();
        assert!(!off.shell_edits);
        assert!(
            serde_json::from_value::<HooksConfig>(serde_json::json!({"shell_edit": false}))
                .is_err()
        );
    }
}
