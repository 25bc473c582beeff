//! [`ProviderKind`]: the two wire formats, with their variables and defaults.

use std::fmt;

/// The two wire formats this host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions, as served by OpenAI, Ollama, vLLM, llama.cpp, OpenRouter, ...
    OpenAi,
}

impl ProviderKind {
    /// The name used in `CP_PROVIDER` and config.json.
    pub fn config_name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    /// Environment variable holding the API key.
    pub fn key_var(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }

    /// Environment variable overriding the base URL.
    pub fn base_url_var(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_BASE_URL",
            Self::OpenAi => "OPENAI_BASE_URL",
        }
    }

    /// Base URL used when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenAi => "https://api.openai.com/v1",
        }
    }

    /// Model used when none is configured.
    pub fn default_model(self) -> &'static str {
        match self {
            Self::Anthropic => "claude-sonnet-4-5",
            Self::OpenAi => "gpt-4o",
        }
    }

    /// Context window assumed when none is configured: 200k for Claude models; 128k for
    /// OpenAI-compatible endpoints (right for gpt-4o, conservative for most local models'
    /// configured windows — set `context_window` for others).
    pub fn default_context_window(self) -> u64 {
        match self {
            Self::Anthropic => 200_000,
            Self::OpenAi => 128_000,
        }
    }

    /// The provider `value` names (`anthropic`, `openai`; any case).
    pub(super) fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAi),
            _ => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.config_name())
    }
}
