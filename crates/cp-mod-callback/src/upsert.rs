//! `Callback_upsert`: create, update and delete definitions and their scripts.
//!
//! Every change happens inside one locked read-modify-write of `config.json`, and the script
//! is written inside that same critical section, so two processes creating callbacks at once
//! never share an id or a script name. If anything fails, the section is not written.

use std::path::Path;

use cp_base::{Args, Project, WorkerId};

use crate::error::{CallbackError, known_list};
use crate::model::{CONFIG_KEY, CallbackDef, CallbackId, CallbackSection};
use crate::script::{read_script, remove_script, script_path, with_header, write_script};
use crate::trigger::validate_patterns;
use crate::validate::{check_name, check_timeout, normalize_cwd, resolve_cwd, validate_def};

const CREATE_EXAMPLE: &str = r#"{"action": "create", "name": "cargo-check", "pattern": "*.rs", "script_content": "cargo check 2>&1", "blocking": true, "timeout": 300}"#;

/// Fields every action may carry, read once from the arguments.
#[derive(Debug, Default)]
pub struct Fields {
    pub id: Option<String>,
    pub name: Option<String>,
    pub description: Option<String>,
    pub pattern: Option<Vec<String>>,
    pub script_content: Option<String>,
    pub old_string: Option<String>,
    pub new_string: Option<String>,
    pub blocking: Option<bool>,
    pub timeout: Option<u64>,
    pub success_message: Option<String>,
    pub cwd: Option<String>,
    pub one_at_a_time: Option<bool>,
    pub once_per_batch: Option<bool>,
}

impl Fields {
    pub fn read(args: &Args<'_>) -> Result<Self, cp_base::ToolResult> {
        let s = |k| args.opt_str(k).map(|v| v.map(str::to_owned));
        Ok(Self {
            id: s("id")?,
            name: s("name")?,
            description: s("description")?,
            pattern: args.opt_str_list("pattern")?,
            script_content: s("script_content")?,
            old_string: s("old_string")?,
            new_string: s("new_string")?,
            blocking: args.opt_bool("blocking")?,
            timeout: args.opt_u64("timeout")?,
            success_message: s("success_message")?,
            cwd: s("cwd")?,
            one_at_a_time: args.opt_bool("one_at_a_time")?,
            once_per_batch: args.opt_bool("once_per_batch")?,
        })
    }

    fn has_update(&self) -> bool {
        self.name.is_some()
            || self.description.is_some()
            || self.pattern.is_some()
            || self.script_content.is_some()
            || self.old_string.is_some()
            || self.new_string.is_some()
            || self.blocking.is_some()
            || self.timeout.is_some()
            || self.success_message.is_some()
            || self.cwd.is_some()
            || self.one_at_a_time.is_some()
            || self.once_per_batch.is_some()
    }
}

/// Parses an id argument and finds it in the section.
pub fn resolve_id(section: &CallbackSection, raw: &str) -> Result<CallbackId, CallbackError> {
    let id: CallbackId = raw.trim().parse().map_err(CallbackError::BadId)?;
    if section.get(id).is_some() {
        Ok(id)
    } else {
        Err(unknown(section, id))
    }
}

pub fn unknown(section: &CallbackSection, id: CallbackId) -> CallbackError {
    CallbackError::UnknownId {
        id: id.to_string(),
        known: known_list(
            section
                .definitions
                .iter()
                .map(|d| (d.id.to_string(), d.name.as_str())),
        ),
    }
}

/// Normalizes and checks a `cwd`: relative, an existing directory that resolves (symlinks
/// followed) beneath the project root. Empty or `.` means the root (`None`).
pub fn check_cwd(project: &Project, cwd: &str) -> Result<Option<String>, CallbackError> {
    let rel = normalize_cwd(cwd)?;
    resolve_cwd(project.root(), rel.as_deref())?;
    Ok(rel)
}

/// Refuses to write a script over a file no definition owns (a user's own `scripts/x.sh`).
fn check_unowned(section: &CallbackSection, name: &str, path: &Path) -> Result<(), CallbackError> {
    if section.by_name(name).is_none() && path.symlink_metadata().is_ok() {
        return Err(CallbackError::ScriptNotOurs {
            path: path.display().to_string(),
        });
    }
    Ok(())
}

/// Refuses to touch the script of a stored definition whose name would leave `scripts/`.
fn check_stored(def: &CallbackDef) -> Result<(), CallbackError> {
    check_name(&def.name).map_err(|_| CallbackError::StoredNameInvalid {
        id: def.id.to_string(),
        name: def.name.escape_debug().to_string(),
    })
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

fn missing(param: &'static str) -> CallbackError {
    CallbackError::Missing {
        param,
        action: "create",
        example: CREATE_EXAMPLE,
    }
}

/// Creates a callback, active for `worker` only. Returns the new definition.
pub fn create(
    project: &Project,
    worker: &WorkerId,
    f: Fields,
) -> Result<CallbackDef, CallbackError> {
    for (given, param) in [
        (f.id.is_some(), "id"),
        (f.old_string.is_some(), "old_string"),
        (f.new_string.is_some(), "new_string"),
    ] {
        if given {
            return Err(CallbackError::NotApplicable {
                param,
                action: "create",
            });
        }
    }
    let name = f.name.ok_or_else(|| missing("name"))?;
    check_name(&name)?;
    let pattern = f.pattern.ok_or_else(|| missing("pattern"))?;
    validate_patterns(&pattern)?;
    let blocking = f.blocking.unwrap_or(false);
    check_timeout(f.timeout)?;
    if blocking && f.timeout.is_none() {
        return Err(CallbackError::BlockingNeedsTimeout);
    }
    let cwd = match &f.cwd {
        Some(c) => check_cwd(project, c)?,
        None => None,
    };
    let path = script_path(project, &name);
    let given_script = f.script_content.is_some();
    let script = match f.script_content {
        Some(body) => with_header(&body),
        None => match read_script(&path)? {
            Some(existing) => existing,
            None => return Err(missing("script_content")),
        },
    };
    project.ensure_layout()?;
    let def = project
        .config()
        .update_section(CONFIG_KEY, |section: &mut CallbackSection| {
            if let Some(other) = section.by_name(&name) {
                return Err(CallbackError::DuplicateName {
                    name: name.clone(),
                    id: other.id.to_string(),
                });
            }
            if given_script {
                check_unowned(section, &name, &path)?;
            }
            let id = section.allocate_id().ok_or(CallbackError::IdsExhausted)?;
            let def = CallbackDef {
                id,
                name: name.clone(),
                description: f.description.clone().unwrap_or_default(),
                pattern: pattern.clone(),
                blocking,
                timeout: f.timeout,
                success_message: non_empty(f.success_message.clone()),
                cwd: cwd.clone(),
                one_at_a_time: f.one_at_a_time.unwrap_or(false),
                once_per_batch: f.once_per_batch.unwrap_or(true),
            };
            validate_def(&def)?;
            write_script(&path, &script)?;
            section.set_active(worker.as_str(), def.id, true);
            section.definitions.push(def.clone());
            Ok(def)
        })??;
    Ok(def)
}

/// What an update changed, for the tool's reply.
#[derive(Debug)]
pub struct Updated {
    pub def: CallbackDef,
    pub changed: Vec<&'static str>,
}

/// Updates `id`: any fields, the script (whole or by an exact replacement) and a rename,
/// which moves the script and keeps the id. The caller checks that the editor is open before
/// a diff edit.
pub fn update(project: &Project, id: CallbackId, f: &Fields) -> Result<Updated, CallbackError> {
    if !f.has_update() {
        return Err(CallbackError::NothingToUpdate);
    }
    if f.script_content.is_some() && (f.old_string.is_some() || f.new_string.is_some()) {
        return Err(CallbackError::ScriptAndDiff);
    }
    if f.old_string.is_some() != f.new_string.is_some() {
        return Err(CallbackError::DiffNeedsBoth);
    }
    if let Some(name) = &f.name {
        check_name(name)?;
    }
    if let Some(p) = &f.pattern {
        validate_patterns(p)?;
    }
    check_timeout(f.timeout)?;
    let cwd = match &f.cwd {
        Some(c) => Some(check_cwd(project, c)?),
        None => None,
    };
    let out = project
        .config()
        .update_section(CONFIG_KEY, |section: &mut CallbackSection| {
            let Some(def) = section.get(id).cloned() else {
                return Err(unknown(section, id));
            };
            if let Some(name) = &f.name
                && let Some(other) = section.by_name(name).filter(|d| d.id != id)
            {
                return Err(CallbackError::DuplicateName {
                    name: name.clone(),
                    id: other.id.to_string(),
                });
            }
            check_stored(&def)?;
            let (mut new, mut changed) = apply_fields(&def, f)?;
            if let Some(c) = &cwd {
                new.cwd.clone_from(c);
                changed.push("cwd");
            }
            validate_def(&new)?;
            let old_path = script_path(project, &def.name);
            let new_path = script_path(project, &new.name);
            if new_path != old_path {
                check_unowned(section, &new.name, &new_path)?;
            }
            if let Some(text) = new_script(&old_path, id, f)? {
                changed.push("script");
                write_script(&new_path, &text)?;
            } else if new_path != old_path {
                let text = read_script(&old_path)?.ok_or_else(|| CallbackError::ScriptMissing {
                    path: old_path.display().to_string(),
                })?;
                write_script(&new_path, &text)?;
            }
            if new_path != old_path {
                remove_script(&old_path)?;
            }
            if let Some(slot) = section.get_mut(id) {
                *slot = new.clone();
            }
            Ok(Updated { def: new, changed })
        })??;
    Ok(out)
}

/// The definition with the given fields applied, and the names of the fields that changed.
fn apply_fields(
    def: &CallbackDef,
    f: &Fields,
) -> Result<(CallbackDef, Vec<&'static str>), CallbackError> {
    let mut new = def.clone();
    let mut changed = Vec::new();
    if let Some(name) = &f.name
        && *name != def.name
    {
        new.name.clone_from(name);
        changed.push("name");
    }
    if let Some(d) = &f.description {
        new.description.clone_from(d);
        changed.push("description");
    }
    if let Some(p) = &f.pattern {
        new.pattern.clone_from(p);
        changed.push("pattern");
    }
    if let Some(b) = f.blocking {
        new.blocking = b;
        changed.push("blocking");
    }
    if let Some(t) = f.timeout {
        new.timeout = Some(t);
        changed.push("timeout");
    }
    if new.blocking && new.timeout.is_none() {
        return Err(CallbackError::BlockingNeedsTimeout);
    }
    if let Some(m) = &f.success_message {
        new.success_message = non_empty(Some(m.clone()));
        changed.push("success_message");
    }
    if let Some(v) = f.one_at_a_time {
        new.one_at_a_time = v;
        changed.push("one_at_a_time");
    }
    if let Some(v) = f.once_per_batch {
        new.once_per_batch = v;
        changed.push("once_per_batch");
    }
    Ok((new, changed))
}

/// The new script text, if the update changes the script.
fn new_script(path: &Path, id: CallbackId, f: &Fields) -> Result<Option<String>, CallbackError> {
    if let Some(body) = &f.script_content {
        return Ok(Some(with_header(body)));
    }
    let (Some(old), Some(new)) = (&f.old_string, &f.new_string) else {
        return Ok(None);
    };
    let current = read_script(path)?.ok_or_else(|| CallbackError::ScriptMissing {
        path: path.display().to_string(),
    })?;
    match current.matches(old.as_str()).count() {
        0 => Err(CallbackError::OldStringNotFound { id: id.to_string() }),
        1 => Ok(Some(current.replacen(old.as_str(), new, 1))),
        count => Err(CallbackError::OldStringNotUnique {
            id: id.to_string(),
            count,
        }),
    }
}

/// Deletes `id`: definition, script and every worker's activation.
pub fn delete(project: &Project, id: CallbackId) -> Result<CallbackDef, CallbackError> {
    let def = project
        .config()
        .update_section(CONFIG_KEY, |section: &mut CallbackSection| {
            let def = section.remove(id).ok_or_else(|| unknown(section, id))?;
            // A stored name that would leave `scripts/` owns no file: remove the definition
            // only, never what its name points at.
            if check_name(&def.name).is_ok() {
                remove_script(&script_path(project, &def.name))?;
            }
            Ok::<_, CallbackError>(def)
        })??;
    Ok(def)
}
