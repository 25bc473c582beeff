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
//! flags is `/<session-flags>/config.toml` and the event is snake case (`post_tool_use`). Its
//! hash is Codex's fingerprint of the hook's normalized identity: the JSON object
//! `{"event_name": <event>, "matcher"?: …, "hooks": [{"type": "command", "command": …,
//! "timeout": <seconds, 600 when unset>, "async": false, "statusMessage"?: …}]}` with every
//! object's keys sorted, written compactly, then SHA-256 (`codex-rs/hooks/src/engine/
//! discovery.rs`, `command_hook_hash`, and `codex-rs/config/src/fingerprint.rs`). The format
//! is Codex-internal: the unit test pins a hash Codex 0.169.0 accepted, and the real-agent
//! tests show the hooks run.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

/// The source Codex names `-c` session flags by, in hook keys.
const SESSION_FLAGS_SOURCE: &str = "/<session-flags>/config.toml";
/// Codex's timeout of a command hook that names none, in seconds.
const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// The `hooks.state` table trusting every command hook of `hooks` (`{"hooks": {"Stop": [{
/// "hooks": [{"type": "command", "command": …}]}], …}}`) passed as `-c` session flags.
pub(super) fn hook_state(hooks: &Value) -> Value {
    let mut state = Map::new();
    let Some(events) = hooks["hooks"].as_object() else {
        return Value::Object(state);
    };
    for (event, groups) in events {
        let label = snake_case(event);
        for (group_index, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group["hooks"].as_array().into_iter().flatten();
            for (handler_index, handler) in handlers.enumerate() {
                if handler["type"] != "command" {
                    continue;
                }
                let key = format!("{SESSION_FLAGS_SOURCE}:{label}:{group_index}:{handler_index}");
                let hash = command_hook_hash(&label, group.get("matcher"), handler);
                state.insert(key, json!({ "trusted_hash": hash }));
            }
        }
    }
    Value::Object(state)
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
}
