//! The workflow file: YAML phases with optional approval gates, and its checks.
//!
//! ```yaml
//! name: feature
//! vars: { output_dir: docs/feature }
//! context: { feature: { flags: [backend] } }   # free fields conditions can read
//! phases:
//!   - id: plan
//!     prompt: Write the plan to {{output_dir}}/plan.md.
//!     approval: { approval_required: true }
//!   - id: implement
//!     prompt: Implement {{output_dir}}/plan.md.
//!     approval:
//!       condition: "context.feature.flags.includes('backend')"
//!       prompt: Review the implementation?
//!       show_files: ["{{output_dir}}/plan.md"]
//!       options:
//!         - { label: Continue, on_select: { action: continue } }
//!         - { label: Redo the plan, with_feedback: true,
//!             on_select: { action: repeat_phase, target: plan } }
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{ApprovalProblem, OptionProblem, WorkflowError};
use super::graph;
use super::template::placeholders;

/// `repeat_phase` target meaning "the phase this approval gate belongs to".
pub const CURRENT_PHASE: &str = "current";

/// Top-level context keys the engine owns; the file's `context` may not set them.
pub const RESERVED_CONTEXT_KEYS: [&str; 5] =
    ["approvals", "checkpoints", "skip_phases", "phases", "vars"];

/// A workflow file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    /// Name, shown in progress lines and used in run ids.
    pub name: String,
    /// What the workflow is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values for `{{var}}` in prompts and `show_files`; also `context.vars` in conditions.
    #[serde(default)]
    pub vars: BTreeMap<String, Value>,
    /// Initial free fields of the run context, e.g. `feature: {flags: [backend]}`.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// How many times any phase may run in one run (its first run included), unless the
    /// phase sets its own `max_iterations`. Default `DEFAULT_MAX_ITERATIONS` (10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// The agent that runs the phases (`builtin`, `claude`, `gemini` or `codex`), unless
    /// `context-pilot run --agent` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// How many phases may run at once (default [`DEFAULT_MAX_PARALLEL`]); `--max-parallel`
    /// overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<usize>,
    /// How many times a phase's merge is tried before the person decides (a red combined
    /// tree sends the phase back until then), unless the phase sets its own. Default
    /// [`DEFAULT_MAX_MERGE_ATTEMPTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_merge_attempts: Option<u32>,
    /// How many combined trees the merge queue tests at once: the phase at its head and the
    /// ones queued behind it, each on the candidates before it (1: one at a time). Default:
    /// the machine's cores, at most [`MAX_SPECULATIVE_MERGES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative_merges: Option<usize>,
    /// The phases, run in order.
    pub phases: Vec<Phase>,
}

/// How many phases run at once when neither `--max-parallel` nor the file says.
pub const DEFAULT_MAX_PARALLEL: usize = 4;

/// How many times a phase may run when neither it nor the workflow says: enough for real
/// rework, and a stop for a `repeat_phase` answered in a loop.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

/// How many times a phase's merge is tried when neither it nor the workflow says: the first,
/// and once more after its agent saw the failure.
pub const DEFAULT_MAX_MERGE_ATTEMPTS: u32 = 2;

/// The most combined trees the merge queue tests at once when the workflow does not say.
pub const MAX_SPECULATIVE_MERGES: usize = 4;

/// One phase: a prompt for the agent, and an optional approval gate after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Unique id (`[A-Za-z0-9_.-]`), used by `repeat_phase` and `skip_phases`.
    pub id: String,
    /// The task, with `{{var}}` placeholders.
    pub prompt: String,
    /// The phases this one waits for (`[]`: none, it may run first). Without the key the
    /// phase waits for the one listed above it, as in a plain sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<Vec<String>>,
    /// The agent that runs this phase (`builtin`, `claude`, `gemini`, …), else the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The host of the `hosts` configuration this phase runs on (`local`: the run's own
    /// machine); without it the run picks a free slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The approval gate after the phase: the `approval:` block (`checkpoint:`, its name
    /// before, is read the same).
    #[serde(default, alias = "checkpoint", skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// How many times this phase may run in one run (its first run included); overrides the
    /// workflow's `max_iterations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// How many times this phase's merge is tried before the person decides; overrides the
    /// workflow's `max_merge_attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_merge_attempts: Option<u32>,
}

/// An approval gate: `approval_required: true` (Continue / Abort), or custom options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// Ask Continue / Abort.
    #[serde(default)]
    pub approval_required: bool,
    /// JavaScript expression over `context` and `phase`; the approval gate shows only when it is
    /// truthy. An expression that throws is logged and the approval gate is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// The question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Files to review, with `{{var}}` placeholders.
    #[serde(default)]
    pub show_files: Vec<String>,
    /// The choices (custom approval gates).
    #[serde(default)]
    pub options: Vec<ApprovalOption>,
}

/// One choice of a custom approval gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalOption {
    /// What the person sees.
    pub label: String,
    /// Ask for free-text feedback after this choice.
    #[serde(default)]
    pub with_feedback: bool,
    /// What happens.
    pub on_select: OnSelect,
}

/// The action of a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnSelect {
    /// Which action.
    pub action: Action,
    /// `repeat_phase`: `current` or a phase id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// `skip_phases`: the phases to skip.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<String>,
}

/// Approval gate actions (also the `decision` of an approval gate record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Go on to the next phase.
    Continue,
    /// Jump back to a phase and run it again.
    RepeatPhase,
    /// Add phases to the skip list and go on.
    SkipPhases,
    /// End the run (exit code 2).
    Abort,
}

impl Action {
    /// The `snake_case` name, e.g. `repeat_phase`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::RepeatPhase => "repeat_phase",
            Self::SkipPhases => "skip_phases",
            Self::Abort => "abort",
        }
    }
}

impl Workflow {
    /// Reads, parses and validates the workflow at `path`.
    pub fn load(path: &Path) -> Result<Self, WorkflowError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkflowError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates `text`; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, WorkflowError> {
        let workflow: Self = serde_norway::from_str(text).map_err(|e| WorkflowError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        workflow.validate(path)?;
        Ok(workflow)
    }

    /// How many times phase `id` may run in one run.
    pub fn max_iterations(&self, id: &str) -> u32 {
        self.phases
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.max_iterations)
            .or(self.max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS)
    }

    /// How many times phase `id`'s merge is tried before the person decides.
    pub fn max_merge_attempts(&self, id: &str) -> u32 {
        self.phases
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.max_merge_attempts)
            .or(self.max_merge_attempts)
            .unwrap_or(DEFAULT_MAX_MERGE_ATTEMPTS)
    }

    /// How many combined trees the merge queue tests at once: `speculative_merges`, else the
    /// machine's cores up to [`MAX_SPECULATIVE_MERGES`].
    pub fn speculative_merges(&self) -> usize {
        self.speculative_merges
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map_or(1, std::num::NonZeroUsize::get)
                    .min(MAX_SPECULATIVE_MERGES)
            })
            .max(1)
    }

    /// The index of phase `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.phases.iter().position(|p| p.id == id)
    }

    /// Whether any phase has `depends_on`: such a workflow runs as a graph, phases that are
    /// ready together at once. Without it, the phases run one after another as always.
    pub fn is_graph(&self) -> bool {
        self.phases.iter().any(|p| p.depends_on.is_some())
    }

    /// For each phase (by index), the indexes of the phases it waits for.
    pub fn dependencies(&self) -> Vec<Vec<usize>> {
        // A loaded workflow was checked; a plain sequence stands in for one that was not.
        graph::dependencies(&self.graph_nodes()).unwrap_or_else(|_| {
            (0..self.phases.len())
                .map(|i| i.checked_sub(1).into_iter().collect())
                .collect()
        })
    }

    fn graph_nodes(&self) -> Vec<graph::Node<'_>> {
        self.phases
            .iter()
            .map(|p| graph::Node {
                id: &p.id,
                depends_on: p.depends_on.as_deref(),
            })
            .collect()
    }

    /// The phases' indexes in the order they run: each after the phases it waits for
    /// (`depends_on`, else the one above), and among those ready at once, the one listed first.
    /// Without `depends_on` that is the file's order.
    pub fn run_order(&self) -> Vec<usize> {
        // A loaded workflow was checked; the file's order stands in for one that was not.
        graph::run_order(&self.graph_nodes()).unwrap_or_else(|_| (0..self.phases.len()).collect())
    }

    fn validate(&self, path: &Path) -> Result<(), WorkflowError> {
        let invalid = |phase: Option<&str>, message: String| WorkflowError::Invalid {
            path: path.to_path_buf(),
            phase: phase.map(str::to_owned),
            message,
        };
        if self.name.trim().is_empty() {
            return Err(invalid(
                None,
                "'name' is empty; give the workflow a name".into(),
            ));
        }
        if self.phases.is_empty() {
            return Err(invalid(
                None,
                "'phases' is empty; add at least one phase with an id and a prompt".into(),
            ));
        }
        if let Some(key) = RESERVED_CONTEXT_KEYS
            .iter()
            .find(|k| self.context.contains_key(**k))
        {
            return Err(invalid(
                None,
                format!("'context.{key}' is kept by the run itself; rename that field"),
            ));
        }
        self.check_limits(&invalid)?;
        let ids: Vec<&str> = self.phases.iter().map(|p| p.id.as_str()).collect();
        let mut seen = HashSet::new();
        for phase in &self.phases {
            let id = phase.id.as_str();
            if id.is_empty()
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            {
                return Err(invalid(
                    Some(id),
                    "phase ids use letters, digits, '_', '-' and '.', e.g. implement_api".into(),
                ));
            }
            // The id names a directory (the phase's worktree) and a git branch
            // (`cp/<run>/<id>`): neither may climb out of its place or be refused by git.
            if id.starts_with('.')
                || id.ends_with('.')
                || id.contains("..")
                || id.to_ascii_lowercase().ends_with(".lock")
            {
                return Err(invalid(
                    Some(id),
                    "a phase id may not start or end with '.', hold '..' or end in '.lock' \
                     (it names the phase's worktree and git branch)"
                        .into(),
                ));
            }
            if id == CURRENT_PHASE {
                return Err(invalid(
                    Some(id),
                    "'current' is reserved for repeat_phase targets; rename the phase".into(),
                ));
            }
            if !seen.insert(id) {
                return Err(invalid(
                    Some(id),
                    "this id is used by another phase too; phase ids must be unique".into(),
                ));
            }
            if phase.prompt.trim().is_empty() {
                return Err(invalid(Some(id), "'prompt' is empty".into()));
            }
            if phase.max_iterations == Some(0) {
                return Err(invalid(
                    Some(id),
                    "'max_iterations' is 0; give at least 1 (the first run counts), e.g. 10".into(),
                ));
            }
            if phase.max_merge_attempts == Some(0) {
                return Err(invalid(
                    Some(id),
                    "'max_merge_attempts' is 0; give at least 1 (the first try counts), e.g. 2"
                        .into(),
                ));
            }
            if let Some(approval) = &phase.approval {
                validate_approval(approval, &ids).map_err(|source| {
                    WorkflowError::InvalidApproval {
                        path: path.to_path_buf(),
                        phase: id.to_owned(),
                        source: Box::new(source),
                    }
                })?;
            }
        }
        if let Err(problem) = graph::run_order(&self.graph_nodes()) {
            return Err(invalid(Some(problem.phase()), problem.message(&ids)));
        }
        Ok(())
    }

    /// The workflow-wide limits: each, when given, at least 1.
    fn check_limits(
        &self,
        invalid: &dyn Fn(Option<&str>, String) -> WorkflowError,
    ) -> Result<(), WorkflowError> {
        if self.max_iterations == Some(0) {
            return Err(invalid(
                None,
                "'max_iterations' is 0; give at least 1 (the first run counts), e.g. 10".into(),
            ));
        }
        if self.max_merge_attempts == Some(0) {
            return Err(invalid(
                None,
                "'max_merge_attempts' is 0; give at least 1 (the first try counts), e.g. 2".into(),
            ));
        }
        if self.speculative_merges == Some(0) {
            return Err(invalid(
                None,
                "'speculative_merges' is 0; give at least 1 (1 tests one merge at a time), e.g. 2"
                    .into(),
            ));
        }
        if self.max_parallel == Some(0) {
            return Err(invalid(
                None,
                "'max_parallel' is 0; give at least 1 (1 runs the phases one at a time), e.g. 4"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Every `{{name}}` used in prompts and `show_files`, with the phase using it.
    pub fn placeholders(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for phase in &self.phases {
            let mut texts = vec![phase.prompt.as_str()];
            if let Some(cp) = &phase.approval {
                texts.extend(cp.show_files.iter().map(String::as_str));
                texts.extend(cp.prompt.as_deref());
            }
            for text in texts {
                for name in placeholders(text) {
                    out.push((phase.id.clone(), name));
                }
            }
        }
        out
    }
}

fn validate_approval(approval: &Approval, ids: &[&str]) -> Result<(), ApprovalProblem> {
    if approval.approval_required && !approval.options.is_empty() {
        return Err(ApprovalProblem::BothApprovalAndOptions);
    }
    if !approval.approval_required && approval.options.is_empty() {
        return Err(ApprovalProblem::NoOptions);
    }
    if approval
        .condition
        .as_ref()
        .is_some_and(|c| c.trim().is_empty())
    {
        return Err(ApprovalProblem::EmptyCondition);
    }
    let mut labels = HashSet::new();
    for option in &approval.options {
        validate_option(option, ids).map_err(|source| ApprovalProblem::Option {
            label: option.label.clone(),
            source,
        })?;
        if !labels.insert(option.label.trim().to_lowercase()) {
            return Err(ApprovalProblem::DuplicateLabel(option.label.clone()));
        }
    }
    Ok(())
}

fn validate_option(option: &ApprovalOption, ids: &[&str]) -> Result<(), OptionProblem> {
    if option.label.trim().is_empty() {
        return Err(OptionProblem::EmptyLabel);
    }
    let on = &option.on_select;
    let phases = || ids.join(", ");
    match on.action {
        Action::RepeatPhase => {
            let Some(target) = on.target.as_deref() else {
                return Err(OptionProblem::RepeatWithoutTarget { phases: phases() });
            };
            if target != CURRENT_PHASE && !ids.contains(&target) {
                return Err(OptionProblem::UnknownRepeatTarget {
                    target: target.to_owned(),
                    phases: phases(),
                });
            }
        }
        Action::SkipPhases => {
            if on.phases.is_empty() {
                return Err(OptionProblem::SkipWithoutPhases { phases: phases() });
            }
            if let Some(missing) = on.phases.iter().find(|p| !ids.contains(&p.as_str())) {
                return Err(OptionProblem::UnknownSkipPhase {
                    missing: missing.clone(),
                    phases: phases(),
                });
            }
        }
        Action::Continue | Action::Abort => {}
    }
    if on.target.is_some() && on.action != Action::RepeatPhase {
        return Err(OptionProblem::TargetNotApplicable(on.action.as_str()));
    }
    if !on.phases.is_empty() && on.action != Action::SkipPhases {
        return Err(OptionProblem::PhasesNotApplicable(on.action.as_str()));
    }
    Ok(())
}

/// Where a workflow file is, as stored in a run: relative to the project root when inside it.
pub(crate) fn stored_path(root: &Path, path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
    };
    let absolute = std::fs::canonicalize(&absolute).unwrap_or(absolute);
    absolute
        .strip_prefix(root)
        .map_or(absolute.clone(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Workflow, String> {
        Workflow::parse(yaml, Path::new("wf.yaml")).map_err(|e| e.to_string())
    }

    const BASE: &str = "name: t\nphases:\n  - id: a\n    prompt: A\n  - id: b\n    prompt: B\n";

    fn with_approval(approval: &str) -> String {
        format!(
            "name: t\nphases:\n  - id: a\n    prompt: A\n    approval:\n{approval}  - id: b\n    prompt: B\n"
        )
    }

    #[test]
    fn the_old_checkpoint_key_reads_as_approval() {
        // Workflow files written before `approval:` was the key name the block `checkpoint:`.
        let old = parse(
            &with_approval("      approval_required: true\n")
                .replace("approval:\n", "checkpoint:\n"),
        )
        .unwrap();
        let new = parse(&with_approval("      approval_required: true\n")).unwrap();
        assert_eq!(old, new);
        assert!(old.phases[0].approval.as_ref().unwrap().approval_required);
        // Saved again, the block has its new name.
        let yaml = serde_norway::to_string(&old).unwrap();
        assert!(
            yaml.contains("approval:") && !yaml.contains("checkpoint:"),
            "{yaml}"
        );
        // Both names on one phase is one block given twice.
        let both = "name: t\nphases:\n  - id: a\n    prompt: A\n    approval: {approval_required: true}\n    checkpoint: {approval_required: true}\n";
        assert!(
            parse(both)
                .unwrap_err()
                .contains("duplicate field `approval`"),
            "{}",
            parse(both).unwrap_err()
        );
    }

    #[test]
    fn a_full_workflow_parses() {
        let wf = parse(&with_approval(
            "      condition: \"context.x > 1\"\n      prompt: Review?\n      show_files: [\"{{d}}/p.md\"]\n      options:\n        - label: Go\n          on_select: { action: continue }\n        - label: Redo\n          with_feedback: true\n          on_select: { action: repeat_phase, target: current }\n        - label: Skip\n          on_select: { action: skip_phases, phases: [b] }\n        - label: Stop\n          on_select: { action: abort }\n",
        ))
        .unwrap();
        let cp = wf.phases[0].approval.as_ref().unwrap();
        assert_eq!(cp.options.len(), 4);
        assert_eq!(cp.options[1].on_select.action, Action::RepeatPhase);
        assert!(cp.options[1].with_feedback);
        assert_eq!(wf.placeholders(), [("a".to_owned(), "d".to_owned())]);
        assert_eq!(parse(BASE).unwrap().phases.len(), 2);
    }

    #[test]
    fn errors_name_the_file_the_phase_and_the_fix() {
        let cases = [
            (
                "name: t\nphases:\n  - id: a\n    prompt: A\n  - id: a\n    prompt: B\n",
                "workflow wf.yaml, phase 'a': this id is used by another phase too",
            ),
            (
                &with_approval(
                    "      options:\n        - label: R\n          on_select: { action: repeat_phase, target: nope }\n",
                ),
                "workflow wf.yaml, phase 'a': option 'R': repeat_phase target 'nope' is not a phase of this workflow; use \"current\" or one of a, b",
            ),
            (
                &with_approval(
                    "      options:\n        - label: S\n          on_select: { action: skip_phases, phases: [b, zz] }\n",
                ),
                "option 'S': skip_phases names 'zz', which is not a phase",
            ),
            (
                &with_approval("      prompt: Hm?\n"),
                "workflow wf.yaml, phase 'a': approval 'options' is empty",
            ),
            (
                &with_approval("      options: []\n"),
                "approval 'options' is empty",
            ),
            (
                &with_approval(
                    "      options:\n        - label: R\n          on_select: { action: repeat_phase }\n",
                ),
                "repeat_phase needs a 'target'",
            ),
            (
                &with_approval(
                    "      options:\n        - label: X\n          on_select: { action: explode }\n",
                ),
                "unknown variant `explode`",
            ),
            ("name: t\nphases: []\n", "'phases' is empty"),
            ("name: t\nphase: []\n", "unknown field `phase`"),
            (
                "name: t\ncontext: {phases: 1}\nphases:\n  - {id: a, prompt: A}\n",
                "'context.phases' is kept by the run",
            ),
            (
                "name: t\nphases:\n  - {id: current, prompt: A}\n",
                "'current' is reserved",
            ),
            (
                "name: t\nphases:\n  - {id: 'a b', prompt: A}\n",
                "phase ids use letters",
            ),
            ("name: [\n", "workflow wf.yaml: "),
            (
                "name: t\nphases:\n  - {id: '..', prompt: A}\n",
                "may not start or end with '.'",
            ),
            (
                "name: t\nphases:\n  - {id: api.lock, prompt: A}\n",
                "end in '.lock'",
            ),
            ("name: t\nphases:\n  - {id: a..b, prompt: A}\n", "hold '..'"),
        ];
        for (yaml, expected) in cases {
            let err = parse(yaml).unwrap_err();
            assert!(err.contains(expected), "expected {expected:?} in {err:?}");
        }
    }

    #[test]
    fn parse_errors_carry_the_line() {
        let err = parse("name: t\nphases:\n  - id: a\n    prompt: A\n    bogus: 1\n").unwrap_err();
        assert!(err.contains("line 5"), "{err}");
    }
}
