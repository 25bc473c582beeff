//! A phase's prompt: its `{{placeholders}}` filled in (built-ins, vars, context fields, all
//! checked when the run starts), the feedback an approval gate left for it, and, for a phase
//! the merge queue sent back, what failed and what landed under it.

use std::fmt::Write;
use std::path::Path;

use super::engine::Engine;
use super::error::WorkflowError;
use super::phase_record::{PhaseRecord, SentBack};
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
        if let Some(record) = self.state.phase_runs.get(&phase.id)
            && let Some(back) = &record.sent_back
        {
            sent_back_section(
                &mut prompt,
                record,
                back,
                self.workflow.max_merge_attempts(&phase.id),
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

/// Output lines of the failing test shown to a phase sent back.
const SHOWN_TAIL: usize = 40;

/// What a phase sent back by the merge queue is told: that its work passed alone and fails
/// merged (or, having worked in the project's tree, fails there), what landed under it, the
/// failing tests' output, and which try comes next. `max` is its `max_merge_attempts`.
fn sent_back_section(prompt: &mut String, record: &PhaseRecord, back: &SentBack, max: u32) {
    let Some(red) = record.red_merges.last() else {
        return;
    };
    let next = red.attempt.saturating_add(1);
    let allowed = max.saturating_add(record.extra_attempts);
    let branch = record.branch.as_deref().unwrap_or("your branch");
    if back.own_tree {
        let _ = write!(
            prompt,
            "\n\n## Your work is back from the merge queue: it fails merged with the run's \
             branch\n\nYour branch `{branch}` passed its tests on its own, from the commit it \
             started from. Merged with the run's branch as it is now, the tests fail: work \
             landed there since your branch started.\n"
        );
        if !back.log.is_empty() {
            let _ = write!(
                prompt,
                "\nWhat landed on the run's branch since then:\n\n{}\n",
                back.log
                    .iter()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        let _ = write!(
            prompt,
            "\nThe run's branch is merged into your branch now, in this worktree. Make the \
             tests pass here and commit; the merge is tested again when you stop (try {next} \
             of {allowed}).\n"
        );
    } else {
        let _ = write!(
            prompt,
            "\n\n## Your work is back: the tests fail on the run's branch after it\n\nThe \
             tests of the project's tree, as your phase left it, fail. Make them pass and \
             commit; the tree is tested again when you stop (try {next} of {allowed}).\n"
        );
    }
    let _ = write!(prompt, "\nThe test: {}\n", red.test.summary());
    for run in red.test.runs.iter().filter(|r| !r.passed) {
        let tail: Vec<&str> = run
            .tail
            .iter()
            .rev()
            .take(SHOWN_TAIL)
            .rev()
            .map(String::as_str)
            .collect();
        if tail.is_empty() {
            continue;
        }
        let _ = write!(
            prompt,
            "\n`{}` ({}), the end of its output:\n\n```\n{}\n```\n",
            run.command,
            run.exit,
            tail.join("\n")
        );
    }
}
