//! Trust for the hooks a run passes to Codex CLI, and for nothing else.
//!
//! Codex runs a hook only when the person trusted it: `[hooks.state."<key>"] trusted_hash =
//! "sha256:…"` in a config layer the person controls (their `config.toml`, or `-c` session
//! flags; a project's `.codex/` cannot trust its own hooks). `--dangerously-bypass-hook-trust`
//! would run every enabled hook, a cloned repository's included, so a run instead passes,
//! with its own hooks (`-c hooks.<Event>=[…]`), the trust of exactly those hooks
//! (`-c hooks.state={…}`). Codex merges that table with the person's own, key by key.
//!
//! A hook's key is `<source>:<event>:<group index>:<handler index>`, where the source of `-c`
//! flags is `/<session-flags>/config.toml`, that of a project's hooks its
//! `<root>/.codex/config.toml`, and the event is snake case (`post_tool_use`). The copies of
//! our hooks that `init codex` wrote into the project are turned off for the run (`enabled =
//! false` under their key): Codex runs duplicate hooks twice, and the stop gate would count
//! two blocks for one stop. Its
//! hash is Codex's fingerprint of the hook's normalized identity: the JSON object
//! `{"event_name": <event>, "matcher"?: …, "hooks": [{"type": "command", "command": …,
//! "timeout": <seconds, 600 when unset>, "async": false, "statusMessage"?: …}]}` with every
//! object's keys sorted, written compactly, then SHA-256 (`codex-rs/hooks/src/engine/
//! discovery.rs`, `command_hook_hash`, and `codex-rs/config/src/fingerprint.rs`). The format
//! is Codex-internal: the unit test pins a hash Codex 0.169.0 accepted, and the real-agent
//! tests show the hooks run.

use std::fmt::Write as _;

use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use toml_edit::{DocumentMut, Item};

use super::SPEC;
use crate::project_settings::is_our_command;

/// The source Codex names `-c` session flags by, in hook keys.
const SESSION_FLAGS_SOURCE: &str = "/<session-flags>/config.toml";
/// Codex's timeout of a command hook that names none, in seconds.
const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// One command hook as Codex keys and fingerprints it: `hooks.state."<key>"` holds its trust,
/// which counts when its `trusted_hash` equals `hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HookIdentity {
    pub key: String,
    pub hash: String,
}

/// The identity of every command hook of `events` (a `[hooks]` table as JSON: `{"Stop": [{
/// "hooks": [{"type": "command", "command": …}]}], …}`) read from the config file `source`,
/// keeping those `keep(event, command)` accepts.
pub(super) fn command_hooks(
    source: &str,
    events: &Value,
    keep: impl Fn(&str, &str) -> bool,
) -> Vec<HookIdentity> {
    let mut found = Vec::new();
    for (event, groups) in events.as_object().into_iter().flatten() {
        let label = snake_case(event);
        for (group_index, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group["hooks"].as_array().into_iter().flatten();
            for (handler_index, handler) in handlers.enumerate() {
                let command = handler["command"].as_str().unwrap_or_default();
                if handler["type"] != "command" || !keep(event, command) {
                    continue;
                }
                found.push(HookIdentity {
                    key: format!("{source}:{label}:{group_index}:{handler_index}"),
                    hash: command_hook_hash(&label, group.get("matcher"), handler),
                });
            }
        }
    }
    found
}

/// The `hooks.state` table trusting every command hook of `hooks` (`{"hooks": {"Stop": [{
/// "hooks": [{"type": "command", "command": …}]}], …}}`) passed as `-c` session flags.
pub(super) fn hook_state(hooks: &Value) -> Value {
    let state = command_hooks(SESSION_FLAGS_SOURCE, &hooks["hooks"], |_, _| true)
        .into_iter()
        .map(|hook| (hook.key, json!({ "trusted_hash": hook.hash })))
        .collect();
    Value::Object(state)
}

/// The project's config file that `init codex` writes, `<root>/.codex/config.toml`, under
/// every name Codex may key its hooks by: as given, and as the system resolves it.
pub(super) fn project_config_sources(root: &Path) -> Vec<String> {
    let path = root.join(".codex").join("config.toml");
    let mut sources = vec![path.display().to_string()];
    if let Ok(real) = std::fs::canonicalize(&path)
        && real != path
    {
        sources.push(real.display().to_string());
    }
    sources
}

/// Our hooks (`… hook codex-stop`, …) in the project config `text` (the project's
/// `.codex/config.toml`), keyed by `source`; `None` when `text` is not TOML.
pub(super) fn our_project_hooks(text: &str, source: &str) -> Option<Vec<HookIdentity>> {
    let doc = text.parse::<DocumentMut>().ok()?;
    let hooks = doc.get("hooks").map_or(Value::Null, item_json);
    Some(command_hooks(source, &hooks, |event, command| {
        SPEC.hook_events
            .iter()
            .any(|spec| spec.name == event && is_our_command(command, spec.cli_name))
    }))
}

/// The `hooks.state` entries turning off, for one run, the hooks of ours (`… hook
/// codex-stop`, …) in the project's `.codex/config.toml` at `root`, which the run passes
/// itself. Nothing when there is no such file or it cannot be read.
pub(super) fn project_copies_disabled(root: &Path) -> Map<String, Value> {
    let path = root.join(".codex/config.toml");
    let mut state = Map::new();
    let Ok(text) = std::fs::read_to_string(&path) else {
        return state;
    };
    for source in project_config_sources(root) {
        let Some(hooks) = our_project_hooks(&text, &source) else {
            tracing::debug!("{} is not TOML; Codex will say so", path.display());
            return state;
        };
        for hook in hooks {
            state.insert(hook.key, json!({ "enabled": false }));
        }
    }
    state
}

/// A TOML item as JSON (dates as text).
fn item_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(value) => value_json(value),
        Item::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(tables) => Value::Array(
            tables
                .iter()
                .map(|t| item_json(&Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn value_json(value: &toml_edit::Value) -> Value {
    match value {
        toml_edit::Value::String(s) => json!(s.value()),
        toml_edit::Value::Integer(i) => json!(i.value()),
        toml_edit::Value::Float(f) => json!(f.value()),
        toml_edit::Value::Boolean(b) => json!(b.value()),
        toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
        toml_edit::Value::Array(items) => Value::Array(items.iter().map(value_json).collect()),
        toml_edit::Value::InlineTable(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.to_owned(), value_json(v)))
                .collect(),
        ),
    }
}

/// Codex's trust hash of one command hook `handler` of the event `label`.
fn command_hook_hash(label: &str, matcher: Option<&Value>, handler: &Value) -> String {
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .max(1);
    let mut normalized = json!({
        "type": "command",
        "command": handler["command"],
        "timeout": timeout,
        "async": handler.get("async").and_then(Value::as_bool).unwrap_or(false),
    });
    if let Some(message) = handler.get("statusMessage").filter(|m| m.is_string()) {
        normalized["statusMessage"] = message.clone();
    }
    let mut identity = json!({"event_name": label, "hooks": [normalized]});
    if let Some(matcher) = matcher.filter(|m| m.is_string()) {
        identity["matcher"] = matcher.clone();
    }
    let canonical = canonical(&identity).to_string();
    let digest = Sha256::digest(canonical.as_bytes());
    digest
        .iter()
        .fold(String::from("sha256:"), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// `value` with every object's keys in sorted order (whatever order `serde_json` keeps).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// `PostToolUse` → `post_tool_use`.
fn snake_case(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_one_codex_0_169_accepted() {
        // Measured with the pinned Codex CLI 0.169.0: this `-c hooks.UserPromptSubmit` hook ran
        // with exactly this trusted hash, and not with another.
        let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "touch /tmp/cpx/ours-ran"}]}]}});
        let state = hook_state(&hooks);
        assert_eq!(
            state,
            json!({"/<session-flags>/config.toml:user_prompt_submit:0:0": {"trusted_hash":
                "sha256:365d10e1833bf7247330ab94ad69828edee2deaad6c413f3f5bb370d06a927e1"}})
        );
    }

    #[test]
    fn every_command_hook_gets_its_key_and_what_it_runs_changes_the_hash() {
        let hooks = json!({"hooks": {
            "PostToolUse": [{"hooks": [{"type": "command", "command": "a", "timeout": 60}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "b"}]},
                     {"hooks": [{"type": "prompt"}, {"type": "command", "command": "c"}]}],
        }});
        let state = hook_state(&hooks);
        let keys: Vec<&String> = state.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "/<session-flags>/config.toml:post_tool_use:0:0",
                "/<session-flags>/config.toml:stop:0:0",
                "/<session-flags>/config.toml:stop:1:1",
            ]
        );
        let hash = |handler: Value| command_hook_hash("stop", None, &handler);
        let plain = hash(json!({"type": "command", "command": "b"}));
        assert_eq!(
            plain,
            hash(json!({"type": "command", "command": "b", "timeout": 600}))
        );
        assert_ne!(plain, hash(json!({"type": "command", "command": "b2"})));
        assert_ne!(
            plain,
            hash(json!({"type": "command", "command": "b", "timeout": 60}))
        );
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn the_projects_copies_of_our_hooks_are_turned_off_and_its_own_stay() {
        let dir = tempfile::tempdir().unwrap();
        assert!(project_copies_disabled(dir.path()).is_empty(), "no file");
        std::fs::create_dir_all(dir.path().join(".codex")).unwrap();
        std::fs::write(
            dir.path().join(".codex/config.toml"),
            "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo mine\"\n\
             [[hooks.Stop.hooks]]\ntype = \"command\"\n\
             command = \"/opt/cp/context-pilot hook codex-stop\"\n\n\
             [hooks]\nPostToolUse = [{ hooks = [{ type = \"command\", \
             command = \"context-pilot hook codex-post-tool-use\" }] }]\n",
        )
        .unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let state = project_copies_disabled(&root);
        let source = root.join(".codex/config.toml").display().to_string();
        assert_eq!(
            Value::Object(state),
            json!({
                format!("{source}:stop:0:1"): {"enabled": false},
                format!("{source}:post_tool_use:0:0"): {"enabled": false},
            })
        );
    }
}
