//! The rules every callback definition obeys, wherever it comes from.
//!
//! `Callback_upsert` checks a definition with [`validate_def`] before it writes it, and
//! [`load`] checks every definition read from `config.json` with the same function, so a
//! hand-edited or committed definition can never do what the tool would refuse: a name that
//! leaves `scripts/` (`../../../victim`), an invalid glob, a timeout of `0` or `u64::MAX`,
//! or a `cwd` outside the project.
//!
//! A definition that breaks a rule disables only itself; the others keep firing. A file that
//! cannot be read at all (truncated JSON, a section of the wrong shape) disables every
//! callback. Either way [`Loaded::problems`] says which file and what is wrong, so each
//! front-end can tell the person (hook `systemMessage`, MCP tool results, the TUI).

use std::path::{Component, Path, PathBuf};

use cp_base::{Project, is_valid_name};

use crate::error::CallbackError;
use crate::model::{CONFIG_KEY, CallbackDef, CallbackSection, MAX_TIMEOUT_SECS, MIN_TIMEOUT_SECS};
use crate::trigger::validate_patterns;

/// Checks a name: `[A-Za-z0-9_-]{1,64}`, so the script path stays inside `scripts/`.
pub fn check_name(name: &str) -> Result<(), CallbackError> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(CallbackError::InvalidName(name.to_owned()))
    }
}

/// Checks a timeout against the allowed range.
pub fn check_timeout(timeout: Option<u64>) -> Result<(), CallbackError> {
    match timeout {
        Some(t) if !(MIN_TIMEOUT_SECS..=MAX_TIMEOUT_SECS).contains(&t) => {
            Err(CallbackError::TimeoutRange(t))
        }
        _ => Ok(()),
    }
}

/// Normalizes a `cwd` lexically: relative, no `..`, not absolute. `Ok(None)` means the root.
pub fn normalize_cwd(cwd: &str) -> Result<Option<String>, CallbackError> {
    let trimmed = cwd.trim().trim_end_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return Ok(None);
    }
    let bad = |reason: &str| CallbackError::InvalidCwd {
        cwd: cwd.to_owned(),
        reason: reason.to_owned(),
    };
    let mut parts = Vec::new();
    for comp in Path::new(trimmed).components() {
        match comp {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err(bad("'..' would leave the project")),
            Component::RootDir | Component::Prefix(_) => return Err(bad("it is absolute")),
        }
    }
    Ok(Some(parts.join("/")))
}

/// The directory a run starts in: `cwd` resolved (symlinks followed) and confined beneath the
/// project root. A symlink inside the project that points elsewhere (`/tmp`) is refused.
pub fn resolve_cwd(root: &Path, cwd: Option<&str>) -> Result<PathBuf, CallbackError> {
    let bad = |reason: String| CallbackError::InvalidCwd {
        cwd: cwd.unwrap_or(".").to_owned(),
        reason,
    };
    let canonical_root = root.canonicalize().map_err(|e| {
        bad(format!(
            "the project root {} cannot be resolved: {e}",
            root.display()
        ))
    })?;
    let rel = match cwd {
        Some(c) => normalize_cwd(c)?,
        None => None,
    };
    let Some(rel) = rel else {
        return Ok(canonical_root);
    };
    let resolved = canonical_root
        .join(&rel)
        .canonicalize()
        .map_err(|e| bad(format!("no such directory under the project root ({e})")))?;
    if !resolved.starts_with(&canonical_root) {
        return Err(bad(format!(
            "it resolves to {}, outside the project root",
            resolved.display()
        )));
    }
    if !resolved.is_dir() {
        return Err(bad("it is not a directory".to_owned()));
    }
    Ok(resolved)
}

/// Checks one definition against the rules of `Callback_upsert`: name, patterns, timeout
/// range, a timeout when blocking, and a lexically confined `cwd`. Whether the `cwd` exists
/// is checked when the definition is written and again when it runs ([`resolve_cwd`]).
pub fn validate_def(def: &CallbackDef) -> Result<(), CallbackError> {
    check_name(&def.name)?;
    validate_patterns(&def.pattern)?;
    check_timeout(def.timeout)?;
    if def.blocking && def.timeout.is_none() {
        return Err(CallbackError::BlockingNeedsTimeout);
    }
    if let Some(cwd) = &def.cwd {
        normalize_cwd(cwd)?;
    }
    Ok(())
}

/// The callbacks section as read from disk, keeping only the definitions that pass
/// [`validate_def`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    /// The valid definitions (with the counters and activations as stored).
    pub section: CallbackSection,
    /// One line per problem, naming the file and what is wrong. Empty when all is well.
    pub problems: Vec<String>,
    /// Whether the file could not be read at all (then `section` is empty).
    pub unreadable: bool,
}

/// Reads and validates the callbacks section of `project`'s `config.json`.
pub fn load(project: &Project) -> Loaded {
    match project.config().section::<CallbackSection>(CONFIG_KEY) {
        Ok(raw) => validated(project, raw),
        Err(e) => Loaded {
            section: CallbackSection::default(),
            problems: vec![format!(
                "{}: no callback runs until this is fixed: {e}",
                config_name(project)
            )],
            unreadable: true,
        },
    }
}

/// Splits a section read from disk into its valid definitions and the problems of the rest.
pub fn validated(project: &Project, mut raw: CallbackSection) -> Loaded {
    let mut problems = Vec::new();
    raw.definitions.retain(|def| match validate_def(def) {
        Ok(()) => true,
        Err(e) => {
            problems.push(format!(
                "{}: callback {} `{}` is disabled (the others still run): {e}",
                config_name(project),
                def.id,
                def.name.escape_debug()
            ));
            false
        }
    });
    Loaded {
        section: raw,
        problems,
        unreadable: false,
    }
}

/// The problems of the callbacks config, one line each; empty when all is well.
pub fn config_problems(project: &Project) -> Vec<String> {
    load(project).problems
}

fn config_name(project: &Project) -> String {
    project.config().path().display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CallbackId;

    fn def(name: &str) -> CallbackDef {
        CallbackDef {
            id: CallbackId(1),
            name: name.to_owned(),
            description: String::new(),
            pattern: vec!["*.rs".into()],
            blocking: true,
            timeout: Some(60),
            success_message: None,
            cwd: None,
            one_at_a_time: false,
            once_per_batch: true,
        }
    }

    #[test]
    fn the_tool_rules_apply_to_loaded_definitions() {
        assert!(validate_def(&def("cargo-check")).is_ok());
        assert!(matches!(
            validate_def(&def("../../../victim")),
            Err(CallbackError::InvalidName(_))
        ));
        for t in [0, 3601, i64::MAX.unsigned_abs(), u64::MAX] {
            let d = CallbackDef {
                timeout: Some(t),
                ..def("x")
            };
            assert!(
                matches!(validate_def(&d), Err(CallbackError::TimeoutRange(v)) if v == t),
                "{t}"
            );
        }
        let glob = CallbackDef {
            pattern: vec!["src/[".into()],
            ..def("x")
        };
        assert!(matches!(
            validate_def(&glob),
            Err(CallbackError::Pattern(_))
        ));
        for cwd in ["../../..", "/tmp", "a/../../b"] {
            let d = CallbackDef {
                cwd: Some(cwd.into()),
                ..def("x")
            };
            assert!(
                matches!(validate_def(&d), Err(CallbackError::InvalidCwd { .. })),
                "{cwd}"
            );
        }
    }

    #[test]
    fn a_cwd_symlink_out_of_the_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("inner")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        let canonical = root.path().canonicalize().unwrap();
        assert_eq!(
            resolve_cwd(root.path(), Some("inner")).unwrap(),
            canonical.join("inner")
        );
        assert_eq!(resolve_cwd(root.path(), None).unwrap(), canonical);
        let err = resolve_cwd(root.path(), Some("out"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside the project root"), "{err}");
    }
}
