//! What can go wrong in the Callback_* tools, worded for the model that has to fix its call.

use cp_base::StoreError;

use crate::model::{InvalidCallbackId, MAX_TIMEOUT_SECS, MIN_TIMEOUT_SECS};
use crate::trigger::PatternError;

/// A rejected Callback_* call. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    #[error("'{param}' is required for action={action}; example: {example}")]
    Missing {
        param: &'static str,
        action: &'static str,
        example: &'static str,
    },
    #[error("'{param}' does not apply to action={action}; remove it")]
    NotApplicable {
        param: &'static str,
        action: &'static str,
    },
    #[error(
        "'name' `{0}` is invalid: use 1-64 letters, digits, '_' or '-' (it becomes the script's file name); example: `cargo-check`"
    )]
    InvalidName(String),
    #[error("'name' `{name}` is already used by {id}; pick another name or update {id}")]
    DuplicateName { name: String, id: String },
    #[error("{0}")]
    Pattern(#[from] PatternError),
    #[error(
        "'blocking' callbacks need a 'timeout' in seconds ({MIN_TIMEOUT_SECS}-{MAX_TIMEOUT_SECS}); example: {{\"blocking\": true, \"timeout\": 300}}"
    )]
    BlockingNeedsTimeout,
    #[error("'timeout' is {0} s, expected {MIN_TIMEOUT_SECS} to {MAX_TIMEOUT_SECS}; example: 300")]
    TimeoutRange(u64),
    #[error(
        "'cwd' `{cwd}` is invalid: {reason}; give a directory relative to the project root, example: `crates/app` (empty = the root)"
    )]
    InvalidCwd { cwd: String, reason: String },
    #[error("'id' {0}")]
    BadId(InvalidCallbackId),
    #[error("no callback {id}; {known}")]
    UnknownId { id: String, known: String },
    #[error("'old_string' and 'new_string' go together; give both, or the full 'script_content'")]
    DiffNeedsBoth,
    #[error("give either 'script_content' or 'old_string'/'new_string', not both")]
    ScriptAndDiff,
    #[error(
        "not applied: 'old_string'/'new_string' edit the script shown in the editor, and the editor was not open on {id}. It is open now; check 'old_string' against the script below and call again.\n{editor}"
    )]
    EditorClosed { id: String, editor: String },
    #[error(
        "'old_string' was not found in the script of {id}; copy it exactly from the editor (line numbers and the ` | ` separator are not part of the script)"
    )]
    OldStringNotFound { id: String },
    #[error(
        "'old_string' occurs {count} times in the script of {id}; include more surrounding lines so it is unique"
    )]
    OldStringNotUnique { id: String, count: usize },
    #[error("the script {path} is missing; give 'script_content' to recreate it")]
    ScriptMissing { path: String },
    #[error(
        "no callback id is left: 'next_id' or an id in the callbacks section of .context-pilot/config.json is at the largest possible number; lower it by hand (ids only need to be unique)"
    )]
    IdsExhausted,
    #[error(
        "{path} already exists and no callback owns it; it was left as it is. Pick another 'name', or create without 'script_content' to adopt that script"
    )]
    ScriptNotOurs { path: String },
    #[error(
        "{id} has the invalid name `{name}` in .context-pilot/config.json (names are 1-64 letters, digits, '_' or '-'), so its script is not touched; delete {id} (this removes only the definition) and create it again"
    )]
    StoredNameInvalid { id: String, name: String },
    #[error("nothing to change: give at least one field besides 'id'")]
    NothingToUpdate,
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// Lists known callbacks for an "unknown id" message.
pub fn known_list<'a>(defs: impl Iterator<Item = (String, &'a str)>) -> String {
    let items: Vec<String> = defs.map(|(id, name)| format!("{id} {name}")).collect();
    if items.is_empty() {
        "no callbacks exist yet; create one with Callback_upsert action=create".to_owned()
    } else {
        format!("existing: {}", items.join(", "))
    }
}
