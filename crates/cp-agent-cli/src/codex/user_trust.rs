//! Whether Codex CLI will use what `init codex` wrote: it reads a project's `.codex/` only
//! once the person trusts the project, and runs a project hook only once the person trusted
//! it in `/hooks`. Both are recorded in the person's own `$CODEX_HOME/config.toml` (else
//! `~/.codex/config.toml`), which Context Pilot reads (and writes only when asked, with
//! `init codex --trust-in-codex`: [`super::trust_write`]):
//!
//! ```toml
//! [projects."/work/app"]
//! trust_level = "trusted"
//!
//! [hooks.state."/work/app/.codex/config.toml:…"]
//! trusted_hash = "…"
//! ```
//!
//! The keys of `hooks.state` and the hashes are Codex's own ([`super::hook_trust`] computes
//! both): a hook of ours counts as trusted only when the `trusted_hash` under its key equals
//! the hash of the hook as the project's `.codex/config.toml` holds it now; a hash that differs
//! means the hook changed since the person trusted it, and Codex skips it.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item};

use super::SPEC;
use super::hook_trust::{HookIdentity, command_hooks, our_project_hooks, project_config_sources};
use crate::agent::AgentTrust;

/// The user's Codex config file: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
pub(super) fn user_config() -> Option<PathBuf> {
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

/// Whether the person trusted exactly the hooks of ours in the project's
/// `.codex/config.toml` at `root`: each one's `[hooks.state."<key>"] trusted_hash` must equal
/// the hash of the hook as it is written now (Codex skips a hook whose hash changed).
fn hook_trust(doc: &DocumentMut, root: &Path) -> AgentTrust {
    let settings = root.join(".codex").join("config.toml");
    let shown = settings.display();
    let text = std::fs::read_to_string(&settings).unwrap_or_default();
    // Our hooks keyed under each name of the file (as given, as resolved): the same hooks.
    let keyed: Vec<Vec<HookIdentity>> = project_config_sources(root)
        .iter()
        .filter_map(|source| our_project_hooks(&text, source))
        .collect();
    let hooks = keyed.first().cloned().unwrap_or_default();
    if hooks.is_empty() {
        return AgentTrust {
            ok: false,
            what: format!("{shown} holds no Context Pilot hook for Codex CLI to trust"),
            fix: Some("run `context-pilot init codex`".into()),
        };
    }
    let state = doc
        .get("hooks")
        .and_then(|hooks| hooks.get("state"))
        .and_then(Item::as_table_like);
    // The hash the person trusted for hook `index` of ours, under any name of the file.
    let trusted = |index: usize| {
        keyed.iter().find_map(|hooks| {
            let key = &hooks.get(index)?.key;
            state?
                .get(key)?
                .get("trusted_hash")?
                .as_str()
                .map(str::to_owned)
        })
    };
    let mut changed = 0;
    let mut untrusted = 0;
    for (index, hook) in hooks.iter().enumerate() {
        match trusted(index) {
            Some(hash) if hash == hook.hash => {}
            Some(_) => changed += 1,
            None => untrusted += 1,
        }
    }
    let fix = Some(
        "in Codex type `/hooks`, review Context Pilot's hooks (`… hook codex-…`) and trust \
         them, or run `context-pilot init codex --trust-in-codex`"
            .to_owned(),
    );
    if changed > 0 {
        return AgentTrust {
            ok: false,
            what: format!(
                "{changed} of Context Pilot's {} hook(s) in {shown} changed since you trusted \
                 them in Codex CLI, so it skips them",
                hooks.len()
            ),
            fix,
        };
    }
    if untrusted > 0 {
        return AgentTrust {
            ok: false,
            what: format!(
                "Codex CLI has not trusted {untrusted} of Context Pilot's {} hook(s) in {shown}, \
                 so it skips them",
                hooks.len()
            ),
            fix,
        };
    }
    AgentTrust {
        ok: true,
        what: format!(
            "Codex CLI trusts Context Pilot's {} hook(s) in {shown}, as written",
            hooks.len()
        ),
        fix: None,
    }
}

/// How to trust the hooks of Context Pilot's Codex plugin, in one line.
pub const PLUGIN_TRUST_FIX: &str = "start `codex`, type `/hooks` and trust the context-pilot \
     plugin's hooks (`… hook --plugin codex-…`); docs/guide/agent-clis.md has a way without a \
     terminal";

/// Whether the person trusted the hooks of Context Pilot's Codex plugin `plugin_id`
/// (`context-pilot@<marketplace>`), whose hooks file `hooks_file` (relative to the plugin's
/// root, e.g. `hooks/codex.json`) holds `hooks` (`{"hooks": {"Stop": […], …}}`), in the user's
/// Codex config `config` (its text; the path is for the message).
///
/// Codex keys a plugin's hook `<plugin id>:<hooks file>:<event>:<group>:<handler>` and records
/// its trust as two hashes: `trusted_hash`, the hook's own (the same fingerprint as a project
/// hook's), and `trusted_content_hash`, its fingerprint of the plugin's files (measured with
/// Codex CLI 0.171.0: its app server's `hooks/list` reports the two joined by `/`; a record
/// without the second counts as trusted, one whose second differs as modified). The first is
/// checked exactly; the second is Codex's own undocumented fingerprint, not checked here
/// (after an update of the plugin, Codex's `/hooks` shows the hooks as modified).
pub fn plugin_hook_trust(
    config: &str,
    config_path: &Path,
    plugin_id: &str,
    hooks_file: &str,
    hooks: &serde_json::Value,
) -> AgentTrust {
    let source = format!("{plugin_id}:{hooks_file}");
    let ours = command_hooks(&source, &hooks["hooks"], |event, command| {
        SPEC.hook_events.iter().any(|spec| {
            spec.name == event && command.ends_with(&format!(" hook --plugin {}", spec.cli_name))
        })
    });
    if ours.is_empty() {
        return AgentTrust {
            ok: false,
            what: format!(
                "Codex CLI's plugin {plugin_id} holds no Context Pilot hook in {hooks_file}"
            ),
            fix: Some(format!(
                "reinstall it: `codex plugin remove {plugin_id}`, then `codex plugin add \
                 {plugin_id}`"
            )),
        };
    }
    let doc = config.parse::<DocumentMut>().ok();
    let state = doc
        .as_ref()
        .and_then(|doc| doc.get("hooks"))
        .and_then(|hooks| hooks.get("state"))
        .and_then(Item::as_table_like);
    let (mut changed, mut untrusted) = (0, 0);
    for hook in &ours {
        let recorded = state
            .and_then(|state| state.get(&hook.key))
            .and_then(|entry| entry.get("trusted_hash"))
            .and_then(Item::as_str);
        match recorded {
            Some(hash) if hash == hook.hash => {}
            Some(_) => changed += 1,
            None => untrusted += 1,
        }
    }
    let shown = config_path.display();
    let total = ours.len();
    let fix = Some(PLUGIN_TRUST_FIX.to_owned());
    if changed > 0 {
        return AgentTrust {
            ok: false,
            what: format!(
                "{changed} of the {total} hook(s) of Codex CLI's plugin {plugin_id} changed since \
                 you trusted them ({shown}), so Codex skips them"
            ),
            fix,
        };
    }
    if untrusted > 0 {
        return AgentTrust {
            ok: false,
            what: format!(
                "Codex CLI has not trusted {untrusted} of the {total} hook(s) of its plugin \
                 {plugin_id} ({shown}), so it skips them silently"
            ),
            fix,
        };
    }
    AgentTrust {
        ok: true,
        // Only the hooks' own hashes are known here: say so, rather than vouch for Codex's
        // fingerprint of the plugin's files, which changes with an update of the plugin.
        what: format!(
            "Codex CLI trusts the commands of the {total} hook(s) of its plugin {plugin_id} \
             ({shown}); after an update of the plugin, if Codex's `/hooks` shows them as \
             modified, trust them again there"
        ),
        fix: None,
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::agent::AgentCli as _;
    use crate::project_settings::{Apply, merge_toml};

    /// A project at a temporary root whose `.codex/config.toml` holds what `init codex`
    /// writes; its root (as the system resolves it) and that file's text.
    fn wired_project() -> (tempfile::TempDir, PathBuf, String) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut text = None;
        for file in super::super::Codex.project_settings("/opt/cp/context-pilot", None) {
            let Apply::Toml(apply) = file.apply else {
                panic!("Codex's settings are TOML")
            };
            text = Some(merge_toml(apply.as_ref(), None).unwrap());
        }
        let text = text.unwrap();
        std::fs::create_dir_all(root.join(".codex")).unwrap();
        std::fs::write(root.join(".codex/config.toml"), &text).unwrap();
        (dir, root, text)
    }

    /// The user's config trusting `root` and, for each hook of ours, `hash(its real hash)`.
    fn user_config_trusting(root: &Path, text: &str, hash: impl Fn(&str) -> String) -> DocumentMut {
        let source = root.join(".codex/config.toml").display().to_string();
        let mut config = format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            root.display()
        );
        for hook in our_project_hooks(text, &source).unwrap() {
            let _ = writeln!(
                config,
                "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"",
                hook.key,
                hash(&hook.hash)
            );
        }
        config.parse().unwrap()
    }

    #[test]
    fn project_trust_is_read_from_the_user_config() {
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
        let trusted: DocumentMut = "[projects.\"/work/app\"]\ntrust_level = \"trusted\"\n"
            .parse()
            .unwrap();
        assert!(project_trust(&trusted, root, config).ok);
    }

    #[test]
    fn hook_trust_holds_only_for_the_exact_hash_of_the_hooks_init_wrote() {
        let (_dir, root, text) = wired_project();
        let hooks = our_project_hooks(
            &text,
            &root.join(".codex/config.toml").display().to_string(),
        )
        .unwrap();
        assert_eq!(
            hooks.len(),
            4,
            "PostToolUse, Stop, SubagentStop, SessionStart: {hooks:?}"
        );

        let exact = hook_trust(&user_config_trusting(&root, &text, str::to_owned), &root);
        assert!(exact.ok, "{exact:?}");
        assert!(
            exact.what.contains("trusts Context Pilot's 4 hook(s)"),
            "{exact:?}"
        );

        let changed = hook_trust(
            &user_config_trusting(&root, &text, |_| "sha256:0".into()),
            &root,
        );
        assert!(!changed.ok);
        assert!(
            changed.what.contains("changed since you trusted"),
            "{changed:?}"
        );
        assert!(changed.fix.unwrap().contains("--trust-in-codex"));

        let elsewhere: DocumentMut = "[hooks.state.\"/elsewhere/.codex/config.toml:stop:0:0\"]\n\
             trusted_hash = \"sha256:2\"\n"
            .parse()
            .unwrap();
        let untrusted = hook_trust(&elsewhere, &root);
        assert!(!untrusted.ok);
        assert!(
            untrusted.what.contains("has not trusted 4"),
            "{untrusted:?}"
        );

        std::fs::remove_file(root.join(".codex/config.toml")).unwrap();
        let unwired = hook_trust(&elsewhere, &root);
        assert!(!unwired.ok);
        assert_eq!(
            unwired.fix.as_deref(),
            Some("run `context-pilot init codex`")
        );
    }

    #[test]
    fn a_plugins_hooks_count_as_trusted_only_with_their_own_hash_under_the_plugins_key() {
        let hooks = serde_json::json!({"hooks": {
            "PostToolUse": [{"hooks": [{"type": "command", "timeout": 600,
                "command": "exec context-pilot hook --plugin codex-post-tool-use"}]}],
            "Stop": [{"hooks": [{"type": "command", "timeout": 600,
                "command": "exec context-pilot hook --plugin codex-stop"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo theirs"}]}],
        }});
        let id = "context-pilot@context-pilot";
        let config = Path::new("/home/me/.codex/config.toml");
        let ours = command_hooks(
            &format!("{id}:hooks/codex.json"),
            &hooks["hooks"],
            |_, c| c.contains("--plugin"),
        );
        assert_eq!(
            ours.iter().map(|h| h.key.as_str()).collect::<Vec<_>>(),
            [
                "context-pilot@context-pilot:hooks/codex.json:post_tool_use:0:0",
                "context-pilot@context-pilot:hooks/codex.json:stop:0:0",
            ]
        );
        let recording = |hash: &dyn Fn(&str) -> String, count: usize| {
            ours.iter()
                .take(count)
                .fold(String::new(), |mut out, hook| {
                    let _ = writeln!(
                        out,
                        "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n\
                     trusted_content_hash = \"sha256:1\"",
                        hook.key,
                        hash(&hook.hash)
                    );
                    out
                })
        };
        let check = |text: &str| plugin_hook_trust(text, config, id, "hooks/codex.json", &hooks);

        let none = check("");
        assert!(!none.ok);
        assert!(none.what.contains("has not trusted 2 of the 2"), "{none:?}");
        assert_eq!(none.fix.as_deref(), Some(PLUGIN_TRUST_FIX));
        assert_eq!(PLUGIN_TRUST_FIX.lines().count(), 1);

        let half = check(&recording(&str::to_owned, 1));
        assert!(half.what.contains("has not trusted 1 of the 2"), "{half:?}");

        let all = check(&recording(&str::to_owned, 2));
        assert!(all.ok, "{all:?}");
        assert!(
            all.what.contains("trusts the commands of the 2 hook(s)"),
            "{all:?}"
        );

        let changed = check(&recording(&|_| "sha256:0".to_owned(), 2));
        assert!(!changed.ok);
        assert!(changed.what.contains("changed since"), "{changed:?}");

        let empty = plugin_hook_trust("", config, id, "hooks/codex.json", &serde_json::json!({}));
        assert!(!empty.ok);
        assert!(empty.fix.unwrap().contains("codex plugin add"));
    }
}
