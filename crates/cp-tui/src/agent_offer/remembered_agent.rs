//! The agent the person chose on the no-model screen (F6), remembered in their own config,
//! `$XDG_CONFIG_HOME/context-pilot/config.json` (else `~/.config/…`), never the project's:
//! `{"agent": {"kind": "claude"}}`. The TUI uses it at start when no provider is configured
//! and neither `--agent` nor the project's `agent.kind` names an agent. Written atomically,
//! under the file's lock, keeping every other key.

use std::path::PathBuf;

use cp_agent_cli::AgentKind;
use cp_base::{JsonFile, StoreError, user_config_dir};
use serde_json::{Value, json};

/// The user's config file, when there is a place for it.
fn config_file() -> Option<PathBuf> {
    user_config_dir().map(|dir| dir.join("config.json"))
}

/// The remembered agent, if any (a file that cannot be read or a name no agent has is
/// logged and ignored).
pub fn load() -> Option<AgentKind> {
    let file = JsonFile::new(config_file()?);
    let doc = match file.read() {
        Ok(doc) => doc,
        Err(e) => {
            tracing::warn!("the remembered agent cannot be read: {e}");
            return None;
        }
    };
    let name = doc.get("agent")?.get("kind")?.as_str()?;
    match name.parse::<AgentKind>() {
        Ok(kind @ AgentKind::Cli(_)) => Some(kind),
        Ok(AgentKind::Builtin) => None,
        Err(e) => {
            tracing::warn!("{}: agent.kind: {e}", file.path().display());
            None
        }
    }
}

/// Why the choice could not be remembered.
#[derive(Debug, thiserror::Error)]
pub enum RememberError {
    #[error("no place for your config: neither XDG_CONFIG_HOME nor HOME is an absolute path")]
    NoPlace,
    #[error("{path}: 'agent' is not an object; fix the file, or remove that key")]
    Shape { path: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Remembers `kind` in the user's config; returns the file.
pub fn remember(kind: AgentKind) -> Result<PathBuf, RememberError> {
    let path = config_file().ok_or(RememberError::NoPlace)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    }
    let file = JsonFile::new(&path);
    file.update(|doc| {
        let agent = doc.entry("agent").or_insert_with(|| json!({}));
        let Value::Object(agent) = agent else {
            return Err(RememberError::Shape { path: path.clone() });
        };
        agent.insert("kind".into(), Value::String(kind.as_str().to_owned()));
        Ok(())
    })??;
    Ok(path)
}
