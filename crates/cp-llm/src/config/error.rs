//! [`ConfigError`]: a provider configuration that cannot be used, with what to change; and
//! the keys the LLM section accepts, which its errors name.

/// Keys accepted in the LLM section of config.json.
pub const SECTION_KEYS: [&str; 6] = [
    "provider",
    "model",
    "context_window",
    "max_output_tokens",
    "base_url",
    "price",
];

/// A configuration that cannot be used, with what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `CP_PROVIDER` or `provider` names no known provider.
    #[error("{origin} is `{value}`, which is not a provider; use `anthropic` or `openai`")]
    UnknownProvider {
        /// The value given.
        value: String,
        /// Where it came from.
        origin: &'static str,
    },
    /// The chosen provider needs a key and the environment has none.
    #[error("{provider} needs an API key: set the {var} environment variable")]
    MissingKey {
        /// Provider label.
        provider: String,
        /// Variable to set.
        var: &'static str,
    },
    /// A base URL that is not http(s).
    #[error(
        "{origin} `{value}` is not an http:// or https:// URL; example: http://localhost:11434/v1"
    )]
    BadBaseUrl {
        /// The value given.
        value: String,
        /// Where it came from.
        origin: &'static str,
    },
    /// A key the LLM section does not know (a typo, or a secret that belongs in the env).
    #[error("{}", unknown_key_message(key))]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// A key with a value of the wrong type.
    #[error("LLM settings in config.json: `{key}` must be {expected}, got {got}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// What is accepted.
        expected: &'static str,
        /// What was found, abbreviated.
        got: String,
    },
}

fn unknown_key_message(key: &str) -> String {
    if key.to_ascii_lowercase().contains("key") {
        format!(
            "LLM settings in config.json: `{key}` is not allowed; API keys are read only from \
             the environment (ANTHROPIC_API_KEY or OPENAI_API_KEY) so they never land in a \
             committed file"
        )
    } else {
        format!(
            "LLM settings in config.json: unknown key `{key}`; allowed keys: {}",
            SECTION_KEYS.join(", ")
        )
    }
}
