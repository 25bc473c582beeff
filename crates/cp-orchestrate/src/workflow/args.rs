//! What a front-end asks for when it runs a workflow (`context-pilot run`): a new run of a
//! file, or the resumption of a saved one, with the restart options.

use std::path::PathBuf;

use cp_base::Project;

use super::error::WorkflowError;
use super::prompter::ApprovalPrompter;
use super::run::{RunOptions, WorkflowOutcome, resume_workflow, run_workflow};
use super::store::RunStore;
use crate::restart::SessionDriver;

/// The arguments of `context-pilot run` (besides the restart flags in `options`).
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    /// `FILE.yaml`; optional with `--resume`.
    pub workflow: Option<PathBuf>,
    /// `--resume RUN_ID`
    pub resume: Option<String>,
    /// `--answers FILE`
    pub answers: Option<PathBuf>,
    /// Restart flags, `--var`s and the worker.
    pub options: RunOptions,
}

/// Runs what `args` ask for: resumes `args.resume` (its saved workflow, or `args.workflow`
/// when given) or starts a run of `args.workflow`, its approval gates answered by `prompter`.
///
/// # Errors
/// Neither a workflow nor a run to resume is given, or the run fails ([`WorkflowError`]).
pub fn run_or_resume(
    project: &Project,
    args: &RunArgs,
    driver: &mut dyn SessionDriver,
    prompter: &mut dyn ApprovalPrompter,
) -> Result<WorkflowOutcome, WorkflowError> {
    match (&args.resume, &args.workflow) {
        (Some(run_id), workflow) => resume_workflow(
            project,
            run_id,
            workflow.as_deref(),
            driver,
            prompter,
            &args.options,
        ),
        (None, Some(workflow)) => run_workflow(project, workflow, driver, prompter, &args.options),
        (None, None) => Err(WorkflowError::Invalid {
            path: PathBuf::from("(none)"),
            phase: None,
            message: "give a workflow file (context-pilot run FILE.yaml) or --resume RUN_ID".into(),
        }),
    }
}

/// One summary line per phase of the run that `result` ended ([`PhaseRecord::summary`]): of
/// the outcome, or of the run saved when a merge conflict or a red merge stopped it. Empty for
/// other errors.
///
/// [`PhaseRecord::summary`]: super::PhaseRecord::summary
pub fn phase_summaries(
    project: &Project,
    result: &Result<WorkflowOutcome, WorkflowError>,
) -> Vec<String> {
    let stopped = match result {
        Ok(outcome) => {
            return outcome
                .phases
                .iter()
                .map(|(phase, record)| record.summary(phase))
                .collect();
        }
        Err(WorkflowError::MergeConflict(conflict)) => &conflict.run_id,
        Err(WorkflowError::RedMerge(red)) => &red.run_id,
        Err(_) => return Vec::new(),
    };
    RunStore::new(project)
        .load(stopped)
        .map(|state| {
            state
                .phase_runs
                .iter()
                .map(|(phase, record)| record.summary(phase))
                .collect()
        })
        .unwrap_or_default()
}
