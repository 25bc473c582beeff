//! The Callback_* tools as data: names, descriptions written for the model, JSON Schemas.
//! Their table, with the handlers, is in `module/handlers.rs`.

use serde_json::{Value, json};

use crate::model::{MAX_TIMEOUT_SECS, MIN_TIMEOUT_SECS};

pub const UPSERT: &str = "Callback_upsert";
pub const TOGGLE: &str = "Callback_toggle";
pub const OPEN_EDITOR: &str = "Callback_open_editor";
pub const CLOSE_EDITOR: &str = "Callback_close_editor";

fn id_param(what: &str) -> Value {
    json!({
        "type": "string", "minLength": 1, "maxLength": 24,
        "description": what, "examples": ["CB1"]
    })
}

/// What `UPSERT`'s row tells the model.
pub(crate) const UPSERT_DOC: &str = "Create, update or delete a file-edit callback: a bash script that runs automatically \
after YOUR edits (File_edit/File_write/File_delete) to files matching its pattern, so you see \
at once what an edit broke. Definitions are shared by every worker; a new callback is active \
only for you until others toggle it.\n\
- action=create: needs name, pattern and script_content (script_content may be omitted if \
.context-pilot/scripts/{name}.sh already exists). The script is saved as \
.context-pilot/scripts/{name}.sh with a bash shebang and a header documenting the environment \
it gets: CP_CHANGED_FILES (matched files, one per line, relative to the root; names holding a \
newline are left out), CP_CHANGED_FILES0 (path of a file listing every matched file, \
NUL-separated), CP_PROJECT_ROOT, \
CP_CALLBACK_NAME, CP_RUN_ID. blocking=true makes each edit's result wait for the script and \
requires timeout (seconds). Defaults: blocking=false, once_per_batch=true (one run per batch \
with every matched file; false = one run per file), one_at_a_time=false, cwd=project root.\n\
- action=update: id plus the fields to change. Change the script with full script_content, or \
with old_string/new_string (old_string must occur exactly once; this needs \
Callback_open_editor on that id first). Renaming moves the script and keeps the id.\n\
- action=delete: id. Removes the definition, its script and every worker's activation.\n\
Patterns are gitignore-style: `*.rs` matches at any depth, `src/**/*.ts` is anchored at the \
root, `docs/` matches everything under docs, `!rule` excludes, the last matching rule wins.\n\
Example: {\"action\": \"create\", \"name\": \"cargo-check\", \"description\": \"cargo check \
after Rust edits\", \"pattern\": [\"*.rs\", \"!target/\"], \"script_content\": \"cargo check \
--quiet 2>&1\", \"blocking\": true, \"timeout\": 300, \"success_message\": \"cargo check \
passed\"}";

pub(crate) fn upsert_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": ["create", "update", "delete"],
                       "description": "What to do."},
            "id": id_param("Callback id for update/delete."),
            "name": {"type": "string", "minLength": 1, "maxLength": 64,
                     "description": "1-64 letters, digits, '_' or '-'; also the script's file name.",
                     "examples": ["cargo-check"]},
            "description": {"type": "string", "maxLength": 500,
                            "description": "What the callback checks or produces.",
                            "examples": ["cargo check after Rust edits"]},
            "pattern": {"type": ["string", "array"], "items": {"type": "string", "minLength": 1},
                        "minLength": 1, "minItems": 1, "maxItems": 64,
                        "description": "Gitignore-style rule or list of rules; `!rule` excludes.",
                        "examples": [["*.rs", "!target/"]]},
            "script_content": {"type": "string", "minLength": 1,
                               "description": "Bash script body (a shebang and header are prepended).",
                               "examples": ["cargo check --quiet 2>&1"]},
            "old_string": {"type": "string", "minLength": 1,
                           "description": "Exact script text to replace (must occur once; editor must be open)."},
            "new_string": {"type": "string",
                           "description": "Replacement for old_string (may be empty)."},
            "blocking": {"type": "boolean",
                         "description": "Edit results wait for this callback (needs timeout)."},
            "timeout": {"type": "integer", "minimum": MIN_TIMEOUT_SECS, "maximum": MAX_TIMEOUT_SECS,
                        "description": "Seconds before the run's process group is killed.",
                        "examples": [300]},
            "success_message": {"type": "string", "maxLength": 200,
                                "description": "Shown when the script exits 0; empty clears it.",
                                "examples": ["cargo check passed"]},
            "cwd": {"type": "string", "maxLength": 512,
                    "description": "Working directory relative to the project root; empty = root.",
                    "examples": ["crates/app"]},
            "one_at_a_time": {"type": "boolean",
                              "description": "Never run twice at once; triggers meanwhile are queued and merged."},
            "once_per_batch": {"type": "boolean",
                               "description": "One run per batch with all matched files (true) or one run per file (false)."}
        }
    })
}

/// What `TOGGLE`'s row tells the model.
pub(crate) const TOGGLE_DOC: &str = "Switch a callback on or off for you (this worker) only; the definition and other \
workers are unaffected. id \"all\" pauses (active=false) or resumes (active=true) every callback \
for you, e.g. during a big refactor; resuming restores the callbacks you had on. Without \
active, the switch flips: on becomes off and off on (all: paused becomes resumed). \
Example: {\"id\": \"CB2\", \"active\": false} or {\"id\": \"all\", \"active\": false}";

pub(crate) fn toggle_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id"],
        "properties": {
            "id": id_param("Callback id, or \"all\"."),
            "active": {"type": "boolean", "description": "true = on / resume, false = off / pause; omit to flip the current state."}
        }
    })
}

/// What `OPEN_EDITOR`'s row tells the model.
pub(crate) const OPEN_EDITOR_DOC: &str = "Open a callback in the editor below the Callbacks panel table: its settings and its \
script with line numbers. Needed before changing the script with Callback_upsert \
old_string/new_string. One callback is open at a time; opening another replaces it. \
Example: {\"id\": \"CB1\"}";

pub(crate) fn open_editor_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["id"],
        "properties": {"id": id_param("Callback id to open.")}
    })
}

/// What `CLOSE_EDITOR`'s row tells the model.
pub(crate) const CLOSE_EDITOR_DOC: &str = "Close the callback editor (keeps your context small once you are done editing). \
Example: {}";

pub(crate) fn close_editor_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "properties": {}})
}
