//! What an approval gate's answer does to a workflow with `depends_on`: `repeat_phase` runs
//! its target again and then its dependents whose input changed, `skip_phases` marks phases
//! for when their turn comes, abort ends the run.

use super::engine::Engine;
use super::error::WorkflowError;
use super::gate::Decided;
use super::phase_record::PhaseStatus;
use super::prompter::WorkflowEvent;
use super::schema::Action;

impl Engine<'_> {
    /// Asks phase `index`'s approval gate and applies the answer; true when it aborts.
    pub(super) fn gate(&mut self, index: usize) -> Result<bool, WorkflowError> {
        let Some(decided) = self.ask(index)? else {
            return Ok(false);
        };
        let id = self.workflow.phases[index].id.clone();
        self.remember(&id, &decided);
        let abort = self.apply(index, &decided)?;
        self.save()?;
        tracing::info!(phase = %id, option = %decided.label, action = decided.action.as_str(), "approval gate decision");
        self.prompter.on_event(&WorkflowEvent::Decision {
            phase: id,
            label: decided.label,
            action: decided.action,
        });
        Ok(abort)
    }

    /// What a decision does to the graph: a repeated phase runs again (in its worktree, when
    /// it has one), skipped phases are marked when their turn comes, abort ends the run.
    fn apply(&mut self, index: usize, decided: &Decided) -> Result<bool, WorkflowError> {
        match decided.action {
            Action::Continue => Ok(false),
            Action::Abort => Ok(true),
            Action::SkipPhases => {
                for phase in &decided.skipped {
                    if !self.state.context.skip_phases.contains(phase) {
                        self.state.context.skip_phases.push(phase.clone());
                    }
                }
                Ok(false)
            }
            Action::RepeatPhase => {
                let own = self.workflow.phases[index].id.clone();
                let target = decided.target.clone().unwrap_or(own);
                self.check_iteration_cap(&target)?;
                let Some(target_index) = self.workflow.index_of(&target) else {
                    return Ok(false);
                };
                self.state.context.bump(&target);
                let record = self.record(target_index);
                // Counted above; `Running` keeps `begin` from counting it again.
                if record.worktree.is_none() || record.status == PhaseStatus::Merged {
                    *record = record.fresh();
                }
                record.status = PhaseStatus::Running;
                self.rerun_dependents(target_index)?;
                Ok(false)
            }
        }
    }

    /// The phases that depend on `target`, directly or not, run again after it, since their
    /// input changed: those merged wait again (counted anew when they start); those whose
    /// work is not merged yet have it set aside, kept on a superseded branch, a running one
    /// after its agent is stopped (`supersede.rs`).
    fn rerun_dependents(&mut self, target: usize) -> Result<(), WorkflowError> {
        let deps = self.workflow.dependencies();
        let mut reached = vec![false; deps.len()];
        reached[target] = true;
        // Phases may list dependencies below them: repeat until nothing new is reached.
        let mut grew = true;
        while grew {
            grew = false;
            for (index, its) in deps.iter().enumerate() {
                if !reached[index] && its.iter().any(|&d| reached[d]) {
                    reached[index] = true;
                    grew = true;
                }
            }
        }
        let reason = format!("phase {} runs again", self.workflow.phases[target].id);
        for index in (0..deps.len()).filter(|&i| reached[i] && i != target) {
            let record = self.record(index);
            match record.status {
                PhaseStatus::Merged => {
                    *record = record.fresh();
                    tracing::info!(phase = %self.workflow.phases[index].id, "runs again after the repeated phase");
                }
                PhaseStatus::Running
                | PhaseStatus::Finished
                | PhaseStatus::Conflict
                | PhaseStatus::Failed
                | PhaseStatus::Interrupted
                    if record.worktree.is_some() =>
                {
                    self.stop_stale(index, &reason)?;
                }
                _ => {}
            }
        }
        self.save()
    }
}
