//! Where the `llm` settings come from: the user's own config and the project's.
//!
//! The user's `$XDG_CONFIG_HOME/context-pilot/config.json` (else
//! `~/.config/context-pilot/config.json`) may hold the same `llm` section as the project's
//! `.context-pilot/config.json`; the project's keys win, except that when the project names
//! another provider the user's `model`, `base_url` and `context_window` are left out. The
//! project's `base_url` is someone else's choice of server for your API key: it is used only
//! when the person trusts the project (`context-pilot trust`, see [`cp_base::TrustStore`]).
//! Otherwise it is ignored, and when nothing else (the environment or the user's config)
//! names a server, no provider starts and the error says why.

use cp_base::{JsonFile, Project, StoreError, user_config_dir};
use serde_json::{Map, Value};

/// The merged `llm` section, and the project's `base_url` if it was ignored as untrusted.
pub struct LlmSection {
    pub section: Option<Value>,
    pub ignored_base_url: Option<String>,
}

/// Reads and merges the user's and the project's `llm` sections. The error names the config
/// file that could not be read or parsed.
pub fn llm_section(project: &Project) -> Result<LlmSection, StoreError> {
    let user = match user_config_dir() {
        Some(dir) => {
            let file = JsonFile::new(dir.join("config.json"));
            file.read()?.remove("llm")
        }
        None => None,
    };
    let mut ours = project.config().raw_section("llm")?;
    let mut ignored_base_url = None;
    if let Some(Value::Object(map)) = &mut ours
        && map.contains_key("base_url")
        && !project.is_trusted()
    {
        ignored_base_url = map
            .remove("base_url")
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    }
    Ok(LlmSection {
        section: merge(user, ours),
        ignored_base_url,
    })
}

fn merge(user: Option<Value>, project: Option<Value>) -> Option<Value> {
    match (user, project) {
        (Some(Value::Object(mut user)), Some(Value::Object(project))) => {
            let provider = |m: &Map<String, Value>| m.get("provider").cloned();
            if provider(&project).is_some() && provider(&project) != provider(&user) {
                for key in ["model", "base_url", "context_window"] {
                    user.remove(key);
                }
            }
            user.extend(project);
            Some(Value::Object(user))
        }
        (user, project) => project.or(user),
    }
}

/// The error when the project's `base_url` was ignored and nothing else named a server.
pub fn ignored_base_url_error(url: &str, project: &Project, env_var: &str) -> String {
    format!(
        "LLM provider: .context-pilot/config.json sets llm.base_url `{url}`, but this project is \
         not trusted, so it is ignored and your API key is not sent there. Review it with \
         `context-pilot trust --show --project {root}` and allow it with `context-pilot trust \
         --project {root}`, or set {env_var}, or put the base_url in the llm section of your own \
         ~/.config/context-pilot/config.json.",
        root = project.root().display()
    )
}

/// Why no provider could be set up from the environment and config.json.
#[derive(Debug, thiserror::Error)]
pub enum ProviderSetupError {
    /// A config file with an `llm` section could not be read or parsed.
    #[error(transparent)]
    Config(#[from] StoreError),
    /// The project's own `base_url` was ignored (untrusted) and nothing else names a server:
    /// refused rather than silently sending the conversation and the key elsewhere.
    #[error("{0}")]
    IgnoredBaseUrl(String),
    /// The settings name no usable provider.
    #[error("LLM provider: {0}")]
    Invalid(#[from] crate::ConfigError),
}

/// The provider the environment and the `llm` sections of config.json configure, connected;
/// `Ok(None)` when nothing names one (the TUI then explains how to set one up).
pub fn configured_provider(
    project: &Project,
) -> Result<Option<std::sync::Arc<dyn crate::Provider>>, ProviderSetupError> {
    let LlmSection {
        section,
        ignored_base_url,
    } = llm_section(project)?;
    let resolved = crate::ProviderConfig::resolve(&crate::process_env, section.as_ref());
    if let Some(url) = ignored_base_url {
        let fallback = match &resolved {
            Ok(Some(config)) => config.base_url == config.kind.default_base_url(),
            Ok(None) => true,
            Err(_) => false,
        };
        if fallback {
            let var = match &resolved {
                Ok(Some(config)) => config.kind.base_url_var(),
                _ => "OPENAI_BASE_URL",
            };
            return Err(ProviderSetupError::IgnoredBaseUrl(ignored_base_url_error(
                &url, project, var,
            )));
        }
    }
    Ok(resolved?.map(|config| std::sync::Arc::from(crate::connect(config))))
}
