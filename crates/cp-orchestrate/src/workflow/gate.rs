//! Approval gates: the question (its condition, prompt, files to review and choices), the
//! person's answer through the prompter, and its record in the run's context. In a plain list
//! the answer moves the run's position here; in a graph, `graph_gate.rs` applies it.

use serde_json::json;

use super::condition::evaluate_condition;
use super::context::ApprovalRecord;
use super::engine::Engine;
use super::error::WorkflowError;
use super::prompter::{ApprovalRequest, Choice, WorkflowEvent};
use super::schema::{Action, CURRENT_PHASE};
use super::store::{PendingFeedback, Position, RunStatus, Stage, now};

/// The question of an approval gate without its own prompt.
pub const APPROVAL_PROMPT: &str = "Continue with the next phase?";

/// What an approval gate decided.
pub(super) struct Decided {
    pub(super) label: String,
    pub(super) action: Action,
    pub(super) target: Option<String>,
    pub(super) skipped: Vec<String>,
    pub(super) feedback: Option<String>,
}

impl Engine<'_> {
    /// Runs the approval gate of phase `index` (if it has one and its condition holds), records
    /// the decision and moves the position, in one save.
    pub(super) fn approval_gate(&mut self, index: usize) -> Result<Option<Action>, WorkflowError> {
        let decided = self.ask(index)?;
        let phase_id = self.workflow.phases[index].id.clone();
        let Some(decided) = decided else {
            self.state.position = self.position_after(index);
            self.save()?;
            return Ok(None);
        };
        self.remember(&phase_id, &decided);
        match decided.action {
            Action::Continue => self.state.position = self.position_after(index),
            Action::RepeatPhase => {
                let target = decided.target.clone().unwrap_or_else(|| phase_id.clone());
                // Past the cap nothing is saved: the run stays at this approval gate, so a
                // resume asks again and a different answer can move on.
                self.check_iteration_cap(&target)?;
                self.state.context.bump(&target);
                self.state.position = Some(Position {
                    phase: target,
                    stage: Stage::Phase,
                    counted: true,
                });
            }
            Action::SkipPhases => {
                for phase in &decided.skipped {
                    if !self.state.context.skip_phases.contains(phase) {
                        self.state.context.skip_phases.push(phase.clone());
                    }
                }
                self.state.position = self.position_after(index);
            }
            Action::Abort => {
                self.state.position = None;
                self.state.status = RunStatus::Aborted;
            }
        }
        self.save()?;
        tracing::info!(phase = %phase_id, option = %decided.label, action = decided.action.as_str(), "approval gate decision");
        self.prompter.on_event(&WorkflowEvent::Decision {
            phase: phase_id,
            label: decided.label,
            action: decided.action,
        });
        Ok(Some(decided.action))
    }

    /// Records an approval gate's decision in the context, and its feedback for the next prompt.
    pub(super) fn remember(&mut self, phase_id: &str, decided: &Decided) {
        self.state.context.approvals.push(ApprovalRecord {
            phase: phase_id.to_owned(),
            decision: decided.action,
            skipped: (decided.action == Action::SkipPhases).then(|| decided.skipped.clone()),
            target: decided.target.clone(),
            feedback: decided.feedback.clone(),
            timestamp: now(),
        });
        self.state.pending_feedback = decided.feedback.as_ref().map(|text| PendingFeedback {
            phase: phase_id.to_owned(),
            option: decided.label.clone(),
            text: text.clone(),
        });
    }

    /// Evaluates an approval gate condition; false and errors (logged) skip the approval gate.
    fn condition_holds(&mut self, index: usize, condition: &str) -> bool {
        let phase = &self.workflow.phases[index];
        let iteration = self.state.context.iteration(&phase.id);
        let phase_value = json!({"id": phase.id, "index": index, "iteration": iteration});
        match evaluate_condition(condition, &self.state.context.to_value(), &phase_value) {
            Ok(true) => true,
            Ok(false) => {
                tracing::debug!(phase = %phase.id, "approval gate condition false, skipping");
                self.prompter.on_event(&WorkflowEvent::ApprovalSkipped {
                    phase: phase.id.clone(),
                });
                false
            }
            Err(e) => {
                tracing::error!(phase = %phase.id, "approval gate condition failed: {e}");
                self.prompter.on_event(&WorkflowEvent::ConditionFailed {
                    phase: phase.id.clone(),
                    error: e.to_string(),
                });
                false
            }
        }
    }

    pub(super) fn ask(&mut self, index: usize) -> Result<Option<Decided>, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let Some(approval) = &phase.approval else {
            return Ok(None);
        };
        let iteration = self.state.context.iteration(&phase.id);
        if let Some(condition) = &approval.condition
            && !self.condition_holds(index, condition)
        {
            return Ok(None);
        }
        let choices = choices_for(approval);
        let mut prompt = match &approval.prompt {
            Some(prompt) => self.render(&phase.id, prompt)?,
            None => APPROVAL_PROMPT.to_owned(),
        };
        if let Some(note) = self.gate_note.take() {
            prompt.push_str("\n\n");
            prompt.push_str(&note);
        }
        let mut files = Vec::new();
        for file in &approval.show_files {
            files.push(self.render(&phase.id, file)?);
        }
        let own_tree = self.state.phase_runs.get(&phase.id).and_then(|record| {
            let tree = record.worktree.as_ref()?;
            Some((self.project.root().join(tree), record.base_commit.clone()))
        });
        let (worktree, base_commit) = own_tree.map_or((None, None), |(t, b)| (Some(t), b));
        let request = ApprovalRequest {
            run_id: self.state.run_id.clone(),
            phase_id: phase.id.clone(),
            iteration,
            approval: approval.approval_required,
            prompt,
            files,
            choices,
            worktree,
            base_commit,
        };
        tracing::info!(phase = %phase.id, "approval gate: {}", request.prompt);
        for file in &request.files {
            tracing::info!(phase = %phase.id, "review: {file}");
        }
        self.alert(
            "approval",
            &phase.id,
            &format!(
                "approval gate after phase '{}': {}",
                phase.id,
                request.prompt.lines().next().unwrap_or("")
            ),
        );
        let answer = self
            .prompter
            .ask(&request)
            .map_err(|e| WorkflowError::Prompt {
                run_id: self.state.run_id.clone(),
                phase: phase.id.clone(),
                message: e.0,
            })?;
        let Some(choice) = request.choices.get(answer.choice) else {
            return Err(WorkflowError::Prompt {
                run_id: self.state.run_id.clone(),
                phase: phase.id.clone(),
                message: format!(
                    "answer {} is not one of the {} choices",
                    answer.choice + 1,
                    request.choices.len()
                ),
            });
        };
        let feedback = if choice.with_feedback {
            answer
                .feedback
                .map(|f| f.trim().to_owned())
                .filter(|f| !f.is_empty())
        } else {
            None
        };
        let (target, skipped) = if approval.approval_required {
            (None, Vec::new())
        } else {
            let on = &approval.options[answer.choice].on_select;
            let target = on.target.as_ref().map(|t| {
                if t == CURRENT_PHASE {
                    phase.id.clone()
                } else {
                    t.clone()
                }
            });
            (target, on.phases.clone())
        };
        Ok(Some(Decided {
            label: choice.label.clone(),
            action: choice.action,
            target,
            skipped,
            feedback,
        }))
    }
}

/// The choices an approval gate offers: Continue / Abort for approvals, else its options.
fn choices_for(approval: &super::schema::Approval) -> Vec<Choice> {
    if approval.approval_required {
        return vec![
            Choice {
                label: "Continue".into(),
                with_feedback: false,
                action: Action::Continue,
            },
            Choice {
                label: "Abort".into(),
                with_feedback: false,
                action: Action::Abort,
            },
        ];
    }
    approval
        .options
        .iter()
        .map(|o| Choice {
            label: o.label.clone(),
            with_feedback: o.with_feedback,
            action: o.on_select.action,
        })
        .collect()
}
