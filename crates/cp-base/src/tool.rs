//! Tool data types: definitions, calls, results and the file changes a call made.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as the model, MCP clients and the command palette see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Public name, e.g. `File_edit`. Part of the product's contract.
    pub name: String,
    /// Written for the model that reads it: what the tool does, with an example.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolDef {
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// One call of a tool: its name and JSON arguments, as the model sent them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Caller-assigned id (the provider's `tool_use` id), used to match results to calls.
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Created => "created",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
        })
    }
}

/// A file change reported by a tool. `path` is relative to the project root, with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
}

impl FileChange {
    pub fn new(path: impl Into<String>, kind: ChangeKind) -> Self {
        Self {
            path: path.into(),
            kind,
        }
    }
}

/// The result of a tool call: text for the model, whether it is an error, and the files it changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
}

impl ToolResult {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            changes: Vec::new(),
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            changes: Vec::new(),
        }
    }

    /// A result that is an error when `is_error` says so (as agent CLIs report them).
    pub fn new(text: impl Into<String>, is_error: bool) -> Self {
        Self {
            text: text.into(),
            is_error,
            changes: Vec::new(),
        }
    }

    #[must_use]
    pub fn with_change(mut self, change: FileChange) -> Self {
        self.changes.push(change);
        self
    }

    /// Appends a paragraph (a module's note about this call, e.g. a callback's result).
    pub fn append(&mut self, text: &str) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(text);
    }
}

/// Blocking work a handler hands back so it runs without holding the module.
pub type DeferredResult = Box<dyn FnOnce() -> ToolResult + Send>;

/// What a tool handler returns.
///
/// Handlers run while the host holds the module. Anything that may wait (a process, a timeout)
/// returns [`ToolOutcome::Deferred`]: the host runs the closure on a worker thread with the
/// module released, so panels keep rendering while the tool waits.
pub enum ToolOutcome {
    Done(ToolResult),
    Deferred(DeferredResult),
}

impl ToolOutcome {
    /// Runs deferred work to completion on the current thread.
    pub fn finish(self) -> ToolResult {
        match self {
            Self::Done(result) => result,
            Self::Deferred(work) => work(),
        }
    }
}

impl From<ToolResult> for ToolOutcome {
    fn from(result: ToolResult) -> Self {
        Self::Done(result)
    }
}

impl fmt::Debug for ToolOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Done(result) => f.debug_tuple("Done").field(result).finish(),
            Self::Deferred(_) => f.write_str("Deferred(..)"),
        }
    }
}
