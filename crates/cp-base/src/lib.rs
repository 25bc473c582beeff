//! Context Pilot's core contracts, shared by every module and front-end.
//!
//! - [`Module`]: a plain struct owning its state, offering tools (as data) and panels, and
//!   reacting to tool batches ([`Module::on_batch`]) and background events.
//! - Tools: [`ToolDef`] (JSON Schema parameters), [`ToolCall`], [`ToolResult`] with the
//!   [`FileChange`]s a call made, and [`validate_args`], which checks arguments before any
//!   handler runs and names the parameter at fault. A module keeps its tools in a
//!   [`ToolTable`] of [`Tool`] rows (name, description, schema, handler) and dispatches
//!   through it.
//! - [`Panel`]: title, badge, a pure render into a ratatui buffer, and `llm_context()`.
//!   Modules publish their panels as immutable snapshots ([`Views`]); the UI draws those and
//!   never waits for a module that a tool holds.
//! - [`Project`]: the root and its `.context-pilot/` layout; [`ConfigFile`] and [`JsonFile`]
//!   give atomic, locked, change-aware JSON documents.
//! - Trust ([`TrustStore`], [`Grant`], [`Project::trust_state`]): a project's callbacks, test
//!   command and `llm.base_url` take effect only once the person trusts the project; a
//!   linked worktree of a trusted repository ([`repository_of_worktree`]) is trusted as it is
//!   while its configuration is the same.
//! - [`WorkerId`] and the [`Notifier`] queue.
//! - Small shared helpers: [`now_ms`] (wall-clock milliseconds for records on disk),
//!   [`json_kind`] (what kind of JSON value a message should name) and [`find_program`]
//!   (a program on `PATH`, as `execvp` finds it).
//!
//! [`run_batch`] is the tool-batch pipeline every front-end shares.
//!
//! This crate has no terminal I/O and no async runtime.
//!
//! ```
//! use cp_base::{Module, Notifier, Project, Registry, ToolCall, ToolDef, ToolEnv, ToolOutcome,
//!               ToolResult, WorkerId};
//! use serde_json::{json, Value};
//!
//! struct Greeter;
//! impl Module for Greeter {
//!     fn id(&self) -> &'static str { "greeter" }
//!     fn tools(&self) -> Vec<ToolDef> {
//!         vec![ToolDef::new("greet", "Says hello. Example: {\"name\": \"Ada\"}", json!({
//!             "type": "object", "required": ["name"], "additionalProperties": false,
//!             "properties": {"name": {"type": "string"}}
//!         }))]
//!     }
//!     fn call_tool(&mut self, _name: &str, args: &Value, _env: &ToolEnv) -> ToolOutcome {
//!         ToolResult::ok(format!("hello {}", args["name"].as_str().unwrap_or("?"))).into()
//!     }
//! }
//!
//! let mut registry = Registry::new();
//! registry.register(Box::new(Greeter));
//! let env = ToolEnv::new(Project::at("/tmp"), WorkerId::default(), Notifier::new());
//! let ok = registry.call(&ToolCall::new("1", "greet", json!({"name": "Ada"})), &env);
//! assert_eq!(ok.text, "hello Ada");
//! let bad = registry.call(&ToolCall::new("2", "greet", json!({"nom": "Ada"})), &env);
//! assert!(bad.is_error);
//! assert_eq!(bad.text, "greet: missing required parameter 'name'");
//! ```

mod args;
mod atomic;
mod batch;
mod cancel;
mod clock;
mod external_edit;
pub mod folder_globs;
mod json;
mod layout;
mod module;
mod notify;
mod panel;
pub mod private;
pub mod proctree;
mod program;
mod project;
pub mod racy;
mod registry;
mod schema;
pub mod scratch;
mod store;
pub mod text;
mod tool;
mod tool_table;
mod trust;
mod trust_cache;
mod trust_worktree;
mod view;
mod worker;

pub use args::Args;
pub use atomic::write_atomic_in;
pub use batch::{call_label, react_to_changes, run_batch};
pub use cancel::CancelToken;
pub use clock::now_ms;
pub use external_edit::ExternalEdit;
pub use json::json_kind;
pub use layout::STATE_DIR;
pub use module::{BatchChanges, BatchHold, BatchResponse, CallChanges, CallNote, Module, ToolEnv};
pub use notify::{Level, Notice, Notification, Notifier};
pub use panel::{Anchor, Panel, PanelKind, PanelView, ScrollExtent};
pub use program::{find_program, is_executable_file, shell_word};
pub use project::Project;
pub use registry::{Busy, DuplicateTool, Registry};
pub use schema::{ArgError, ArgProblem, validate_args};
pub use store::{
    ConfigFile, FileLock, JsonFile, Stamp, StoreError, write_atomic, write_atomic_cache,
};
pub use tool::{
    ChangeKind, DeferredResult, FileChange, ToolCall, ToolDef, ToolOutcome, ToolResult,
};
pub use tool_table::{Tool, ToolTable};
pub use trust::{Grant, GrantCallback, TrustError, TrustState, TrustStore, user_config_dir};
pub use trust_worktree::repository_of_worktree;
pub use view::{ModuleView, Views};
pub use worker::{DEFAULT_WORKER, InvalidWorkerId, WORKER_ENV, WorkerId, is_valid_name};

/// Re-exported so modules render with the same ratatui types as the host.
#[cfg(feature = "draw")]
pub use ratatui;
#[cfg(feature = "draw")]
pub mod theme;
