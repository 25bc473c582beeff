//! The provider's model list (`GET /v1/models`): the default model when none is configured,
//! a clear message for a configured name the endpoint does not list, and the context window.
//!
//! Anthropic answers `data[].id` and `created_at` (RFC 3339), in pages (`has_more`,
//! `last_id`, asked for with `after_id`); OpenAI-compatible servers answer `data[].id` and
//! `created` (Unix seconds). Some servers add the window (`context_window`,
//! `max_input_tokens`, `context_length`); it is used when present.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;

use super::config::{ProviderConfig, ProviderKind};
use super::error::abbreviate;

/// Most pages read from a paginated list, so a misbehaving server cannot loop us forever.
const MAX_PAGES: usize = 20;
/// Time limit of the whole listing; it runs at start, off the UI thread.
const LIST_TIMEOUT: Duration = Duration::from_secs(15);

/// One listed model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// Model id, e.g. `claude-sonnet-4-5-20250929`.
    pub id: String,
    /// Creation time in Unix seconds (0 when the server gives none).
    pub created: u64,
    /// Context window, when the server says.
    pub context_window: Option<u64>,
}

/// Why the list could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not list models at {url}: {detail}")]
pub struct ListError {
    /// The URL asked.
    pub url: String,
    /// What went wrong.
    pub detail: String,
}

/// Reads the whole model list of `config`'s endpoint (blocking; run it off the UI thread).
pub fn list_models(config: &ProviderConfig) -> Result<Vec<ModelInfo>, ListError> {
    list_models_within(config, LIST_TIMEOUT)
}

/// [`list_models`] within `limit` for the whole listing (`context-pilot doctor` waits less
/// than the TUI's background look).
pub fn list_models_within(
    config: &ProviderConfig,
    limit: Duration,
) -> Result<Vec<ModelInfo>, ListError> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(limit))
        .user_agent(concat!("context-pilot/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let base = match config.kind {
        ProviderKind::Anthropic => format!("{}/v1/models", config.base_url),
        ProviderKind::OpenAi => format!("{}/models", config.base_url),
    };
    let mut models = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let url = match (&config.kind, &after) {
            (ProviderKind::Anthropic, None) => format!("{base}?limit=1000"),
            (ProviderKind::Anthropic, Some(id)) => format!("{base}?limit=1000&after_id={id}"),
            (ProviderKind::OpenAi, _) => base.clone(),
        };
        let page = get_json(&agent, config, &url)?;
        let data = page["data"].as_array().ok_or_else(|| ListError {
            url: url.clone(),
            detail: format!(
                "the answer has no `data` list: {}",
                abbreviate(&page.to_string(), 200)
            ),
        })?;
        models.extend(data.iter().filter_map(parse_entry));
        after = page["last_id"].as_str().map(str::to_owned);
        if config.kind == ProviderKind::OpenAi || page["has_more"] != Value::Bool(true) {
            return Ok(models);
        }
        if after.is_none() {
            break;
        }
    }
    Ok(models)
}

fn get_json(agent: &ureq::Agent, config: &ProviderConfig, url: &str) -> Result<Value, ListError> {
    let fail = |detail: String| ListError {
        url: url.to_owned(),
        detail,
    };
    let mut request = agent.get(url);
    match (config.kind, &config.api_key) {
        (ProviderKind::Anthropic, key) => {
            request = request.header("anthropic-version", "2023-06-01");
            if let Some(key) = key {
                request = request.header("x-api-key", key.expose());
            }
        }
        (ProviderKind::OpenAi, Some(key)) => {
            request = request.header("authorization", format!("Bearer {}", key.expose()));
        }
        (ProviderKind::OpenAi, None) => {}
    }
    let mut response = request.call().map_err(|e| fail(e.to_string()))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .read_to_string()
        .map_err(|e| fail(e.to_string()))?;
    if status != 200 {
        return Err(fail(format!("HTTP {status}: {}", abbreviate(&body, 200))));
    }
    serde_json::from_str(&body).map_err(|e| fail(format!("the answer is not JSON ({e})")))
}

fn parse_entry(entry: &Value) -> Option<ModelInfo> {
    let id = entry["id"].as_str()?.to_owned();
    let created = entry["created"].as_u64().unwrap_or_else(|| {
        entry["created_at"]
            .as_str()
            .and_then(|text| humantime::parse_rfc3339_weak(text).ok())
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs())
    });
    let context_window = ["context_window", "max_input_tokens", "context_length"]
        .iter()
        .find_map(|key| entry[*key].as_u64())
        .filter(|&n| n > 0);
    Some(ModelInfo {
        id,
        created,
        context_window,
    })
}

/// The newest current general-purpose model in `models`: Anthropic, the newest
/// `claude-sonnet-*`, else the newest `claude-*`; OpenAI, the newest `gpt-*` chat model.
pub fn pick_default(kind: ProviderKind, models: &[ModelInfo]) -> Option<&ModelInfo> {
    let newest = |filter: &dyn Fn(&str) -> bool| {
        models
            .iter()
            .filter(|m| filter(&m.id))
            .max_by_key(|m| (m.created, m.id.clone()))
    };
    match kind {
        ProviderKind::Anthropic => newest(&|id| id.starts_with("claude-sonnet-"))
            .or_else(|| newest(&|id| id.starts_with("claude-"))),
        ProviderKind::OpenAi => newest(&is_gpt_chat_model),
    }
}

/// `gpt-*` models that chat: not audio, realtime, image, search, transcription or TTS
/// variants, and not instruct (completions-only) models.
fn is_gpt_chat_model(id: &str) -> bool {
    const NOT_CHAT: [&str; 9] = [
        "audio",
        "realtime",
        "image",
        "search",
        "transcribe",
        "tts",
        "instruct",
        "embedding",
        "moderation",
    ];
    id.starts_with("gpt-") && !NOT_CHAT.iter().any(|word| id.contains(word))
}

/// Up to `count` listed names closest to `name` (edit distance), closest first.
pub fn closest_names(name: &str, models: &[ModelInfo], count: usize) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = models
        .iter()
        .map(|m| (strsim::levenshtein(name, &m.id), m.id.as_str()))
        .collect();
    scored.sort_unstable();
    scored
        .into_iter()
        .take(count)
        .map(|(_, id)| id.to_owned())
        .collect()
}

/// Context window of known model families, for servers that do not say.
pub fn table_window(model: &str) -> Option<u64> {
    const TABLE: [(&str, u64); 8] = [
        ("claude-", 200_000),
        ("gpt-5", 400_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("gpt-4-turbo", 128_000),
    ];
    TABLE
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, window)| window)
}

/// What the model list changed or found.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCheck {
    /// The configuration to use from now on.
    pub config: ProviderConfig,
    /// For the person: the model picked, or why the configured name looks wrong.
    pub notice: Option<String>,
    /// True when the configured model is not in the list.
    pub unknown_model: bool,
}

/// Applies the model list to `config`: with no model configured, the newest general-purpose
/// listed model replaces the built-in default; a configured name that is not listed gets a
/// notice with the closest names. The context window comes from the list where it gives one,
/// else from the table, else from config.
pub fn check_model(config: &ProviderConfig, models: &[ModelInfo]) -> ModelCheck {
    let mut config = config.clone();
    let mut notice = None;
    let mut unknown_model = false;
    if !config.model_configured {
        if let Some(pick) = pick_default(config.kind, models) {
            if pick.id != config.model {
                notice = Some(format!(
                    "model: {} (the newest listed; set llm.model or CP_MODEL to choose)",
                    pick.id
                ));
            }
            config.model.clone_from(&pick.id);
        }
    } else if !models.is_empty() && !models.iter().any(|m| m.id == config.model) {
        unknown_model = true;
        notice = Some(format!(
            "model `{}` is not listed by {}; closest: {}. Set llm.model or CP_MODEL to one of \
             them (`context-pilot models` lists all).",
            config.model,
            config.label(),
            closest_names(&config.model, models, 3).join(", ")
        ));
    }
    let listed = models
        .iter()
        .find(|m| m.id == config.model)
        .and_then(|m| m.context_window);
    if let Some(window) = listed.or_else(|| table_window(&config.model)) {
        config.context_window = window;
    }
    ModelCheck {
        config,
        notice,
        unknown_model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: &str, created: u64) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            created,
            context_window: None,
        }
    }

    #[test]
    fn openai_pick_skips_non_chat_models() {
        let models = [
            m("gpt-4o", 10),
            m("gpt-4o-audio-preview", 50),
            m("gpt-image-1", 60),
            m("text-embedding-3-large", 70),
            m("gpt-4o-mini-tts", 80),
            m("gpt-4.1", 40),
            m("omni-moderation-latest", 90),
        ];
        assert_eq!(
            pick_default(ProviderKind::OpenAi, &models).unwrap().id,
            "gpt-4.1"
        );
    }

    #[test]
    fn anthropic_pick_prefers_sonnet_then_any_claude() {
        let models = [m("claude-opus-4-1", 90), m("claude-sonnet-4-5", 80)];
        assert_eq!(
            pick_default(ProviderKind::Anthropic, &models).unwrap().id,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            pick_default(ProviderKind::Anthropic, &models[..1])
                .unwrap()
                .id,
            "claude-opus-4-1"
        );
    }
}
