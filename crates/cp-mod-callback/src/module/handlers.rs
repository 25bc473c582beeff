//! The `Callback_*` tools' handlers and their table: create, update and delete a callback,
//! switch it on or off for this worker, and open or close its script's editor.

use std::fmt::Write as _;

use cp_base::{Args, Tool, ToolDef, ToolTable};

use super::CallbackModule;
use crate::error::CallbackError;
use crate::model::{CONFIG_KEY, CallbackSection};
use crate::tools::{
    CLOSE_EDITOR, CLOSE_EDITOR_DOC, OPEN_EDITOR, OPEN_EDITOR_DOC, TOGGLE, TOGGLE_DOC, UPSERT,
    UPSERT_DOC, close_editor_schema, open_editor_schema, toggle_schema, upsert_schema,
};
use crate::upsert::{self, Fields, resolve_id};

impl CallbackModule {
    pub(super) fn upsert(&mut self, args: &Args<'_>) -> Result<String, CallbackError> {
        let fields = match Fields::read(args) {
            Ok(f) => f,
            Err(result) => return Ok(result.text),
        };
        let action = args.opt_str("action").ok().flatten().unwrap_or_default();
        match action {
            "create" => {
                let def = upsert::create(&self.project, &self.worker, fields)?;
                let mut text = format!(
                    "Created {} '{}': fires after your edits to {}. It is active for you (worker {}) and inactive for other workers until they toggle it.\nScript: .context-pilot/scripts/{}.sh",
                    def.id,
                    def.name,
                    def.pattern.join(", "),
                    self.worker,
                    def.name
                );
                if def.blocking {
                    let _ = write!(
                        text,
                        "\nBlocking: your edit results wait for it (up to {}s).",
                        def.timeout.unwrap_or_default()
                    );
                }
                Ok(text)
            }
            "update" => {
                let raw = fields.id.clone().ok_or(CallbackError::Missing {
                    param: "id",
                    action: "update",
                    example: r#"{"action": "update", "id": "CB1", "timeout": 120}"#,
                })?;
                let id = resolve_id(self.section_now(), &raw)?;
                let diff = fields.old_string.is_some() || fields.new_string.is_some();
                if diff && self.editor != Some(id) {
                    self.editor = Some(id);
                    self.refresh();
                    return Err(CallbackError::EditorClosed {
                        id: id.to_string(),
                        editor: self.editor_text(),
                    });
                }
                let updated = upsert::update(&self.project, id, &fields)?;
                let mut text = format!(
                    "Updated {} '{}': changed {}.",
                    updated.def.id,
                    updated.def.name,
                    if updated.changed.is_empty() {
                        "nothing (same values)".to_owned()
                    } else {
                        updated.changed.join(", ")
                    }
                );
                if self.editor == Some(id) && updated.changed.contains(&"script") {
                    self.refresh();
                    text.push('\n');
                    text.push_str(&self.editor_text());
                }
                Ok(text)
            }
            "delete" => {
                let raw = fields.id.clone().ok_or(CallbackError::Missing {
                    param: "id",
                    action: "delete",
                    example: r#"{"action": "delete", "id": "CB1"}"#,
                })?;
                let id = resolve_id(self.section_now(), &raw)?;
                let def = upsert::delete(&self.project, id)?;
                if self.editor == Some(id) {
                    self.editor = None;
                }
                Ok(format!(
                    "Deleted {} '{}': its definition, its script .context-pilot/scripts/{}.sh and its activation for every worker. The id {} will not be reused.",
                    def.id, def.name, def.name, def.id
                ))
            }
            other => Ok(format!(
                "unknown action '{other}'; expected create, update or delete"
            )),
        }
    }

    pub(super) fn toggle(&mut self, args: &Args<'_>) -> Result<String, CallbackError> {
        let raw = args.opt_str("id").ok().flatten().unwrap_or_default().trim();
        // Without `active`, the switch flips, which is what a person typing
        // `Callback_toggle id=CB1` in the palette means.
        let wanted = args.opt_bool("active").ok().flatten();
        let worker = self.worker.as_str().to_owned();
        if raw.eq_ignore_ascii_case("all") {
            let mut on = wanted.unwrap_or(true);
            let section = self.project.config().update_section(
                CONFIG_KEY,
                |s: &mut CallbackSection| {
                    on = wanted.unwrap_or_else(|| s.is_paused(&worker));
                    if on {
                        s.paused.remove(&worker);
                    } else {
                        s.paused.insert(worker.clone());
                    }
                    Ok::<_, CallbackError>(s.clone())
                },
            )??;
            let active: Vec<String> = section
                .definitions
                .iter()
                .filter(|d| section.is_active(&worker, d.id))
                .map(|d| format!("{} {}", d.id, d.name))
                .collect();
            let list = if active.is_empty() {
                "none".to_owned()
            } else {
                active.join(", ")
            };
            return Ok(if on {
                format!(
                    "Resumed callbacks for you (worker {worker}). Active: {list}. Other workers are unaffected."
                )
            } else {
                format!(
                    "Paused every callback for you (worker {worker}); none fire until you resume with {{\"id\": \"all\", \"active\": true}}, which restores: {list}. Other workers are unaffected."
                )
            });
        }
        let id = resolve_id(self.section_now(), raw)?;
        let (name, paused, on) =
            self.project
                .config()
                .update_section(CONFIG_KEY, |s: &mut CallbackSection| {
                    let name = s
                        .get(id)
                        .map(|d| d.name.clone())
                        .ok_or_else(|| upsert::unknown(s, id))?;
                    let on = wanted.unwrap_or_else(|| !s.is_active(&worker, id));
                    s.set_active(&worker, id, on);
                    Ok::<_, CallbackError>((name, s.is_paused(&worker), on))
                })??;
        let mut text = format!(
            "{id} '{name}' is now {} for you (worker {worker}); other workers are unaffected.",
            if on { "active" } else { "inactive" }
        );
        if paused && on {
            text.push_str(
                " Note: all your callbacks are paused; resume with {\"id\": \"all\", \"active\": true}.",
            );
        }
        Ok(text)
    }

    pub(super) fn open_editor(&mut self, args: &Args<'_>) -> Result<String, CallbackError> {
        let raw = args.opt_str("id").ok().flatten().unwrap_or_default();
        let id = resolve_id(self.section_now(), raw)?;
        let replaced = self.editor.filter(|open| *open != id);
        self.editor = Some(id);
        self.refresh();
        let mut text = String::new();
        if let Some(old) = replaced {
            let _ = write!(text, "Closed the editor on {old}. ");
        }
        text.push_str(&self.editor_text());
        Ok(text)
    }

    pub(super) fn close_editor(&mut self) -> String {
        match self.editor.take() {
            Some(id) => {
                self.refresh();
                format!("Closed the editor on {id}.")
            }
            None => "No callback editor was open.".to_owned(),
        }
    }
}

/// How a `Callback_*` tool runs: on the module, with the call's arguments; the text of its
/// result, or why it failed (the dispatch names the tool).
type Handler = fn(&mut CallbackModule, &Args<'_>) -> Result<String, CallbackError>;

/// The `Callback_*` tools: what the model sees (from `tools.rs`), and the function that runs
/// each.
pub(super) static TOOLS: ToolTable<Handler> = ToolTable::new(&[
    Tool {
        name: UPSERT,
        description: UPSERT_DOC,
        schema: upsert_schema,
        // A change made through this tool keeps the project trusted (if it was).
        handler: |module, args| {
            let project = module.project.clone();
            project.keep_trust(|| module.upsert(args))
        },
    },
    Tool {
        name: TOGGLE,
        description: TOGGLE_DOC,
        schema: toggle_schema,
        // Activation is not part of what is trusted (see `cp_base::Grant`): a toggle keeps the
        // trust as it is, with no need to re-record it.
        handler: CallbackModule::toggle,
    },
    Tool {
        name: OPEN_EDITOR,
        description: OPEN_EDITOR_DOC,
        schema: open_editor_schema,
        handler: CallbackModule::open_editor,
    },
    Tool {
        name: CLOSE_EDITOR,
        description: CLOSE_EDITOR_DOC,
        schema: close_editor_schema,
        handler: |module, _| Ok(module.close_editor()),
    },
]);

/// Every tool of the module.
pub fn tool_defs() -> Vec<ToolDef> {
    TOOLS.defs()
}
