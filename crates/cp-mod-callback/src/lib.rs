//! File-edit callbacks: scripts that run after the agent's own edits to matching files, so
//! it sees at once what an edit broke.
//!
//! Creating a callback through its tool, and a bad pattern rejected with a precise error:
//!
//! ```
//! use cp_base::{Module, Project, Registry, ToolCall, ToolEnv, Notifier, WorkerId};
//! use cp_mod_callback::CallbackModule;
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! // Trust (see `cp_base::TrustStore`) is recorded per user; here in a temp file.
//! let home = tempfile::tempdir().unwrap();
//! let project = Project::at(dir.path())
//!     .with_trust_store(cp_base::TrustStore::at(home.path().join("trust.json")));
//! let mut registry = Registry::new();
//! registry.register(Box::new(CallbackModule::new(project.clone(), WorkerId::default())));
//! let env = ToolEnv::new(project, WorkerId::default(), Notifier::new());
//! let created = registry.call(
//!     &ToolCall::new("1", "Callback_upsert", json!({
//!         "action": "create", "name": "cargo-check", "pattern": ["*.rs", "!target/"],
//!         "script_content": "cargo check 2>&1", "blocking": true, "timeout": 300
//!     })),
//!     &env,
//! );
//! assert!(created.text.starts_with("Created CB1 'cargo-check'"), "{}", created.text);
//! let bad = registry.call(
//!     &ToolCall::new("2", "Callback_upsert", json!({
//!         "action": "create", "name": "x", "pattern": "src/[", "script_content": "true"
//!     })),
//!     &env,
//! );
//! assert!(bad.is_error && bad.text.contains("`src/[` is not a valid glob"));
//! ```
//!
//! - Definitions live in the `callbacks` section of `.context-pilot/config.json` (see
//!   [`CallbackSection`]); scripts in `.context-pilot/scripts/{name}.sh`. Activation is per
//!   worker; a new callback is active only for the worker that created it.
//! - Tools: `Callback_upsert` (create/update/delete), `Callback_toggle` (per worker; `"all"`
//!   pauses or resumes everything), `Callback_open_editor`, `Callback_close_editor`.
//! - The fixed `callbacks` panel lists them, with the editor below when one is open.
//! - [`CallbackModule`]'s `on_batch` matches the batch's changed files against gitignore-style
//!   patterns ([`Matcher`], one compiled set per config change), plans the runs
//!   ([`plan`]) and fires them through `cp_mod_console` consoles. A run is queued (a
//!   `one_at_a_time` callback already running: [`RunQueue`], [`QueuedRun`]), started, ends
//!   (passed, failed, timed out, or not started: [`RunOutcome`]) and is reported once
//!   ([`RunReport`]). Blocking runs hold the batch's results and add each run's result to
//!   the call whose edit triggered it; background runs post a notification when done. A
//!   failed run opens a panel with its output. A callback failure never fails the edit.
//! - Background runs outlive a host reload: `save_state` lists the runs in flight (and the
//!   triggers queued behind `one_at_a_time` ones); `load_state` in the next process attaches
//!   to their consoles and reports each run exactly once, even one that ended while
//!   no host ran. [`CallbackModule::watched_runs`] counts them (also in the panel's badge).

mod env;
mod error;
mod firing;
mod model;
mod module;
mod panel;
mod plan;
mod queue;
mod report;
mod run_panel;
mod script;
mod tools;
mod trigger;
mod upsert;
mod validate;

pub use error::CallbackError;
pub use model::{
    CONFIG_KEY, CallbackDef, CallbackId, CallbackSection, InvalidCallbackId, MAX_TIMEOUT_SECS,
    MIN_TIMEOUT_SECS,
};
pub use module::{CallbackModule, tool_defs};
pub use panel::{CallbacksPanel, EditorView, PANEL_ID};
pub use plan::{PlannedRun, plan};
pub use queue::{Admission, QueuedRun, RunQueue};
pub use report::{NOTE_TAIL_LINES, RunOutcome, RunReport};
pub use run_panel::RunPanel;
pub use script::{SCRIPT_HEADER, SHEBANG, script_path, with_header};
pub use tools::{CLOSE_EDITOR, OPEN_EDITOR, TOGGLE, UPSERT};
pub use trigger::{Matcher, Matches, PatternError, validate_patterns};
pub use validate::{Loaded, config_problems, load, resolve_cwd, validate_def};
