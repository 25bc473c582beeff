//! LLM providers: the Anthropic Messages API and OpenAI-compatible Chat Completions behind
//! one small blocking trait, [`Provider`].
//!
//! Calls block, so run them on a background thread and forward the [`StreamEvent`]s to the UI
//! through a channel. Cancel with the [`CancelToken`] (checked about every 50 ms, also while a
//! stalled server sends nothing). Failed calls return an [`LlmError`] and no content, so a
//! conversation is only ever extended with complete replies.
//!
//! ```ignore
//! let config = ProviderConfig::resolve(&process_env, config_json.get("llm"))?
//!     .ok_or("no provider configured")?;
//! let provider = connect(config);
//! let request = provider.config().request("You are terse.", messages, tools);
//! let cancel = CancelToken::new();
//! let response = provider.stream(&request, &cancel, &mut |event| {
//!     if let StreamEvent::TextDelta(text) = event { ui_tx.send(text).ok(); }
//! })?;
//! for call in response.tool_calls() { /* run it; ToolInput::Invalid gets an error result */ }
//! messages.push(response.into_message());
//! ```

mod anthropic;
mod cancel;
mod config;
mod error;
mod openai;
mod sse;
mod transport;
mod types;

pub(crate) use cancel::CancelToken;
pub(crate) use config::{
    ConfigError, DEFAULT_MAX_OUTPUT_TOKENS, ProviderConfig, ProviderKind, RetryPolicy, Timeouts,
    process_env,
};
pub(crate) use error::LlmError;
pub(crate) use types::{
    ApiKey, ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, ToolCall,
    ToolDefinition, ToolInput, Usage,
};

/// A model endpoint. Object-safe, `Send + Sync`: share it as `Arc<dyn Provider>` and call it
/// from a worker thread.
pub(crate) trait Provider: Send + Sync {
    /// The configuration this provider was built from (model, context window, limits).
    fn config(&self) -> &ProviderConfig;

    /// Sends `request` and streams the reply: `on_event` sees text and tool calls as they
    /// arrive (and retries before anything arrived); the returned [`Response`] is the
    /// complete turn. Transient failures are retried per the config's [`RetryPolicy`].
    fn stream(
        &self,
        request: &Request,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError>;
}

/// Builds the provider for `config`.
pub(crate) fn connect(config: ProviderConfig) -> Box<dyn Provider> {
    match config.kind {
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(config)),
        ProviderKind::OpenAi => Box::new(openai::OpenAi::new(config)),
    }
}

impl ProviderConfig {
    /// A request for this provider's model with its default output limit.
    pub(crate) fn request(
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
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod tests_support {
    //! Configurations pointing at a local scripted server, with tiny retry waits.

    use std::time::Duration;

    use super::{ApiKey, ProviderConfig, ProviderKind, RetryPolicy, Timeouts};

    fn config(kind: ProviderKind, base_url: String) -> ProviderConfig {
        ProviderConfig {
            kind,
            model: kind.default_model().to_owned(),
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
    pub(crate) fn anthropic_config(base_url: &str) -> ProviderConfig {
        config(ProviderKind::Anthropic, base_url.to_owned())
    }

    /// OpenAI-compatible at `base_url` (e.g. `{server}/v1`).
    pub(crate) fn openai_config(base_url: &str) -> ProviderConfig {
        config(ProviderKind::OpenAi, base_url.to_owned())
    }
}
