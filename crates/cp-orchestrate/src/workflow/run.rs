//! Starting and resuming a workflow run: its options, the checks before any agent starts,
//! the run's record under `.context-pilot/runs/<id>/`, and how the run ended.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cp_base::{Project, STATE_DIR, WorkerId};
use serde_json::Value;

use super::agents::DriverFactory;
use super::alert::Alerter;
use super::context::RunContext;
use super::engine::{Engine, Parallel};
use super::error::WorkflowError;
use super::exit::{EXIT_ABORTED, EXIT_FAILED, EXIT_INTERRUPTED};
use super::phase_record::PhaseRecord;
use super::prompter::{ApprovalPrompter, WorkflowEvent};
use super::prompts::check_placeholders;
use super::queue_state::MergeQueue;
use super::schema::{DEFAULT_MAX_PARALLEL, Workflow, stored_path};
use super::store::{Position, RunState, RunStatus, RunStore, Stage, now};
use super::tester::TreeTester;
use crate::restart::{RestartConfig, RestartLoop, RestartOverrides, SessionDriver};

/// Options of a run besides the workflow file.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The restart flags.
    pub overrides: RestartOverrides,
    /// `--var name=value`: override or add workflow vars (new runs only; a resumed run keeps
    /// the vars it started with).
    pub vars: BTreeMap<String, String>,
    /// The worker the agent acts as (handoffs are recorded under its id).
    pub worker: WorkerId,
    /// `--max-parallel N`: how many phases of a workflow with `depends_on` run at once
    /// (default: the file's `max_parallel`, else 4).
    pub max_parallel: Option<usize>,
    /// `--keep-worktrees`: keep a phase's worktree and branch after its merge.
    pub keep_worktrees: bool,
    /// Makes the agents of phases that run in their own worktrees, or of a phase with its own
    /// `agent:`. Without it such phases run one at a time with the run's agent.
    pub drivers: Option<Arc<dyn DriverFactory>>,
    /// Told when the run waits for the person (an approval gate, a merge conflict) or a phase
    /// fails.
    pub alerter: Option<Arc<dyn Alerter>>,
    /// The run's agent (`builtin`, `claude`, …), recorded for phases without their own.
    pub agent: Option<String>,
    /// Tests a tree as the stop gate would: the merge queue's combined trees, the tree a
    /// phase left in the project's tree, the run's branch at its end. Without it nothing is
    /// tested, and the run's proof and last word say so.
    pub tester: Option<Arc<dyn TreeTester>>,
}

/// How a run ended (errors aside).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowOutcome {
    /// The run id (pass it to `--resume`).
    pub run_id: String,
    /// `Completed` or `Aborted`.
    pub status: RunStatus,
    /// `.context-pilot/runs/<id>/`.
    pub run_dir: PathBuf,
    /// The final context.
    pub context: RunContext,
    /// Workflows with `depends_on`: each phase's record (status, branch, merge commit, …),
    /// in the file's order.
    pub phases: Vec<(String, PhaseRecord)>,
    /// Whether the run's branch is green as the run leaves it, and how that was established.
    pub verdict: Option<super::proof::BranchVerdict>,
}

impl WorkflowOutcome {
    /// 0 when completed, [`EXIT_ABORTED`] (2) when aborted at an approval gate.
    pub fn exit_code(&self) -> i32 {
        match self.status {
            RunStatus::Aborted => EXIT_ABORTED,
            RunStatus::Failed => EXIT_FAILED,
            // A run still running when it returns was interrupted (Ctrl-C).
            RunStatus::Running => EXIT_INTERRUPTED,
            RunStatus::Completed => 0,
        }
    }
}

/// Starts a new run of the workflow at `workflow_path`.
///
/// Checks the workflow and the git preconditions (clean tree unless `--allow-dirty`, with
/// auto-commit), creates `.context-pilot/runs/<id>/`, then runs every phase through the restart
/// loop with `driver` and asks `prompter` at approval gates.
pub fn run_workflow(
    project: &Project,
    workflow_path: &Path,
    driver: &mut dyn SessionDriver,
    prompter: &mut dyn ApprovalPrompter,
    options: &RunOptions,
) -> Result<WorkflowOutcome, WorkflowError> {
    let workflow = Workflow::load(workflow_path)?;
    let config = RestartConfig::resolve(project, &options.overrides)?;
    let store = RunStore::new(project);
    let run_id = store.new_run_id(&workflow.name);
    let mut context = RunContext {
        extra: workflow.context.clone(),
        vars: workflow.vars.clone(),
        ..RunContext::default()
    };
    for (name, value) in &options.vars {
        context
            .vars
            .insert(name.clone(), Value::String(value.clone()));
    }
    let first = workflow.run_order().first().map(|&i| Position {
        phase: workflow.phases[i].id.clone(),
        stage: Stage::Phase,
        counted: false,
    });
    let mut state = RunState {
        run_id,
        workflow: workflow.name.clone(),
        workflow_file: stored_path(project.root(), workflow_path),
        status: RunStatus::Running,
        // A graph keeps each phase's place in `phase_runs` instead.
        position: if workflow.is_graph() { None } else { first },
        pending_feedback: None,
        error: None,
        started_at: now(),
        updated_at: String::new(),
        context,
        phase_runs: BTreeMap::new(),
        started_from: cp_git::Repository::at(project.root()).head().ok(),
        verdict: None,
        merge_queue: super::proof::QueueCost::default(),
    };
    check_placeholders(&workflow, &state, workflow_path)?;
    let restart =
        RestartLoop::new(project.clone(), config.clone()).with_worker(options.worker.clone());
    // Earlier runs' records may be uncommitted; they are the host's, not someone's work.
    let runs = format!("{STATE_DIR}/runs/");
    restart.preflight(&[runs.as_str()])?;
    let _lock = store.lock(&state.run_id)?;
    keep_records_out_of_git(project);
    store.save(&mut state)?;
    let parallel = Parallel::from_options(&workflow, options);
    let mut engine = Engine {
        workflow: &workflow,
        store,
        restart,
        driver,
        prompter,
        state,
        project: project.clone(),
        config,
        parallel,
        gate_note: None,
        phase_stops: HashMap::new(),
        queue: MergeQueue::default(),
    };
    engine.start(false)
}

/// Continues run `run_id` after a crash or a failed phase: the phase in progress runs again;
/// an approval gate that was waiting asks again. No clean-tree check: the changes are the run's.
///
/// `workflow_path`, when given, must be the file the run started with.
pub fn resume_workflow(
    project: &Project,
    run_id: &str,
    workflow_path: Option<&Path>,
    driver: &mut dyn SessionDriver,
    prompter: &mut dyn ApprovalPrompter,
    options: &RunOptions,
) -> Result<WorkflowOutcome, WorkflowError> {
    let store = RunStore::new(project);
    let mut state = store.load(run_id)?;
    let _lock = store.lock(run_id)?;
    // Re-read under the lock: the previous holder may have saved since.
    state = store.load(run_id).unwrap_or(state);
    if matches!(state.status, RunStatus::Completed | RunStatus::Aborted) {
        return Err(WorkflowError::RunFinished {
            run_id: run_id.to_owned(),
            status: state.status.as_str().to_owned(),
        });
    }
    let file = if state.workflow_file.is_absolute() {
        state.workflow_file.clone()
    } else {
        project.root().join(&state.workflow_file)
    };
    if let Some(given) = workflow_path
        && stored_path(project.root(), given) != state.workflow_file
    {
        return Err(WorkflowError::WorkflowMismatch {
            run_id: run_id.to_owned(),
            stored: state.workflow_file.clone(),
            given: given.to_path_buf(),
        });
    }
    let workflow = Workflow::load(&file)?;
    if let Some(position) = &state.position
        && workflow.index_of(&position.phase).is_none()
    {
        return Err(WorkflowError::Invalid {
            path: file,
            phase: Some(position.phase.clone()),
            message: format!(
                "run '{run_id}' stopped in this phase, which the file no longer has; restore it \
                 or start a new run"
            ),
        });
    }
    let config = RestartConfig::resolve(project, &options.overrides)?;
    let restart =
        RestartLoop::new(project.clone(), config.clone()).with_worker(options.worker.clone());
    state.status = RunStatus::Running;
    state.error = None;
    keep_records_out_of_git(project);
    store.save(&mut state)?;
    clear_stale_locks(project);
    let parallel = Parallel::from_options(&workflow, options);
    let mut engine = Engine {
        workflow: &workflow,
        store,
        restart,
        driver,
        prompter,
        state,
        project: project.clone(),
        config,
        parallel,
        gate_note: None,
        phase_stops: HashMap::new(),
        queue: MergeQueue::default(),
    };
    engine.start(true)
}

impl Parallel {
    fn from_options(workflow: &Workflow, options: &RunOptions) -> Self {
        Self {
            max: options
                .max_parallel
                .or(workflow.max_parallel)
                .unwrap_or(DEFAULT_MAX_PARALLEL)
                .max(1),
            keep_worktrees: options.keep_worktrees,
            drivers: options.drivers.clone(),
            worker: options.worker.clone(),
            alerter: options.alerter.clone(),
            agent: options.agent.clone(),
            tester: options.tester.clone(),
            speculate: workflow.speculative_merges(),
        }
    }
}

impl Engine<'_> {
    fn start(&mut self, resumed: bool) -> Result<WorkflowOutcome, WorkflowError> {
        let run_dir = self.store.run_dir(&self.state.run_id);
        tracing::info!(run = %self.state.run_id, workflow = %self.state.workflow, resumed, "workflow run");
        self.prompter.on_event(&WorkflowEvent::RunStarted {
            run_id: self.state.run_id.clone(),
            workflow: self.state.workflow.clone(),
            resumed,
            run_dir: run_dir.clone(),
        });
        let driven = self.drive(resumed);
        let status = match driven {
            Ok(RunStatus::Completed) => match self.conclude(true)? {
                // A red branch is no completed run: `--resume` tests it again.
                Some(v) if v.outcome == super::proof::TreeVerdict::Failed => RunStatus::Failed,
                _ => RunStatus::Completed,
            },
            Ok(status) => {
                if status != RunStatus::Running {
                    self.conclude(false)?;
                }
                status
            }
            Err(e) => {
                if matches!(
                    e,
                    WorkflowError::RedMerge(_) | WorkflowError::MergeConflict(_)
                ) {
                    // The branch holds only what passed: say so beside the error.
                    let _ = self.conclude(false);
                }
                return Err(e);
            }
        };
        self.prompter.on_event(&WorkflowEvent::RunFinished {
            run_id: self.state.run_id.clone(),
            status,
        });
        Ok(WorkflowOutcome {
            run_id: self.state.run_id.clone(),
            status,
            run_dir,
            context: self.state.context.clone(),
            phases: self
                .workflow
                .phases
                .iter()
                .filter_map(|p| {
                    let record = self.state.phase_runs.get(&p.id)?;
                    Some((p.id.clone(), record.clone()))
                })
                .collect(),
            verdict: self.state.verdict.clone(),
        })
    }
}

/// The run's records (`.context-pilot/runs/`) are the host's, written all through the run:
/// kept out of `git status` through the repository's own exclude file (never committed,
/// shared by its worktrees), so a run leaves nothing in the project's tree the person did not
/// change. Outside a repository there is nothing to do.
fn keep_records_out_of_git(project: &Project) {
    let repo = cp_git::Repository::at(project.root());
    let Ok(prefix) = repo.prefix() else {
        return;
    };
    if let Err(e) = repo.exclude_locally(&format!("/{prefix}{STATE_DIR}/runs/")) {
        tracing::warn!("cannot keep the run's records out of git status: {e}");
    }
}

/// A git killed with the previous run (SIGKILL of its process group, a crash) may have left
/// its lock files (the index, `packed-refs`, a ref), on which every merge, commit and branch
/// deletion of this run would fail; they go before anything runs.
fn clear_stale_locks(project: &Project) {
    match cp_git::Repository::at(project.root()).clear_stale_locks() {
        Ok(removed) if !removed.is_empty() => {
            tracing::info!(?removed, "removed git locks the killed run left");
        }
        Ok(_) => {}
        // Not a repository, or no git: the run reports what it needs when it needs it.
        Err(e) => tracing::debug!("cannot look for stale git locks: {e}"),
    }
}
