//! Configurations pointing at a local scripted server, with tiny retry waits: for this
//! crate's tests and, with the `test-support` feature, for other crates' tests.

use std::time::Duration;

use super::config::{ProviderConfig, ProviderKind, RetryPolicy, Timeouts};
use super::types::ApiKey;

fn config(kind: ProviderKind, base_url: String) -> ProviderConfig {
    ProviderConfig {
        kind,
        model: kind.default_model().to_owned(),
        model_configured: false,
        window_configured: false,
        price: None,
        base_url,
        api_key: Some(ApiKey::new("test-key-123")),
        context_window: kind.default_context_window(),
        max_output_tokens: 1024,
        retry: RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            max_retry_after: Duration::from_millis(5),
        },
        timeouts: Timeouts {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(20),
        },
    }
}

/// Anthropic at `base_url` (e.g. the scripted server's URL).
pub fn anthropic_config(base_url: &str) -> ProviderConfig {
    config(ProviderKind::Anthropic, base_url.to_owned())
}

/// OpenAI-compatible at `base_url` (e.g. `{server}/v1`).
pub fn openai_config(base_url: &str) -> ProviderConfig {
    config(ProviderKind::OpenAi, base_url.to_owned())
}
