//! The files module: its table of `File_*` tools (names, descriptions for the model, JSON
//! Schemas) and the dispatch of a call to the file that runs that tool.

use std::path::Path;

use cp_base::{Module, Tool, ToolDef, ToolEnv, ToolOutcome, ToolResult, ToolTable};
use serde_json::{Value, json};

use super::error::{FileError, refused};
use super::{delete, edit, glob, grep, read, write};

/// The files module. Stateless: the project root comes from the tool environment.
#[derive(Debug, Default)]
pub struct FilesModule;

/// How a files tool runs: on the project root, with the call's arguments.
type Handler = fn(&Path, &Value) -> Result<ToolResult, FileError>;

/// The `File_*` tools: what the model sees, and the function that runs each.
static TOOLS: ToolTable<Handler> = ToolTable::new(&[
    Tool {
        name: "File_read",
        description: "Read a text file in the project. Lines come numbered (`   12\\tcode`). Use \
         `offset` (1-based first line) and `limit` (number of lines) for large files; \
         only what the window needs is read (at most 32 MiB). Regular files only, not \
         FIFOs or devices. \
         Example: {\"file_path\": \"src/main.rs\", \"offset\": 40, \"limit\": 80}",
        schema: read_schema,
        handler: read::run,
    },
    Tool {
        name: "File_edit",
        description: "Replace text in a file. `old_string` must appear exactly once unless \
         `replace_all` is true; include enough surrounding lines to make it unique. \
         Matching callbacks run after the edit and their results follow the edit's. \
         Example: {\"file_path\": \"src/lib.rs\", \"old_string\": \"fn old()\", \"new_string\": \"fn new()\"}",
        schema: edit_schema,
        handler: edit::run,
    },
    Tool {
        name: "File_write",
        description: "Create or overwrite a file with `content`; parent directories are created. \
         The file is replaced atomically (a failed write leaves the old file intact) \
         and keeps its permissions. Matching callbacks run after the write. \
         Example: {\"file_path\": \"notes/todo.md\", \"content\": \"# Todo\\n\"}",
        schema: write_schema,
        handler: write::run,
    },
    Tool {
        name: "File_delete",
        description: "Delete a file (not a directory). A symlink is deleted itself, not its target. \
         Matching callbacks run after the deletion. \
         Example: {\"file_path\": \"src/old.rs\"}",
        schema: delete_schema,
        handler: delete::run,
    },
    Tool {
        name: "File_glob",
        description: "Find files by name: the project paths matching a glob, newest first (at most \
         100, with a count of the rest). Gitignored and hidden files are skipped. A \
         pattern without `/` matches file names at any depth. \
         Example: {\"pattern\": \"**/*.rs\", \"path\": \"crates\"}",
        schema: glob_schema,
        handler: glob::run,
    },
    Tool {
        name: "File_grep",
        description: "Search file contents with a regular expression (ripgrep's engine and rules: \
         gitignored, hidden and binary files are skipped). `output` \"paths\" (default) \
         lists matching files with counts; \"lines\" shows matching lines as \
         `line:text` (context lines as `line-text`). Output is bounded; a note says \
         when it was cut. Example: {\"pattern\": \"fn\\\\s+parse_\\\\w+\", \"glob\": \"*.rs\", \
         \"output\": \"lines\", \"context\": 2}",
        schema: grep_schema,
        handler: grep::run,
    },
]);

impl Module for FilesModule {
    fn id(&self) -> &'static str {
        "files"
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome {
        let result = match TOOLS.get(name) {
            Some(tool) => (tool.handler)(env.project.root(), args),
            None => Err(refused!("files: no tool named '{name}'")),
        };
        result
            .unwrap_or_else(|e| ToolResult::error(e.to_string()))
            .into()
    }
}

fn read_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path"],
        "properties": {
            "file_path": path_schema(),
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read, 1-based."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100_000, "description": "How many lines to read (default 2000)."}
        }
    })
}

fn edit_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path", "old_string", "new_string"],
        "properties": {
            "file_path": path_schema(),
            "old_string": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
            "new_string": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
        }
    })
}

fn write_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path", "content"],
        "properties": {
            "file_path": path_schema(),
            "content": {"type": "string", "description": "The whole new content."}
        }
    })
}

fn delete_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["file_path"],
        "properties": {"file_path": path_schema()}
    })
}

fn glob_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["pattern"],
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob, e.g. `*.toml` or `src/**/test_*.py`."},
            "path": {"type": "string", "minLength": 1, "description": "Directory to search, relative to the project root (default: the root)."}
        }
    })
}

fn grep_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["pattern"],
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (Rust regex syntax)."},
            "path": {"type": "string", "minLength": 1, "description": "File or directory to search, relative to the project root (default: the root)."},
            "glob": {"type": "string", "minLength": 1, "description": "Only files matching this glob, e.g. `*.rs`."},
            "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
            "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "Lines of context before and after each match (lines output)."},
            "output": {"type": "string", "enum": ["paths", "lines"], "description": "\"paths\" (default) or \"lines\"."}
        }
    })
}

fn path_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "description": "Path relative to the project root, or absolute inside it.",
        "examples": ["src/main.rs"]
    })
}
