//! The files module: the built-in `File_read`, `File_edit`, `File_write`, `File_delete`,
//! `File_glob` and `File_grep` tools, confined to the project root.
//!
//! Parameter names are the ones agents already know. Every path is confined to the project
//! root (see [`confine`]) and resolved beneath it without a check-then-use race; files are
//! replaced atomically. Every change is reported as a [`cp_base::FileChange`], which is what
//! makes callbacks fire. [`open_regular`] gives other front-ends (the file viewer) the same
//! safe open.
//!
//! ```
//! use cp_base::{ChangeKind, FileChange, Notifier, Project, Registry, ToolCall, ToolEnv, WorkerId};
//! use cp_mod_files::FilesModule;
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut registry = Registry::new();
//! registry.register(Box::new(FilesModule));
//! let env = ToolEnv::new(Project::at(dir.path()), WorkerId::default(), Notifier::new());
//! let call = |name: &str, args| registry.call(&ToolCall::new("1", name, args), &env);
//!
//! let written = call("File_write", json!({"file_path": "src/lib.rs", "content": "fn old() {}\n"}));
//! assert_eq!(written.changes, vec![FileChange::new("src/lib.rs", ChangeKind::Created)]);
//! let edited = call("File_edit", json!({
//!     "file_path": "src/lib.rs", "old_string": "fn old()", "new_string": "fn new()",
//! }));
//! assert_eq!(edited.changes, vec![FileChange::new("src/lib.rs", ChangeKind::Modified)]);
//! let read = call("File_read", json!({"file_path": "src/lib.rs"}));
//! assert!(read.text.contains("fn new() {}"), "{}", read.text);
//! // Paths outside the project root are refused, and nothing changes.
//! let outside = call("File_write", json!({"file_path": "../escape.txt", "content": "x"}));
//! assert!(outside.is_error && outside.changes.is_empty());
//! ```

mod beneath;
mod confine;
mod delete;
mod edit;
mod error;
mod glob;
mod grep;
mod module;
mod read;
mod write;

#[cfg(test)]
mod safety_tests;
#[cfg(test)]
mod tests;

pub use beneath::open_regular;
pub use confine::{ConfinedPath, confine};
pub use error::FileError;
pub use module::FilesModule;
