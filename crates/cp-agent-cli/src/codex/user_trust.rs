//! Whether Codex CLI will use what `init codex` wrote: it reads a project's `.codex/` only
//! once the person trusts the project, and runs a project hook only once the person trusted
//! it in `/hooks`. Both are recorded in the person's own `$CODEX_HOME/config.toml` (else
//! `~/.codex/config.toml`), which Context Pilot reads and never writes:
//!
//! ```toml
//! [projects."/work/app"]
//! trust_level = "trusted"
//!
//! [hooks.state."/work/app/.codex/config.toml:…"]
//! trusted_hash = "…"
//! ```
//!
//! The keys of `hooks.state` are Codex's own; a hook counts as trusted here when its key
//! names this project's `.codex/config.toml` and holds a `trusted_hash` (whether that hash
//! still matches the hook's command is Codex's to say: it asks again when it does not).

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item};

use crate::agent::AgentTrust;

/// The user's Codex config file: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
fn user_config() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("CODEX_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".codex")))
        .map(|dir| dir.join("config.toml"))
}

/// Codex's project trust and hook trust for the project at `root`.
pub(super) fn checks(root: &Path) -> Vec<AgentTrust> {
    let Some(path) = user_config() else {
        return vec![AgentTrust {
            ok: false,
            what: "Codex CLI's config cannot be found: neither CODEX_HOME nor HOME is set".into(),
            fix: Some("set HOME (or CODEX_HOME) to where Codex keeps its config".into()),
        }];
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return vec![AgentTrust {
                ok: false,
                what: format!("Codex CLI's config {} cannot be read: {e}", path.display()),
                fix: Some(format!("make {} readable", path.display())),
            }];
        }
    };
    let doc = match text.parse::<DocumentMut>() {
        Ok(doc) => doc,
        Err(e) => {
            return vec![AgentTrust {
                ok: false,
                what: format!(
                    "Codex CLI's config {} is not valid TOML ({})",
                    path.display(),
                    e.message()
                ),
                fix: Some(format!("fix {}", path.display())),
            }];
        }
    };
    vec![project_trust(&doc, root, &path), hook_trust(&doc, root)]
}

fn project_trust(doc: &DocumentMut, root: &Path, config: &Path) -> AgentTrust {
    let key = root.display().to_string();
    let level = doc
        .get("projects")
        .and_then(|projects| projects.get(&key))
        .and_then(|project| project.get("trust_level"))
        .and_then(Item::as_str);
    if level == Some("trusted") {
        return AgentTrust {
            ok: true,
            what: format!("Codex CLI trusts {key} ({})", config.display()),
            fix: None,
        };
    }
    AgentTrust {
        ok: false,
        what: format!(
            "Codex CLI does not trust {key}, so it ignores the project's .codex/ folder{}",
            level.map_or_else(String::new, |l| format!(" (trust_level = {l:?})"))
        ),
        fix: Some(format!(
            "start `codex` in {key} and accept the trust prompt, or add `[projects.\"{key}\"] \
             trust_level = \"trusted\"` to {}",
            config.display()
        )),
    }
}

fn hook_trust(doc: &DocumentMut, root: &Path) -> AgentTrust {
    let settings = root
        .join(".codex")
        .join("config.toml")
        .display()
        .to_string();
    let trusted = doc
        .get("hooks")
        .and_then(|hooks| hooks.get("state"))
        .and_then(Item::as_table_like)
        .map_or(0, |state| {
            state
                .iter()
                .filter(|(key, entry)| {
                    key.contains(&settings) && entry.get("trusted_hash").is_some()
                })
                .count()
        });
    if trusted > 0 {
        return AgentTrust {
            ok: true,
            what: format!("Codex CLI has {trusted} trusted hook(s) of {settings}"),
            fix: None,
        };
    }
    AgentTrust {
        ok: false,
        what: format!("Codex CLI has not trusted the hooks of {settings}, so it skips them"),
        fix: Some(
            "in Codex type `/hooks`, review Context Pilot's PostToolUse and Stop hooks and \
             trust them"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_and_hook_trust_are_read_from_the_user_config() {
        let root = Path::new("/work/app");
        let none: DocumentMut = "".parse().unwrap();
        let config = Path::new("/home/me/.codex/config.toml");
        let untrusted = project_trust(&none, root, config);
        assert!(!untrusted.ok);
        assert!(
            untrusted
                .fix
                .unwrap()
                .contains("[projects.\"/work/app\"] trust_level = \"trusted\""),
        );
        assert!(!hook_trust(&none, root).ok);
        let both: DocumentMut = "[projects.\"/work/app\"]\ntrust_level = \"trusted\"\n\n\
             [hooks.state.\"/work/app/.codex/config.toml:stop:0:0\"]\ntrusted_hash = \"sha256:1\"\n\
             [hooks.state.\"/elsewhere/.codex/config.toml:stop:0:0\"]\ntrusted_hash = \"sha256:2\"\n"
            .parse()
            .unwrap();
        assert!(project_trust(&both, root, config).ok);
        let hooks = hook_trust(&both, root);
        assert!(hooks.ok, "{hooks:?}");
        assert!(hooks.what.contains("1 trusted hook(s)"), "{hooks:?}");
    }
}
