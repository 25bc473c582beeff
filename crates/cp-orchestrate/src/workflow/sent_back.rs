//! A red merge goes back to the phase that made it. Its try is recorded with the failing
//! output; while tries are left (`max_merge_attempts`, default 2), the phase works again: on
//! its branch brought up to date with the run's branch, in its worktree, its agent told what
//! failed and what landed under it (`prompts.rs`), and it is queued again when its gate
//! passes. After the last try the person decides, at an approval gate like a conflict's:
//! send it back again, keep it aside (its branch kept) or abort; with no answer the run stops
//! with exit code 3, naming the phase, the failing tests and the branch.

use std::fmt::Write as _;

use cp_git::{MergeOutcome, Repository};

use super::engine::Engine;
use super::error::{RedMerge, WorkflowError};
use super::phase_record::{PhaseStatus, SentBack};
use super::phase_tree::project_in;
use super::prompter::{ApprovalRequest, Choice, WorkflowEvent};
use super::proof::MergeProof;
use super::queue::run_branch;
use super::schema::Action;
use super::store::RunStatus;
use super::waves::EarlyEnd;

/// The commits of the run's branch listed for a phase sent back.
const LOGGED_COMMITS: usize = 20;

impl Engine<'_> {
    /// Phase `index`'s tree failed its test (`proof`): the try is recorded, and the phase goes
    /// back to work while tries are left, else to the person.
    pub(super) fn red(
        &mut self,
        repo: &Repository,
        index: usize,
        proof: MergeProof,
    ) -> Result<EarlyEnd, WorkflowError> {
        let record = self.record(index);
        record.red_merges.push(proof);
        let tries = record.red_merges.len();
        let branch = record.branch.clone().unwrap_or_default();
        let tree = record.worktree.clone();
        self.save()?;
        if let Some(tree) = tree {
            // Its worktree leaves the red candidate for its own branch.
            Repository::at(self.project.root().join(tree))
                .checkout(&branch)
                .map_err(|e| self.git_error(index, e))?;
        }
        if u32::try_from(tries).unwrap_or(u32::MAX) < self.allowed_tries(index) {
            self.send_back(repo, index)?;
            return Ok(None);
        }
        self.red_gate(repo, index)
    }

    /// The tries phase `index`'s merge has: `max_merge_attempts`, plus those the person
    /// granted.
    fn allowed_tries(&self, index: usize) -> u32 {
        let id = &self.workflow.phases[index].id;
        let extra = self
            .state
            .phase_runs
            .get(id)
            .map_or(0, |r| r.extra_attempts);
        self.workflow.max_merge_attempts(id).saturating_add(extra)
    }

    /// Sends phase `index` back to work: it runs again (in its worktree, on its branch brought
    /// up to date with the run's branch when it starts; in the project's tree when it worked
    /// there), its prompt saying what failed and what landed under it.
    pub(super) fn send_back(
        &mut self,
        repo: &Repository,
        index: usize,
    ) -> Result<(), WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let tip = repo.head().map_err(|e| self.git_error(index, e))?;
        let record = self.record(index).clone();
        let own_tree = record.worktree.is_some();
        let log = match (&record.branch, own_tree) {
            (Some(branch), true) => repo
                .merge_base(branch, &tip)
                .and_then(|parted| repo.short_log(&parted, &tip, LOGGED_COMMITS))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let failing = record
            .red_merges
            .last()
            .map(|p| p.test.failing())
            .unwrap_or_default();
        let attempt = u32::try_from(record.red_merges.len()).unwrap_or(u32::MAX);
        let allowed = self.allowed_tries(index);
        let record = self.record(index);
        record.status = PhaseStatus::Running;
        record.error = None;
        record.sent_back = Some(SentBack {
            onto: tip,
            log,
            own_tree,
        });
        self.save()?;
        let event = WorkflowEvent::SentBack {
            phase: id,
            own_tree,
            attempt,
            allowed,
            failing,
        };
        tracing::info!("{event}");
        self.prompter.on_event(&event);
        Ok(())
    }

    /// Brings a sent-back phase's branch up to date with the run's branch, in its worktree at
    /// `path`, before its agent starts: the commit it was sent back on is merged into its
    /// branch (done already when the merge finds nothing new).
    pub(super) fn bring_up_to_date(
        &self,
        index: usize,
        path: &std::path::Path,
        branch: &str,
        back: &SentBack,
    ) -> Result<(), WorkflowError> {
        let id = &self.workflow.phases[index].id;
        let place = Repository::at(path);
        place
            .checkout(branch)
            .map_err(|e| self.git_error(index, e))?;
        let message = format!(
            "Bring phase {id} up to date with the run's branch (workflow run {}, merge queue)",
            self.state.run_id
        );
        match place
            .merge(&back.onto, &message)
            .map_err(|e| self.git_error(index, e))?
        {
            MergeOutcome::Merged { .. } | MergeOutcome::UpToDate => Ok(()),
            MergeOutcome::Conflict { files } => Err(self.agent_error(
                index,
                &format!(
                    "cannot bring its branch up to date with the run's branch: conflicts in {}",
                    files.join(", ")
                ),
            )),
        }
    }

    /// After the last try the person decides: send it back again, keep it aside (a phase
    /// with a worktree of its own), or abort. No answer ends the run with [`RedMerge`].
    pub(super) fn red_gate(
        &mut self,
        repo: &Repository,
        index: usize,
    ) -> Result<EarlyEnd, WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let record = self.record(index).clone();
        let own_tree = record.worktree.is_some();
        let target = run_branch(repo);
        let branch = if own_tree {
            record.branch.clone().unwrap_or_default()
        } else {
            target.clone()
        };
        let attempts = u32::try_from(record.red_merges.len()).unwrap_or(u32::MAX);
        let last = record.red_merges.last();
        let failing = last.map(|p| p.test.failing()).unwrap_or_default();
        // Everything that landed since the phase's branch was made, whatever it was brought
        // up to date with since.
        let under = match (&record.base_commit, own_tree) {
            (Some(base), true) => repo
                .head()
                .and_then(|tip| repo.short_log(base, &tip, LOGGED_COMMITS))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let error = format!(
            "fails the tests merged with {target} after {attempts} tr{}: {}",
            if attempts == 1 { "y" } else { "ies" },
            failing.join(", ")
        );
        let red = self.record(index);
        red.status = PhaseStatus::Red;
        red.error = Some(error);
        self.save()?;
        let event = WorkflowEvent::MergeRed {
            phase: id.clone(),
            attempts,
            failing: failing.clone(),
        };
        tracing::warn!("{event}");
        self.prompter.on_event(&event);
        let prompt = red_prompt(&RedFacts {
            id: &id,
            branch: &branch,
            target: &target,
            own_tree,
            attempts,
            failing: &failing,
            under: &under,
            last,
        });
        let choices = red_choices(own_tree);
        let request = ApprovalRequest {
            run_id: self.state.run_id.clone(),
            phase_id: id.clone(),
            iteration: self.state.context.iteration(&id),
            approval: true,
            prompt,
            files: Vec::new(),
            choices,
            worktree: record
                .worktree
                .as_ref()
                .map(|t| self.project.root().join(t)),
            base_commit: record.base_commit.clone(),
        };
        self.alert(
            "red_merge",
            &id,
            &format!(
                "phase '{id}' fails the tests merged with {target}: {}",
                failing.join(", ")
            ),
        );
        let unanswered = || {
            WorkflowError::RedMerge(Box::new(RedMerge {
                run_id: self.state.run_id.clone(),
                phase: id.clone(),
                branch: branch.clone(),
                target: target.clone(),
                attempts,
                failing: failing.clone(),
                under: under.clone(),
            }))
        };
        let Ok(answer) = self.prompter.ask(&request) else {
            return Err(unanswered());
        };
        let Some(choice) = request.choices.get(answer.choice) else {
            return Err(unanswered());
        };
        let decision = WorkflowEvent::Decision {
            phase: id.clone(),
            label: choice.label.clone(),
            action: choice.action,
        };
        self.prompter.on_event(&decision);
        self.apply_red_answer(repo, index, choice.action)
    }

    /// Does what the person chose at a red merge's gate.
    fn apply_red_answer(
        &mut self,
        repo: &Repository,
        index: usize,
        action: Action,
    ) -> Result<EarlyEnd, WorkflowError> {
        match action {
            Action::RepeatPhase => {
                let record = self.record(index);
                record.extra_attempts = record.extra_attempts.saturating_add(1);
                self.send_back(repo, index)?;
                Ok(None)
            }
            Action::SkipPhases => {
                self.keep_aside(repo, index)?;
                Ok(None)
            }
            Action::Abort | Action::Continue => {
                self.state.status = RunStatus::Aborted;
                self.save()?;
                Ok(Some(RunStatus::Aborted))
            }
        }
    }

    /// Keeps phase `index` aside: its worktree goes, its branch stays with every commit, and
    /// the phases that depend on it do not run.
    fn keep_aside(&mut self, repo: &Repository, index: usize) -> Result<(), WorkflowError> {
        let id = self.workflow.phases[index].id.clone();
        let record = self.record(index).clone();
        let branch = record.branch.clone().unwrap_or_default();
        if let Some(tree) = &record.worktree {
            let path = self.project.root().join(tree);
            if let Some(drivers) = &self.parallel.drivers {
                drivers.release(&project_in(repo, &path));
            }
            repo.drop_worktree(&path)
                .map_err(|e| self.git_error(index, e))?;
            if let Some(parent) = path.parent() {
                let _ = std::fs::remove_dir(parent);
            }
        }
        let record = self.record(index);
        record.status = PhaseStatus::KeptAside;
        record.worktree = None;
        record.sent_back = None;
        self.save()?;
        let event = WorkflowEvent::KeptAside { phase: id, branch };
        tracing::info!("{event}");
        self.prompter.on_event(&event);
        Ok(())
    }
}

/// The choices of a red merge's gate: keeping a phase aside needs a branch of its own.
fn red_choices(own_tree: bool) -> Vec<Choice> {
    let choice = |label: &str, action| Choice {
        label: label.into(),
        with_feedback: false,
        action,
    };
    let mut choices = vec![choice("Send it back again", Action::RepeatPhase)];
    if own_tree {
        choices.push(choice("Keep it aside", Action::SkipPhases));
    }
    choices.push(choice("Abort", Action::Abort));
    choices
}

/// What the person is told at a red merge's gate.
struct RedFacts<'a> {
    id: &'a str,
    branch: &'a str,
    target: &'a str,
    own_tree: bool,
    attempts: u32,
    failing: &'a [String],
    under: &'a [String],
    last: Option<&'a MergeProof>,
}

/// Lines of a failing command's output the gate shows.
const GATE_TAIL: usize = 15;

/// The question of a red merge's gate.
fn red_prompt(facts: &RedFacts<'_>) -> String {
    let RedFacts {
        id,
        branch,
        target,
        attempts,
        ..
    } = facts;
    let tries = if *attempts == 1 { "try" } else { "tries" };
    let failing = facts.failing.join(", ");
    let mut prompt = if facts.own_tree {
        format!(
            "Phase '{id}' ({branch}) passes its tests alone, but merged with the run's branch \
             {target} they fail, after {attempts} {tries}: {failing}. The run's branch holds \
             only what passed."
        )
    } else {
        format!(
            "After phase '{id}', which worked in the project's tree, the tests fail on \
             {target}, after {attempts} {tries}: {failing}."
        )
    };
    if !facts.under.is_empty() {
        let _ = write!(
            prompt,
            "\n\nLanded on {target} since its branch parted:\n  {}",
            facts.under.join("\n  ")
        );
    }
    if let Some(last) = facts.last {
        let _ = write!(prompt, "\n\nThe last test: {}", last.test.summary());
        for run in last.test.runs.iter().filter(|r| !r.passed) {
            let from = run.tail.len().saturating_sub(GATE_TAIL);
            if from < run.tail.len() {
                let _ = write!(
                    prompt,
                    "\n\n`{}` ({}), the end of its output:\n  {}",
                    run.command,
                    run.exit,
                    run.tail[from..].join("\n  ")
                );
            }
        }
    }
    prompt
}
