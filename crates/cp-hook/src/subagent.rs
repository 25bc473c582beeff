//! When a subagent ends (Claude Code's and Codex CLI's `SubagentStop`): the stop gate for the
//! subagent's own work.
//!
//! Every edit hook that fires inside a subagent (its payload names the `agent_id`) records
//! the files the subagent changed ([`SubagentEdits`], one file per subagent under the worker's
//! state dir). At its stop:
//!
//! - a subagent that changed no file (a reader, a reviewer) and Claude Code's compaction
//!   agent (`agent_type` empty) pass at once, whatever the tree holds;
//! - otherwise the stop gate runs for the subagent, with a state of its own (its blocks,
//!   its last tests and what it was told are kept apart from the main session's): the tests
//!   run when its files trigger them, and it is held while they are red, or, when it works
//!   in a worktree of its own, while its changes there are uncommitted (nobody else will
//!   commit them). A subagent in the main work tree is not held for uncommitted files: the
//!   main session commits them, and its own stop gate asks for that.
//! - like `Stop`, it is held at most `max_blocks` times in a row; then it may end and the
//!   person is told what is left.

use std::path::PathBuf;

use cp_base::{FileChange, Project, WorkerId, write_atomic};
use cp_git::Head;
use cp_orchestrate::{Decision, StopInput};

use crate::stop::StopSkipped;
use cp_agent_cli::Reply;
use cp_host::Host;

/// The files each subagent of a worker changed, kept between its hook calls.
pub struct SubagentEdits {
    dir: PathBuf,
}

impl SubagentEdits {
    /// Those of `worker` in `project`.
    pub fn new(project: &Project, worker: &WorkerId) -> Self {
        Self {
            dir: project.state_dir(worker).join("subagent-edits"),
        }
    }

    /// The file of the subagent session `key`, made safe as a file name.
    fn file(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{}.json", safe_name(key, 128)))
    }

    /// Adds `changes` to what the subagent session `key` changed.
    pub fn record(&self, key: &str, changes: &[FileChange]) {
        if changes.is_empty() {
            return;
        }
        let mut paths = self.edited(key);
        for change in changes {
            if !paths.contains(&change.path) {
                paths.push(change.path.clone());
            }
        }
        let bytes = match serde_json::to_vec(&paths) {
            Ok(bytes) => bytes,
            Err(e) => return tracing::warn!("cannot encode the edits of {key}: {e}"),
        };
        if let Err(e) = write_atomic(&self.file(key), &bytes) {
            tracing::warn!("cannot record the edits of subagent {key}: {e}");
        }
    }

    /// The files the subagent session `key` changed, in the order first seen.
    pub fn edited(&self, key: &str) -> Vec<String> {
        std::fs::read(self.file(key))
            .ok()
            .and_then(|bytes| {
                serde_json::from_slice(&bytes)
                    .map_err(|e| tracing::warn!("ignoring broken edits of subagent {key}: {e}"))
                    .ok()
            })
            .unwrap_or_default()
    }
}

/// `text` with every character outside `[A-Za-z0-9_-]` made `_`, at most `max` long.
fn safe_name(text: &str, max: usize) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// The worker whose stop gate state is the subagent's own: `sub-<agent id>`.
fn subagent_worker(agent_id: &str) -> Option<WorkerId> {
    WorkerId::new(format!("sub-{}", safe_name(agent_id, 60))).ok()
}

/// The subagent that ends: its id, its type (empty for the compaction agent), its session
/// key (the one its edit hooks recorded under), and where HEAD was at its first event.
pub struct EndingSubagent<'a> {
    pub agent_id: Option<&'a str>,
    pub agent_type: Option<&'a str>,
    pub key: &'a str,
    pub base: Option<Head>,
}

/// Runs the stop gate for the subagent that ends (see the module doc).
pub fn at_subagent_stop(host: &Host, ending: &EndingSubagent<'_>) -> Result<Reply, StopSkipped> {
    // Claude Code's compaction runs as a subagent without a type: never held.
    if ending.agent_type.is_some_and(str::is_empty) {
        return Ok(Reply::Nothing);
    }
    let Some(agent_id) = ending.agent_id.filter(|id| !id.is_empty()) else {
        return Ok(Reply::Nothing);
    };
    let project = host.project();
    let edited = SubagentEdits::new(project, host.worker()).edited(ending.key);
    if edited.is_empty() {
        tracing::info!(
            agent = agent_id,
            "subagent stop: it changed no file, so it may end"
        );
        return Ok(Reply::Nothing);
    }
    let Some(worker) = subagent_worker(agent_id) else {
        return Ok(Reply::Nothing);
    };
    let in_worktree = project.worktree_of().is_some();
    let outcome = host.judge_stop(&StopInput {
        project: project.clone(),
        worker,
        session: ending.key.to_owned(),
        gate_commits: in_worktree,
        base: ending.base.clone(),
    })?;
    let report = &outcome.report;
    if let Some(why) = &report.skipped {
        tracing::info!("subagent stop gate passed without checking: {why}");
    }
    Ok(match outcome.decision {
        Decision::Pass => outcome.notice.map_or(Reply::Nothing, Reply::Notice),
        Decision::Block { reason } => {
            let red = !report.tests_reused && report.tests_hold();
            let uncommitted = in_worktree && !report.uncommitted_gated.is_empty();
            if red {
                Reply::Block(reason)
            } else if uncommitted {
                Reply::Block(format!(
                    "{reason}\n\nYou work in a worktree of your own ({}): commit your changes \
                     there before you stop, or they are left behind: {}",
                    project.root().display(),
                    report.uncommitted_gated.join(", ")
                ))
            } else {
                // Its tests are green (or none are due) and its changes are the main
                // session's to commit: the stop gate's message is for the main session.
                Reply::Nothing
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_base::ChangeKind;

    #[test]
    fn edits_are_kept_per_subagent_session_without_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        let edits = SubagentEdits::new(&project, &WorkerId::default());
        assert!(edits.edited("s.agent-a1").is_empty());
        edits.record(
            "s.agent-a1",
            &[FileChange::new("a.py", ChangeKind::Created)],
        );
        edits.record(
            "s.agent-a1",
            &[
                FileChange::new("a.py", ChangeKind::Modified),
                FileChange::new("b.py", ChangeKind::Modified),
            ],
        );
        assert_eq!(edits.edited("s.agent-a1"), ["a.py", "b.py"]);
        assert!(edits.edited("s.agent-b2").is_empty());
        assert!(edits.file("../x/y").starts_with(&edits.dir));
        assert_eq!(subagent_worker("a1f0").unwrap().as_str(), "sub-a1f0");
        assert!(subagent_worker(&"x".repeat(200)).is_some());
    }
}
