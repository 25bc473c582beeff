//! What `context.json` records of each phase of a workflow with `depends_on`: its status,
//! where its work is (branch, worktree, base commit, merge commit), so a resumed run finds it,
//! and the merge queue's proof of its merge (and of its red tries).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::proof::MergeProof;

/// Where a phase of a graph workflow stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    /// Waiting for the phases it depends on (or for a free slot).
    #[default]
    Waiting,
    /// Its agent is at work (or was, when the run crashed: a resume continues it).
    Running,
    /// Its agent finished with the stop gate satisfied and the work committed; its branch is
    /// still to be merged.
    Finished,
    /// Its work is on the run's branch (merged, or made there when it ran alone).
    Merged,
    /// Its agent failed, or left failing tests or uncommitted work; its branch is kept.
    Failed,
    /// Its branch conflicts with the run's branch; the branch is kept.
    Conflict,
    /// On the skip list.
    Skipped,
    /// Its agent was stopped by Ctrl-C (or SIGTERM); its worktree and branch are kept and
    /// `--resume` continues it.
    Interrupted,
    /// Its branch passes its tests alone but fails them merged with the run's branch, after
    /// every try `max_merge_attempts` allows: the person decides (send it back again, keep it
    /// aside, abort); its worktree and branch are kept.
    Red,
    /// The person kept it aside after its merge stayed red: its branch is kept, its work is
    /// not on the run's branch, and the phases that depend on it do not run.
    KeptAside,
}

impl PhaseStatus {
    /// The `snake_case` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Running => "running",
            Self::Finished => "finished",
            Self::Merged => "merged",
            Self::Failed => "failed",
            Self::Conflict => "conflict",
            Self::Skipped => "skipped",
            Self::Interrupted => "interrupted",
            Self::Red => "red",
            Self::KeptAside => "kept_aside",
        }
    }

    /// Whether phases that depend on this one may start.
    pub fn lets_dependents_run(self) -> bool {
        matches!(self, Self::Merged | Self::Skipped)
    }
}

/// One phase of a graph workflow, as `context.json` keeps it (`phase_runs.<id>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// Where it stands.
    pub status: PhaseStatus,
    /// The agent that runs it (`builtin`, `claude`, …): its own `agent:`, else the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `cp/<run id>/<phase id>`, when it runs in its own worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// `.context-pilot/worktrees/<run id>/<phase id>`, when it runs in its own worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// The commit of the run's branch its work started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The merge commit that brought its branch into the run's branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit: Option<String>,
    /// Commits its work made.
    #[serde(default)]
    pub commits: u32,
    /// Input tokens of all its requests.
    #[serde(default)]
    pub tokens: u64,
    /// Milliseconds its agent worked (all attempts).
    #[serde(default)]
    pub elapsed_ms: u64,
    /// Why it failed or conflicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A phase it depends on runs again: its agent is being stopped, and its branch will be
    /// kept as superseded (a resume finishes that first).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superseding: bool,
    /// Its earlier runs whose input changed under them (a phase they depended on ran again):
    /// their branches, kept with every commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<SupersededRun>,
    /// The proof of its merge: the combined tree tested before the run's branch moved to it
    /// (for a phase that worked in the project's tree, that tree after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<MergeProof>,
    /// Its tries whose combined tree failed the tests, oldest first, each with the failing
    /// output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_merges: Vec<MergeProof>,
    /// Tries granted beyond `max_merge_attempts` ("Send it back again").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extra_attempts: u32,
    /// Set while it works again because its merge was red: what it is told, and what its
    /// branch is brought up to date with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_back: Option<SentBack>,
}

/// A phase sent back by the merge queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentBack {
    /// The commit of the run's branch its branch is brought up to date with (merged into it
    /// before its agent starts again).
    pub onto: String,
    /// What landed on the run's branch since its branch parted from it, one commit a line
    /// (`<short hash> <subject>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<String>,
    /// It works in a worktree of its own (else in the project's tree).
    pub own_tree: bool,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An earlier run of a phase, stopped or set aside because a phase it depends on ran again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupersededRun {
    /// Where its work is kept: `cp/<run id>/<phase id>@<iteration>`.
    pub branch: String,
    /// The branch's last commit.
    pub commit: String,
    /// Its commits since its base.
    pub commits: u32,
    /// Why, e.g. `phase plan runs again`.
    pub reason: String,
}

impl PhaseRecord {
    /// The summary line printed at the end of a headless run: status, commits, merge commit,
    /// tokens, time.
    pub fn summary(&self, phase: &str) -> String {
        let merge = self.merge_commit.as_deref().map_or_else(
            || "no merge commit".to_owned(),
            |c| format!("merge {}", short(c)),
        );
        #[expect(
            clippy::cast_precision_loss,
            reason = "milliseconds shown as seconds with one decimal"
        )]
        let seconds = self.elapsed_ms as f64 / 1000.0;
        let mut line = format!(
            "phase {phase}: {}, {} commit{}, {merge}, {} tokens, {seconds:.1} s",
            self.status.as_str(),
            self.commits,
            if self.commits == 1 { "" } else { "s" },
            self.tokens
        );
        if !self.red_merges.is_empty() {
            let n = self.red_merges.len();
            let _ = write!(line, ", {n} red merge{}", if n == 1 { "" } else { "s" });
        }
        if let Some(branch) = &self.branch
            && !matches!(self.status, PhaseStatus::Merged | PhaseStatus::Skipped)
        {
            let _ = write!(line, ", branch {branch} kept");
        }
        if let Some(error) = &self.error {
            let _ = write!(line, " ({error})");
        }
        line
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_status_commits_merge_tokens_and_time() {
        let record = PhaseRecord {
            status: PhaseStatus::Merged,
            merge_commit: Some("0123456789abcdef".into()),
            commits: 2,
            tokens: 1500,
            elapsed_ms: 2340,
            ..PhaseRecord::default()
        };
        assert_eq!(
            record.summary("api"),
            "phase api: merged, 2 commits, merge 0123456789ab, 1500 tokens, 2.3 s"
        );
        let failed = PhaseRecord {
            status: PhaseStatus::Failed,
            branch: Some("cp/r/ui".into()),
            commits: 1,
            error: Some("uncommitted work".into()),
            ..PhaseRecord::default()
        };
        assert_eq!(
            failed.summary("ui"),
            "phase ui: failed, 1 commit, no merge commit, 0 tokens, 0.0 s, branch cp/r/ui kept (uncommitted work)"
        );
    }
}
