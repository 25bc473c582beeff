//! A phase's prompt: its `{{placeholders}}` filled in (built-ins, vars, context fields, all
//! checked when the run starts) and the feedback an approval gate left for it.

use std::fmt::Write;
use std::path::Path;

use super::engine::Engine;
use super::error::WorkflowError;
use super::schema::Workflow;
use super::store::RunState;
use super::template::{display_value, lookup_path, substitute};

pub(super) fn check_placeholders(
    workflow: &Workflow,
    state: &RunState,
    path: &Path,
) -> Result<(), WorkflowError> {
    for (phase, name) in workflow.placeholders() {
        if lookup(state, &phase, &name).is_none() {
            return Err(WorkflowError::Invalid {
                path: path.to_path_buf(),
                phase: Some(phase),
                message: format!(
                    "{{{{{name}}}}} is not a var, a context field or one of run_id, workflow, \
                     phase; define it under vars: or pass --var {name}=VALUE"
                ),
            });
        }
    }
    Ok(())
}

/// The value of `{{name}}` for `phase`: a built-in, a var, or a context field (dotted path).
fn lookup(state: &RunState, phase: &str, name: &str) -> Option<String> {
    match name {
        "run_id" => return Some(state.run_id.clone()),
        "workflow" => return Some(state.workflow.clone()),
        "phase" | "phase.id" => return Some(phase.to_owned()),
        _ => {}
    }
    if let Some(value) = state.context.vars.get(name) {
        return Some(display_value(value));
    }
    lookup_path(&state.context.to_value(), name).map(display_value)
}

impl Engine<'_> {
    /// The phase's prompt with placeholders filled in, plus approval gate feedback waiting for it.
    pub(super) fn phase_prompt(&self, index: usize) -> Result<String, WorkflowError> {
        let phase = &self.workflow.phases[index];
        let mut prompt = self.render(&phase.id, &phase.prompt)?;
        if let Some(feedback) = &self.state.pending_feedback {
            let _ = write!(
                prompt,
                "\n\n## Feedback from the approval gate after phase `{}`\n\nThe reviewer chose \
                 \"{}\" and wrote:\n\n{}\n",
                feedback.phase,
                feedback.option,
                feedback
                    .text
                    .lines()
                    .map(|l| format!("> {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        Ok(prompt)
    }

    pub(super) fn render(&self, phase: &str, text: &str) -> Result<String, WorkflowError> {
        substitute(text, |name| lookup(&self.state, phase, name)).map_err(|source| {
            WorkflowError::Placeholder {
                path: self.state.workflow_file.clone(),
                phase: phase.to_owned(),
                source,
            }
        })
    }
}
