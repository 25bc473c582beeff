//! The JSON that Claude Code, Gemini CLI and Codex CLI write to a hook's stdin (Codex's has
//! Claude Code's shape).
//!
//! Both agents send `session_id`, `transcript_path`, `cwd` and `hook_event_name`. Tool events
//! add `tool_name`, `tool_input` and `tool_response` (Claude's `PostToolUse`, Gemini's
//! `AfterTool`); Claude Code's `PostToolBatch` sends `tool_calls`, each with the same three
//! fields (its `tool_response` is the text the model got, not `PostToolUse`'s object). Stop
//! events add `stop_hook_active` (Claude's `Stop`, Gemini's `AfterAgent`), which the stop gate
//! does not trust: Claude Code resets it after any tool call and Gemini CLI does not send it
//! reliably, so blocks are counted per `session_id` instead. Inside a subagent, Claude Code
//! and Codex CLI add `agent_id` and `agent_type` (the compaction agent's `agent_type` is
//! empty); `SessionStart` adds `source` (`compact` after a compaction). Fields we do not use
//! are ignored, so newer agent versions keep working.

use std::path::{Path, PathBuf};

use cp_agent_cli::{EditPaths, EditedPath};
use cp_base::{ChangeKind, FileChange, Project, json_kind};
use serde::Deserialize;
use serde_json::Value;

/// The fields of a hook payload that Context Pilot uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookPayload {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// The tool call of a tool event (`PostToolUse`, `AfterTool`).
    #[serde(flatten)]
    pub call: ToolCallPayload,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    /// Claude Code's `PostToolBatch`: every tool call of the batch.
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallPayload>>,
    /// Set when the hook fires inside a subagent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The subagent's type (`general-purpose`, Codex's `default`); empty for Claude Code's
    /// compaction agent.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// `SessionStart`'s reason: `startup`, `resume`, `clear`, `compact`.
    #[serde(default)]
    pub source: Option<String>,
}

/// One tool call: the one of a tool event, or one of a batch.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolCallPayload {
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Value>,
    #[serde(default)]
    pub tool_response: Option<Value>,
}

/// How Claude Code opens the result of a tool call that failed (the model gets it as an
/// error result), e.g. `<tool_use_error>File has not been read yet…`.
const TOOL_ERROR: &str = "<tool_use_error>";

impl ToolCallPayload {
    /// Checks what a tool event needs: the tool's name and an object of arguments.
    pub fn require_tool(&self) -> Result<(&str, &serde_json::Map<String, Value>), PayloadError> {
        let name = self
            .tool_name
            .as_deref()
            .ok_or(PayloadError::Missing("tool_name", "tool event"))?;
        match &self.tool_input {
            Some(Value::Object(map)) => Ok((name, map)),
            Some(other) => Err(PayloadError::ToolInput(json_kind(other))),
            None => Err(PayloadError::Missing("tool_input", "tool event")),
        }
    }

    /// Whether `tool_name` is one of the agents' file edit tools.
    pub fn is_edit_tool(&self) -> bool {
        self.tool_name
            .as_deref()
            .and_then(cp_agent_cli::edit_tool)
            .is_some()
    }

    /// Whether `tool_name` is one of the shell tools of `agent`, which may change any file.
    pub fn is_shell_tool(&self, agent: &dyn cp_agent_cli::AgentCli) -> bool {
        self.tool_name
            .as_deref()
            .is_some_and(|tool| agent.spec().shell_tools.contains(&tool))
    }

    /// Claude's Write reports `"type": "create"` for a new file.
    fn created(&self) -> bool {
        self.tool_response
            .as_ref()
            .and_then(|r| r.get("type"))
            .and_then(Value::as_str)
            == Some("create")
    }

    /// Whether the call failed, so it changed nothing: its result is Claude Code's error
    /// text. (`PostToolUse` never fires for a failed call; `PostToolBatch` lists it.)
    pub fn failed(&self) -> bool {
        self.tool_response
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|text| text.trim_start().starts_with(TOOL_ERROR))
    }
}

/// Why a payload was not usable.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("stdin is empty; the agent should send the hook's JSON payload")]
    Empty,
    #[error("the payload is not valid JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("the payload has an unexpected shape ({0})")]
    Shape(serde_json::Error),
    #[error("the payload has no '{0}'; expected a {1} payload")]
    Missing(&'static str, &'static str),
    #[error("'tool_input' must be an object, got {0}")]
    ToolInput(&'static str),
    #[error("the edit tool's arguments do not say which files it edited: {0}")]
    Paths(#[from] cp_agent_cli::EditArgumentsError),
}

impl HookPayload {
    pub fn parse(text: &str) -> Result<Self, PayloadError> {
        if text.trim().is_empty() {
            return Err(PayloadError::Empty);
        }
        let value: Value = serde_json::from_str(text).map_err(PayloadError::NotJson)?;
        serde_json::from_value(value).map_err(PayloadError::Shape)
    }

    /// The session the hook counts this call in: the agent's `session_id`, or inside a
    /// subagent that session and the subagent's id (its own blocks, shell snapshots and
    /// edits).
    pub fn session_key(&self, fallback: &str) -> String {
        let session = self.session_id.as_deref().unwrap_or(fallback);
        match self.subagent() {
            Some(agent) => format!("{session}.agent-{agent}"),
            None => session.to_owned(),
        }
    }

    /// The subagent the hook fires in, if any (its `agent_id`).
    pub fn subagent(&self) -> Option<&str> {
        self.agent_id.as_deref().filter(|id| !id.is_empty())
    }

    /// The files an agent's edit tool changed, if `tool_name` is one of them, that lie inside
    /// `project` (one for most tools; every file of a Codex `apply_patch`). Relative paths are
    /// resolved against the payload's `cwd`.
    pub fn edited_files(&self, project: &Project) -> Result<Vec<FileChange>, PayloadError> {
        let (tool, input) = self.call.require_tool()?;
        self.files_of(project, tool, input, self.call.created())
    }

    /// The tool calls of a `PostToolBatch` payload, each with the files it edited inside
    /// `project` (none for a tool that edits no file). A call whose arguments are malformed
    /// is an error, as at `PostToolUse`.
    pub fn batch_edits(
        &self,
        project: &Project,
    ) -> Result<Vec<(String, Vec<FileChange>)>, PayloadError> {
        let calls = self
            .tool_calls
            .as_deref()
            .ok_or(PayloadError::Missing("tool_calls", "tool batch"))?;
        let mut edits = Vec::new();
        for call in calls.iter().filter(|call| !call.failed()) {
            let (tool, input) = call.require_tool()?;
            // The batch's `tool_response` is the model's text, which does not say whether a
            // file is new; that does not change which callbacks fire (a deleted file is told
            // from the disk).
            let files = self.files_of(project, tool, input, false)?;
            edits.push((tool.to_owned(), files));
        }
        Ok(edits)
    }

    /// The files edit tool `tool` changed with arguments `input`, inside `project`.
    fn files_of(
        &self,
        project: &Project,
        tool: &str,
        input: &serde_json::Map<String, Value>,
        created: bool,
    ) -> Result<Vec<FileChange>, PayloadError> {
        let Some(edit_tool) = cp_agent_cli::edit_tool(tool) else {
            return Ok(Vec::new());
        };
        let named: Vec<EditedPath> = match edit_tool.paths {
            EditPaths::Keys(keys) => {
                let Some(raw) = keys
                    .iter()
                    .find_map(|k| input.get(*k).and_then(Value::as_str))
                    .filter(|p| !p.is_empty())
                else {
                    return Err(PayloadError::Missing(keys[0], "file edit tool"));
                };
                vec![EditedPath {
                    path: raw.to_owned(),
                    kind: None,
                }]
            }
            EditPaths::Parse(parse) => parse(input).map_err(PayloadError::Paths)?,
        };
        let base = self
            .cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let mut changes = Vec::new();
        for edited in named {
            let absolute = base.join(&edited.path);
            let Some(rel) = inside(project, &absolute) else {
                continue;
            };
            let kind = if !absolute.exists() {
                ChangeKind::Deleted
            } else if let Some(kind) = edited.kind {
                kind
            } else if created {
                ChangeKind::Created
            } else {
                ChangeKind::Modified
            };
            changes.push(FileChange::new(rel, kind));
        }
        Ok(changes)
    }
}

/// `path` relative to the project root, following symlinks in the part that exists (a
/// project under `/tmp` may be reached as `/private/tmp`), or `None` when it lies outside.
fn inside(project: &Project, path: &Path) -> Option<String> {
    let normal = lexical(path);
    if let Some(rel) = project.relative(&normal) {
        return (!rel.is_empty()).then_some(rel);
    }
    // Resolve the deepest existing ancestor and keep the rest as written.
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name()?.to_owned());
        existing = existing.parent()?;
    }
    let mut real = std::fs::canonicalize(existing).ok()?;
    for part in rest.iter().rev() {
        real.push(part);
    }
    let root = std::fs::canonicalize(project.root()).ok()?;
    let resolved = Project::at(root).relative(&real)?;
    (!resolved.is_empty()).then_some(resolved)
}

/// Removes `.` and resolves `..` without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[expect(
        clippy::needless_pass_by_value,
        reason = "reads better with json! literals"
    )]
    fn payload(value: Value) -> HookPayload {
        HookPayload::parse(&value.to_string()).unwrap()
    }

    #[test]
    fn edit_tools_name_their_file_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "x").unwrap();
        let project = Project::at(&root);
        let cwd = root.join("src");

        let edit = payload(json!({"cwd": cwd, "tool_name": "Edit",
            "tool_input": {"file_path": "a.rs", "old_string": "x", "new_string": "y"}}));
        assert_eq!(
            edit.edited_files(&project).unwrap(),
            [FileChange::new("src/a.rs", ChangeKind::Modified)]
        );
        let created = payload(json!({"cwd": root, "tool_name": "Write",
            "tool_input": {"file_path": root.join("src/a.rs"), "content": "x"},
            "tool_response": {"type": "create", "filePath": root.join("src/a.rs")}}));
        assert_eq!(
            created.edited_files(&project).unwrap()[0].kind,
            ChangeKind::Created
        );
        let gemini = payload(json!({"cwd": root, "tool_name": "replace",
            "tool_input": {"absolute_path": root.join("src/gone.rs")}}));
        assert_eq!(
            gemini.edited_files(&project).unwrap(),
            [FileChange::new("src/gone.rs", ChangeKind::Deleted)]
        );
        let read = payload(
            json!({"cwd": root, "tool_name": "Read", "tool_input": {"file_path": "src/a.rs"}}),
        );
        assert_eq!(read.edited_files(&project).unwrap(), []);
        let outside = payload(json!({"cwd": root, "tool_name": "Write",
            "tool_input": {"file_path": "../elsewhere.txt", "content": ""}}));
        assert_eq!(outside.edited_files(&project).unwrap(), []);
    }

    #[test]
    fn a_codex_patch_names_each_file_it_touched_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "x").unwrap();
        std::fs::write(root.join("src/new.rs"), "x").unwrap();
        std::fs::write(root.join("added.md"), "x").unwrap();
        let project = Project::at(&root);
        let patch = "*** Begin Patch\n*** Add File: added.md\n+x\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Update File: src/b.rs\n*** Move to: src/new.rs\n*** Delete File: gone.txt\n*** Add File: ../outside.txt\n+x\n*** End Patch";
        let codex = payload(json!({"cwd": root, "tool_name": "apply_patch",
            "tool_input": {"command": patch}}));
        assert_eq!(
            codex.edited_files(&project).unwrap(),
            [
                FileChange::new("added.md", ChangeKind::Created),
                FileChange::new("src/a.rs", ChangeKind::Modified),
                FileChange::new("src/new.rs", ChangeKind::Created),
                FileChange::new("gone.txt", ChangeKind::Deleted),
            ]
        );
        let no_patch = payload(json!({"tool_name": "apply_patch", "tool_input": {}}));
        let err = no_patch.edited_files(&project).unwrap_err().to_string();
        assert!(err.contains("'command' is missing"), "{err}");
    }

    #[test]
    fn a_batch_names_the_files_of_its_edit_calls_and_skips_failed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let project = Project::at(&root);
        let batch = payload(json!({"cwd": root, "hook_event_name": "PostToolBatch",
        "tool_calls": [
            {"tool_name": "Write", "tool_input": {"file_path": root.join("a.txt")},
             "tool_response": "File created successfully at: a.txt"},
            {"tool_name": "Edit", "tool_input": {"file_path": root.join("b.txt")},
             "tool_response": "<tool_use_error>File has not been read yet.</tool_use_error>"},
            {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a.txt"},
            {"tool_name": "Agent", "tool_input": {"prompt": "x"},
             "tool_response": [{"type": "text", "text": "done"}]}
        ]}));
        assert_eq!(
            batch.batch_edits(&project).unwrap(),
            [
                (
                    "Write".to_owned(),
                    vec![FileChange::new("a.txt", ChangeKind::Modified)]
                ),
                ("Bash".to_owned(), vec![]),
                ("Agent".to_owned(), vec![]),
            ]
        );
        let sub = payload(json!({"session_id": "s1", "agent_id": "a7", "agent_type": ""}));
        assert_eq!(sub.session_key("-"), "s1.agent-a7");
        assert_eq!(payload(json!({"session_id": "s1"})).session_key("-"), "s1");
        let no_calls = payload(json!({"hook_event_name": "PostToolBatch"}));
        assert!(no_calls.batch_edits(&project).is_err());
    }

    #[test]
    fn malformed_payloads_name_what_is_wrong() {
        assert!(matches!(HookPayload::parse(" "), Err(PayloadError::Empty)));
        assert!(matches!(
            HookPayload::parse("{nope"),
            Err(PayloadError::NotJson(_))
        ));
        assert!(matches!(
            HookPayload::parse("[1]"),
            Err(PayloadError::Shape(_))
        ));
        let no_input = payload(json!({"tool_name": "Write"}));
        assert_eq!(
            no_input.call.require_tool().unwrap_err().to_string(),
            "the payload has no 'tool_input'; expected a tool event payload"
        );
        let bad_input = payload(json!({"tool_name": "Write", "tool_input": "x"}));
        assert_eq!(
            bad_input.call.require_tool().unwrap_err().to_string(),
            "'tool_input' must be an object, got a string"
        );
        let no_path = payload(json!({"tool_name": "Edit", "tool_input": {}}));
        let project = Project::at("/nonexistent");
        assert_eq!(
            no_path.edited_files(&project).unwrap_err().to_string(),
            "the payload has no 'file_path'; expected a file edit tool payload"
        );
    }
}
