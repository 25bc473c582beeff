//! Which provider to talk to, and how: resolved from environment variables and the LLM
//! section of `.context-pilot/config.json` (merged with the user's own, and without an
//! untrusted project's `base_url`: see `sources.rs`).
//!
//! Precedence, highest first: environment, config section, built-in defaults. The provider
//! is `CP_PROVIDER`, else the section's `provider`, else `anthropic` when `ANTHROPIC_API_KEY`
//! is set, else `openai` when `OPENAI_API_KEY` or `OPENAI_BASE_URL` is set (or the section
//! has a `base_url`, e.g. a local Ollama). The section's `model`, `base_url` and
//! `context_window` apply only when the section names no provider or names the chosen one,
//! so a `CP_PROVIDER` override never sends a Claude model name to an OpenAI endpoint.
//!
//! API keys come only from the environment: a key in config.json (a committed file) is
//! rejected with an error saying so.

mod error;
mod kind;
mod section;

use std::time::Duration;

use serde_json::Value;

use super::price::Price;
use super::types::{ApiKey, Message, Request, ToolDefinition};
pub use error::ConfigError;
pub use kind::ProviderKind;
use section::Section;

/// Default for `max_output_tokens`.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

/// How transient failures (429, 5xx, 529, network errors) are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first (1 disables retries).
    pub max_attempts: u32,
    /// Wait before the first retry; doubled for each further retry.
    pub initial_backoff: Duration,
    /// Upper bound of the exponential wait.
    pub max_backoff: Duration,
    /// Upper bound on a server's `retry-after` wait.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Network time limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection (TCP and TLS).
    pub connect: Duration,
    /// Longest silence while waiting for response bytes before the attempt counts as a
    /// network failure. Generous, because local servers may think long before the first
    /// byte; Anthropic sends pings on long streams.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(30),
            idle: Duration::from_secs(300),
        }
    }
}

/// Everything needed to build a provider. `Debug` is safe to log: the key is redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// Wire format.
    pub kind: ProviderKind,
    /// Model id.
    pub model: String,
    /// True when the model was named (`CP_MODEL` or config.json), false for the built-in
    /// default, which the model list may replace with the newest listed model.
    pub model_configured: bool,
    /// True when `context_window` came from config.json rather than the built-in default.
    pub window_configured: bool,
    /// Price override from config.json (`llm.price`); else the built-in table applies.
    pub price: Option<Price>,
    /// Base URL without a trailing slash.
    pub base_url: String,
    /// API key; `None` is allowed for OpenAI-compatible servers that need none.
    pub api_key: Option<ApiKey>,
    /// Model context window in tokens, for the restart estimator.
    pub context_window: u64,
    /// Default `max_output_tokens` for requests.
    pub max_output_tokens: u32,
    /// Retry behaviour.
    pub retry: RetryPolicy,
    /// Network time limits.
    pub timeouts: Timeouts,
}

impl ProviderConfig {
    /// Human label for messages: `Anthropic`, `OpenAI`, or
    /// `OpenAI-compatible endpoint http://localhost:11434/v1`.
    pub fn label(&self) -> String {
        match self.kind {
            ProviderKind::Anthropic
                if self.base_url == ProviderKind::Anthropic.default_base_url() =>
            {
                "Anthropic".to_owned()
            }
            ProviderKind::Anthropic => format!("Anthropic ({})", self.base_url),
            ProviderKind::OpenAi if self.is_official_openai() => "OpenAI".to_owned(),
            ProviderKind::OpenAi => format!("OpenAI-compatible endpoint {}", self.base_url),
        }
    }

    /// True when talking to api.openai.com itself (which wants `max_completion_tokens`).
    pub fn is_official_openai(&self) -> bool {
        self.kind == ProviderKind::OpenAi && self.base_url.starts_with("https://api.openai.com")
    }

    /// Resolves the configuration from `env` (e.g. [`process_env`]) and the optional LLM
    /// section of config.json. `Ok(None)` means no provider is configured: the TUI then
    /// explains how to set one up.
    pub fn resolve(
        env: &dyn Fn(&str) -> Option<String>,
        section: Option<&Value>,
    ) -> Result<Option<Self>, ConfigError> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let section = Section::parse(section)?;

        let kind = if let Some(value) = env("CP_PROVIDER") {
            ProviderKind::parse(&value).ok_or(ConfigError::UnknownProvider {
                value,
                origin: "CP_PROVIDER",
            })?
        } else if let Some(kind) = section.provider {
            kind
        } else if env("ANTHROPIC_API_KEY").is_some() {
            ProviderKind::Anthropic
        } else if env("OPENAI_API_KEY").is_some()
            || env("OPENAI_BASE_URL").is_some()
            || section.base_url.is_some()
        {
            ProviderKind::OpenAi
        } else {
            return Ok(None);
        };
        let section_applies = section.provider.is_none_or(|named| named == kind);

        let (base_url, base_origin) = match env(kind.base_url_var()) {
            Some(url) => (url, kind.base_url_var()),
            None => match section.base_url.clone().filter(|_| section_applies) {
                Some(url) => (url, "config.json base_url"),
                None => (kind.default_base_url().to_owned(), "default"),
            },
        };
        let base_url = base_url.trim().trim_end_matches('/').to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError::BadBaseUrl {
                value: base_url,
                origin: base_origin,
            });
        }

        let api_key = env(kind.key_var()).map(|key| ApiKey::new(key.trim()));
        let named = env("CP_MODEL").or_else(|| section.model.clone().filter(|_| section_applies));
        let model_configured = named.is_some();
        let model = named.unwrap_or_else(|| kind.default_model().to_owned());
        let window = section.context_window.filter(|_| section_applies);
        let config = Self {
            kind,
            model: model.trim().to_owned(),
            model_configured,
            window_configured: window.is_some(),
            price: section.price,
            base_url,
            api_key,
            context_window: window.unwrap_or_else(|| kind.default_context_window()),
            max_output_tokens: section
                .max_output_tokens
                .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
        };
        let needs_key = kind == ProviderKind::Anthropic || config.is_official_openai();
        if needs_key && config.api_key.is_none() {
            return Err(ConfigError::MissingKey {
                provider: config.label(),
                var: kind.key_var(),
            });
        }
        Ok(Some(config))
    }

    /// The price used for cost estimates: the `llm.price` override, else the built-in table.
    pub fn effective_price(&self) -> Option<Price> {
        self.price.or_else(|| Price::builtin(&self.model))
    }

    /// A request for this provider's model with its default output limit.
    pub fn request(
        &self,
        system: impl Into<String>,
        messages: Vec<Message>,
        tools: Vec<ToolDefinition>,
    ) -> Request {
        Request {
            model: self.model.clone(),
            system: system.into(),
            messages,
            tools,
            max_output_tokens: self.max_output_tokens,
            context: String::new(),
        }
    }
}

/// Reads a variable from the process environment; the production `env` for
/// [`ProviderConfig::resolve`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn resolve(
        vars: &[(&str, &str)],
        section: Option<&Value>,
    ) -> Result<Option<ProviderConfig>, ConfigError> {
        ProviderConfig::resolve(&env_of(vars), section)
    }

    #[test]
    fn nothing_configured_is_none() {
        assert_eq!(resolve(&[("ANTHROPIC_API_KEY", "")], None), Ok(None));
    }

    #[test]
    fn anthropic_key_alone_selects_anthropic_with_defaults() {
        let config = resolve(
            &[("ANTHROPIC_API_KEY", "sk-ant"), ("OPENAI_API_KEY", "sk-oa")],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.kind, ProviderKind::Anthropic);
        assert_eq!(config.model, "claude-sonnet-4-5");
        assert_eq!(config.base_url, "https://api.anthropic.com");
        assert_eq!(config.context_window, 200_000);
        assert_eq!(config.max_output_tokens, DEFAULT_MAX_OUTPUT_TOKENS);
        assert_eq!(config.api_key.as_ref().map(ApiKey::expose), Some("sk-ant"));
        assert!(!format!("{config:?}").contains("sk-ant"));
    }

    #[test]
    fn base_url_without_key_is_a_local_openai_server() {
        let config = resolve(
            &[
                ("OPENAI_BASE_URL", "http://localhost:11434/v1/"),
                ("CP_MODEL", "qwen3"),
            ],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.kind, ProviderKind::OpenAi);
        assert_eq!(config.base_url, "http://localhost:11434/v1");
        assert_eq!(config.model, "qwen3");
        assert!(config.api_key.is_none());
        assert_eq!(
            config.label(),
            "OpenAI-compatible endpoint http://localhost:11434/v1"
        );
    }

    #[test]
    fn section_values_apply_and_env_wins() {
        let section = json!({
            "provider": "openai", "model": "llama3", "base_url": "http://127.0.0.1:8080/v1",
            "context_window": 32768, "max_output_tokens": 2048
        });
        let config = resolve(&[], Some(&section)).unwrap().unwrap();
        assert_eq!(
            (config.kind, config.model.as_str(), config.base_url.as_str()),
            (ProviderKind::OpenAi, "llama3", "http://127.0.0.1:8080/v1")
        );
        assert_eq!(
            (config.context_window, config.max_output_tokens),
            (32768, 2048)
        );
        let config = resolve(&[("CP_MODEL", "mistral")], Some(&section))
            .unwrap()
            .unwrap();
        assert_eq!(config.model, "mistral");
    }

    #[test]
    fn price_override_is_parsed_and_checked() {
        let section = json!({"price": {"input": 2, "output": 8, "cached_input": 0.5}});
        let config = resolve(&[("ANTHROPIC_API_KEY", "k")], Some(&section))
            .unwrap()
            .unwrap();
        assert_eq!(
            config.effective_price(),
            Some(Price {
                input: 2.0,
                cached_input: 0.5,
                cache_write: 2.0,
                output: 8.0
            })
        );
        assert!(!config.model_configured, "the built-in default model");
        let plain = resolve(&[("ANTHROPIC_API_KEY", "k")], None)
            .unwrap()
            .unwrap();
        assert_eq!(plain.effective_price(), Price::builtin("claude-sonnet-4-5"));
        let err = resolve(
            &[("ANTHROPIC_API_KEY", "k")],
            Some(&json!({"price": {"input": "cheap"}})),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`price` must be an object of dollars"),
            "{err}"
        );
    }

    #[test]
    fn provider_override_ignores_the_other_providers_section() {
        let section = json!({"provider": "openai", "model": "gpt-4.1", "context_window": 1000});
        let config = resolve(
            &[("CP_PROVIDER", "Anthropic"), ("ANTHROPIC_API_KEY", "k")],
            Some(&section),
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.kind, ProviderKind::Anthropic);
        assert_eq!(config.model, "claude-sonnet-4-5");
        assert_eq!(config.context_window, 200_000);
    }

    #[test]
    fn clear_errors() {
        let err = resolve(&[("CP_PROVIDER", "gemini")], None).unwrap_err();
        assert!(err.to_string().contains("CP_PROVIDER is `gemini`"), "{err}");
        let err = resolve(&[("CP_PROVIDER", "anthropic")], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Anthropic needs an API key: set the ANTHROPIC_API_KEY environment variable"
        );
        let err = resolve(&[("CP_PROVIDER", "openai")], None).unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
        let err = resolve(&[], Some(&json!({"api_key": "sk"}))).unwrap_err();
        assert!(
            err.to_string().contains("read only from the environment"),
            "{err}"
        );
        let err = resolve(&[], Some(&json!({"modle": "x"}))).unwrap_err();
        assert!(err.to_string().contains("unknown key `modle`"), "{err}");
        let err = resolve(&[], Some(&json!({"context_window": "big"}))).unwrap_err();
        assert!(
            err.to_string()
                .contains("`context_window` must be a positive whole number"),
            "{err}"
        );
        let err = resolve(&[("OPENAI_BASE_URL", "localhost:11434")], None).unwrap_err();
        assert!(
            err.to_string().contains("not an http:// or https:// URL"),
            "{err}"
        );
        let err = resolve(&[], Some(&json!(["anthropic"]))).unwrap_err();
        assert!(err.to_string().contains("must be an object"), "{err}");
    }
}
