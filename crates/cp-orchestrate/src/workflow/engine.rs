//! Drives a workflow run: phases through the restart loop, approval gates through a prompter,
//! every step saved so a crashed run resumes where it stopped.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cp_base::{Project, STATE_DIR, WorkerId};
use serde_json::{Value, json};

use super::agents::DriverFactory;
use super::alert::{Alert, Alerter};
use super::condition::evaluate_condition;
use super::context::{ApprovalRecord, RunContext};
use super::error::WorkflowError;
use super::phase_record::PhaseRecord;
use super::prompter::{ApprovalPrompter, ApprovalRequest, Choice, WorkflowEvent};
use super::schema::{Action, DEFAULT_MAX_PARALLEL, Workflow};
use super::schema::{CURRENT_PHASE, stored_path};
use super::store::{PendingFeedback, Position, RunState, RunStatus, RunStore, Stage, now};
use super::template::{display_value, lookup_path, substitute};
use crate::restart::{RestartConfig, RestartEvent, RestartLoop, RestartOverrides, SessionDriver};

pub use super::exit::{EXIT_ABORTED, EXIT_CONFLICT, EXIT_FAILED, EXIT_INTERRUPTED};

/// The question of an approval gate without its own prompt.
pub const APPROVAL_PROMPT: &str = "Continue with the next phase?";

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
    };
    check_placeholders(&workflow, &state, workflow_path)?;
    let restart =
        RestartLoop::new(project.clone(), config.clone()).with_worker(options.worker.clone());
    // Earlier runs' records may be uncommitted; they are the host's, not someone's work.
    let runs = format!("{STATE_DIR}/runs/");
    restart.preflight(&[runs.as_str()])?;
    let _lock = store.lock(&state.run_id)?;
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
    };
    engine.start(true)
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

fn check_placeholders(
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

/// What an approval gate decided.
pub(super) struct Decided {
    pub(super) label: String,
    pub(super) action: Action,
    pub(super) target: Option<String>,
    pub(super) skipped: Vec<String>,
    pub(super) feedback: Option<String>,
}

pub(super) struct Engine<'a> {
    pub(super) workflow: &'a Workflow,
    pub(super) store: RunStore,
    pub(super) restart: RestartLoop,
    pub(super) driver: &'a mut dyn SessionDriver,
    pub(super) prompter: &'a mut dyn ApprovalPrompter,
    pub(super) state: RunState,
    pub(super) project: Project,
    pub(super) config: RestartConfig,
    pub(super) parallel: Parallel,
    /// Added to the next approval gate's prompt (a phase's `git diff --stat`).
    pub(super) gate_note: Option<String>,
}

/// How phases of a graph run side by side.
pub(super) struct Parallel {
    /// At most this many at once.
    pub(super) max: usize,
    /// Keep worktrees and branches after their merge.
    pub(super) keep_worktrees: bool,
    /// Makes a phase's agent; `None`: one phase at a time with the run's agent.
    pub(super) drivers: Option<Arc<dyn DriverFactory>>,
    /// The run's worker.
    pub(super) worker: WorkerId,
    /// Tells the person when the run needs them.
    pub(super) alerter: Option<Arc<dyn Alerter>>,
    /// The run's agent, recorded for phases without their own.
    pub(super) agent: Option<String>,
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
        let status = self.drive(resumed)?;
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
        })
    }

    /// Tells the person (through the host's alerter) that `phase` needs them.
    pub(super) fn alert(&self, event: &'static str, phase: &str, message: &str) {
        if let Some(alerter) = &self.parallel.alerter {
            alerter.alert(&Alert {
                event,
                run_id: self.state.run_id.clone(),
                workflow: self.state.workflow.clone(),
                phase: phase.to_owned(),
                message: message.to_owned(),
            });
        }
    }

    pub(super) fn save(&mut self) -> Result<(), WorkflowError> {
        self.store.save(&mut self.state)
    }

    /// The phase that runs after the one at `index`, in the workflow's run order.
    fn position_after(&self, index: usize) -> Option<Position> {
        let order = self.workflow.run_order();
        let next = order
            .iter()
            .position(|&i| i == index)
            .and_then(|at| order.get(at + 1));
        next.map(|&i| &self.workflow.phases[i]).map(|p| Position {
            phase: p.id.clone(),
            stage: Stage::Phase,
            counted: false,
        })
    }

    fn drive(&mut self, resumed: bool) -> Result<RunStatus, WorkflowError> {
        if self.workflow.is_graph() {
            return self.drive_graph(resumed);
        }
        while let Some(position) = self.state.position.clone() {
            let Some(index) = self.workflow.index_of(&position.phase) else {
                return Err(WorkflowError::Invalid {
                    path: self.state.workflow_file.clone(),
                    phase: Some(position.phase),
                    message: "the run is at a phase the workflow does not have".into(),
                });
            };
            match position.stage {
                Stage::Phase => self.run_phase(index, position.counted)?,
                Stage::Approval => {
                    if self.approval_gate(index)? == Some(Action::Abort) {
                        return Ok(RunStatus::Aborted);
                    }
                }
            }
        }
        self.state.status = RunStatus::Completed;
        self.save()?;
        Ok(RunStatus::Completed)
    }

    fn run_phase(&mut self, index: usize, counted: bool) -> Result<(), WorkflowError> {
        let phase = &self.workflow.phases[index];
        // A phase scheduled by repeat_phase (counted) runs even if it is on the skip list: the
        // person asked for it explicitly.
        if !counted && self.state.context.skip_phases.contains(&phase.id) {
            tracing::info!(phase = %phase.id, "skipping phase");
            self.prompter.on_event(&WorkflowEvent::PhaseSkipped {
                phase: phase.id.clone(),
            });
            self.state.position = self.position_after(index);
            return self.save();
        }
        if !counted {
            self.state.context.bump(&phase.id);
            self.state.position = Some(Position {
                phase: phase.id.clone(),
                stage: Stage::Phase,
                counted: true,
            });
            self.save()?;
        }
        let prompt = self.phase_prompt(index)?;
        let iteration = self.state.context.iteration(&phase.id);
        tracing::info!(phase = %phase.id, iteration, "phase started");
        self.prompter.on_event(&WorkflowEvent::PhaseStarted {
            phase: phase.id.clone(),
            iteration,
        });
        let prompter = &mut *self.prompter;
        let mut forward = |event: &RestartEvent| {
            prompter.on_event(&WorkflowEvent::Restart(event.clone()));
        };
        let result = self
            .restart
            .run_phase(&phase.id, &prompt, &mut *self.driver, &mut forward);
        let report = match result {
            Ok(report) => report,
            Err(source) => {
                tracing::error!(phase = %phase.id, "phase failed: {source}");
                self.alert("phase_failed", &phase.id, &source.to_string());
                self.state.status = RunStatus::Failed;
                self.state.error = Some(source.to_string());
                self.save()?;
                return Err(WorkflowError::Phase {
                    run_id: self.state.run_id.clone(),
                    source,
                });
            }
        };
        self.state.pending_feedback = None;
        self.state.position = Some(Position {
            phase: phase.id.clone(),
            stage: Stage::Approval,
            counted: true,
        });
        self.save()?;
        self.prompter.on_event(&WorkflowEvent::PhaseCompleted {
            phase: phase.id.clone(),
            restarts: report.restarts,
        });
        Ok(())
    }

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

    fn render(&self, phase: &str, text: &str) -> Result<String, WorkflowError> {
        substitute(text, |name| lookup(&self.state, phase, name)).map_err(|source| {
            WorkflowError::Placeholder {
                path: self.state.workflow_file.clone(),
                phase: phase.to_owned(),
                source,
            }
        })
    }

    /// Runs the approval gate of phase `index` (if it has one and its condition holds), records
    /// the decision and moves the position, in one save.
    fn approval_gate(&mut self, index: usize) -> Result<Option<Action>, WorkflowError> {
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
                let cap = self.workflow.max_iterations(&target);
                let runs = self.state.context.iteration(&target);
                if runs >= cap {
                    // Nothing is saved: the run stays at this approval gate, so a resume asks
                    // again and a different answer can move on.
                    return Err(WorkflowError::IterationCap {
                        run_id: self.state.run_id.clone(),
                        phase: target,
                        runs,
                        cap,
                    });
                }
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
        self.state.context.checkpoints.push(ApprovalRecord {
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
