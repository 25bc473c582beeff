//! `context-pilot init codex --trust-in-codex`: with the person's explicit flag, records in
//! their own Codex config (`$CODEX_HOME/config.toml`, else `~/.codex/config.toml`) the two
//! trusts Codex needs before it uses what `init codex` wrote:
//!
//! ```toml
//! [projects."/work/app"]
//! trust_level = "trusted"
//!
//! [hooks.state."/work/app/.codex/config.toml:stop:0:0"]
//! trusted_hash = "sha256:…"
//! ```
//!
//! Only Context Pilot's own hooks are trusted, each with the key and hash Codex computes for
//! it ([`super::hook_trust`]); any other hook of the project stays for the person to review.
//! The file is edited with `toml_edit`, so comments, order and every other key stay as they
//! were. This module only computes the new text: the caller shows it (`--dry-run`) or writes
//! it atomically.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, value};

use crate::project_settings::toml_table;

use super::hook_trust::our_project_hooks;
use super::user_trust::user_config;
use crate::AgentError;

/// The person's Codex config before and after recording the trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexTrustEdit {
    /// `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
    pub path: PathBuf,
    /// Its text now, `None` when it does not exist yet.
    pub before: Option<String>,
    pub after: String,
}

/// The edit trusting the project at `root` and Context Pilot's hooks in `project_config`, the
/// text its `.codex/config.toml` will hold (what `init codex` writes), in the person's own
/// Codex config.
pub fn trust_in_codex(root: &Path, project_config: &str) -> Result<CodexTrustEdit, AgentError> {
    let path = user_config().ok_or_else(|| AgentError::CodexConfig {
        path: "~/.codex/config.toml".into(),
        message: "neither CODEX_HOME nor HOME is set to an absolute path; set one".into(),
    })?;
    // A config that links elsewhere (a dotfiles repository) is written where it lives.
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(AgentError::CodexConfig {
                path: path.display().to_string(),
                message: format!("cannot be read ({e}); make it readable"),
            });
        }
    };
    let after =
        trusted(root, project_config, before.as_deref().unwrap_or("")).map_err(|message| {
            AgentError::CodexConfig {
                path: path.display().to_string(),
                message,
            }
        })?;
    Ok(CodexTrustEdit {
        path,
        before,
        after,
    })
}

/// `config` (the person's Codex config) with the project at `root` and our hooks in
/// `project_config` trusted; what is wrong otherwise.
fn trusted(root: &Path, project_config: &str, config: &str) -> Result<String, String> {
    let mut doc = config
        .parse::<DocumentMut>()
        .map_err(|e| format!("is not valid TOML ({}); fix it", e.message().trim()))?;
    let source = root
        .join(".codex")
        .join("config.toml")
        .display()
        .to_string();
    let hooks = our_project_hooks(project_config, &source)
        .ok_or_else(|| format!("{source} is not valid TOML; fix it"))?;
    let project = root.display().to_string();
    let projects = subtable(doc.as_table_mut(), "projects", "projects")?;
    let trust = subtable(projects, &project, &format!("projects.\"{project}\""))?;
    // The person's own "no" is never turned into a yes.
    if let Some(level) = trust.get("trust_level").and_then(Item::as_str)
        && level != "trusted"
    {
        return Err(format!(
            "says trust_level = \"{level}\" for {project}; --trust-in-codex does not overrule \
             your own choice: change it there (or answer Codex's trust prompt in the project) \
             and run init again"
        ));
    }
    trust.insert("trust_level", value("trusted"));
    let hooks_table = subtable(doc.as_table_mut(), "hooks", "hooks")?;
    let state = subtable(hooks_table, "state", "hooks.state")?;
    for hook in hooks {
        let path = format!("hooks.state.\"{}\"", hook.key);
        subtable(state, &hook.key, &path)?.insert("trusted_hash", value(hook.hash));
    }
    Ok(doc.to_string())
}

/// The table `key` of `parent` ([`toml_table`]); what is wrong otherwise, with what to do.
fn subtable<'a>(parent: &'a mut Table, key: &str, path: &str) -> Result<&'a mut Table, String> {
    toml_table(parent, key, path).map_err(|e| format!("{e}; fix it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentCli as _;
    use crate::project_settings::{Apply, merge_toml};

    fn project_config() -> String {
        let file = super::super::Codex
            .project_settings("/opt/cp/context-pilot", None)
            .into_iter()
            .next()
            .unwrap();
        let Apply::Toml(apply) = file.apply else {
            panic!("Codex's settings are TOML")
        };
        merge_toml(apply.as_ref(), None).unwrap()
    }

    #[test]
    fn trust_is_added_and_everything_else_kept_and_a_second_run_changes_nothing() {
        let root = Path::new("/work/app");
        let project = project_config();
        let before = "# my codex settings\nmodel = \"gpt-5.5\" # the best\n\n\
                      [projects.\"/elsewhere\"]\ntrust_level = \"untrusted\"\n\n\
                      [hooks.state.\"/elsewhere/.codex/config.toml:stop:0:0\"]\n\
                      trusted_hash = \"sha256:2\"\n";
        let after = trusted(root, &project, before).unwrap();
        assert!(after.starts_with("# my codex settings\nmodel = \"gpt-5.5\" # the best\n"));
        assert!(after.contains("[projects.\"/elsewhere\"]\ntrust_level = \"untrusted\"\n"));
        assert!(after.contains("[projects.\"/work/app\"]\ntrust_level = \"trusted\"\n"));
        let doc: DocumentMut = after.parse().unwrap();
        let state = doc["hooks"]["state"].as_table().unwrap();
        let source = "/work/app/.codex/config.toml";
        let ours = our_project_hooks(&project, source).unwrap();
        assert_eq!(
            ours.len(),
            4,
            "PostToolUse, Stop, SubagentStop, SessionStart: {ours:?}"
        );
        for hook in &ours {
            assert_eq!(state[&hook.key]["trusted_hash"].as_str(), Some(&*hook.hash));
        }
        assert_eq!(
            state["/elsewhere/.codex/config.toml:stop:0:0"]["trusted_hash"].as_str(),
            Some("sha256:2")
        );
        assert_eq!(
            trusted(root, &project, &after).unwrap(),
            after,
            "idempotent"
        );
    }

    #[test]
    fn an_explicit_untrusted_is_never_turned_into_trusted() {
        let root = Path::new("/work/app");
        let project = project_config();
        let mine = "[projects.\"/work/app\"]\ntrust_level = \"untrusted\"\n";
        let err = trusted(root, &project, mine).unwrap_err();
        assert!(
            err.contains("trust_level = \"untrusted\" for /work/app"),
            "{err}"
        );
        assert!(err.contains("does not overrule"), "{err}");
        // An inline table of projects is read the same way, and one already trusted is kept.
        let inline = "projects = { \"/work/app\" = { trust_level = \"trusted\" } }\n";
        let after = trusted(root, &project, inline).unwrap();
        let doc: DocumentMut = after.parse().unwrap();
        assert_eq!(
            doc["projects"]["/work/app"]["trust_level"].as_str(),
            Some("trusted")
        );
    }

    #[test]
    fn a_changed_hook_gets_its_new_hash_and_a_broken_config_is_refused() {
        let root = Path::new("/work/app");
        let project = project_config();
        let stale = "[hooks.state.\"/work/app/.codex/config.toml:stop:0:0\"]\n\
                     trusted_hash = \"sha256:old\"\nenabled = true\n";
        let after = trusted(root, &project, stale).unwrap();
        assert!(!after.contains("sha256:old"), "{after}");
        assert!(after.contains("enabled = true"), "{after}");
        let err = trusted(root, &project, "projects = 1\n").unwrap_err();
        assert!(err.contains("'projects' is not a table; fix it"), "{err}");
        let err = trusted(root, &project, "[[[").unwrap_err();
        assert!(err.contains("is not valid TOML"), "{err}");
    }
}
