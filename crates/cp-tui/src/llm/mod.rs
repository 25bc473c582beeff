//! LLM providers: the Anthropic Messages API and OpenAI-compatible Chat Completions behind
//! one small blocking trait, [`Provider`].
//!
//! Calls block, so run them on a background thread and forward the [`StreamEvent`]s to the UI
//! through a channel. Cancel with the [`CancelToken`] (checked about every 50 ms, also while a
//! stalled server sends nothing). Failed calls return an [`LlmError`] and no content, so a
//! conversation is only ever extended with complete replies.
//!
//! ```no_run
//! use cp_tui::llm::{CancelToken, Message, ProviderConfig, StreamEvent, ToolInput};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config_json = serde_json::json!({"llm": {"max_output_tokens": 4096}});
//! let Some(config) = ProviderConfig::resolve(&cp_tui::llm::process_env, config_json.get("llm"))?
//! else {
//!     println!("No provider: set ANTHROPIC_API_KEY, or OPENAI_BASE_URL for a local server.");
//!     return Ok(());
//! };
//! let provider = cp_tui::llm::connect(config);
//! let mut messages = vec![Message::user_text("Say hi")];
//! let request = provider.config().request("You are terse.", messages.clone(), Vec::new());
//! let cancel = CancelToken::new(); // a clone goes to the UI, which calls cancel() on Esc
//! let response = provider.stream(&request, &cancel, &mut |event| {
//!     if let StreamEvent::TextDelta(text) = event {
//!         print!("{text}");
//!     }
//! })?;
//! for call in response.tool_calls() {
//!     if let ToolInput::Invalid { raw, error } = &call.input {
//!         // Answer with an error tool result quoting `raw` and `error`; do not run the tool.
//!         eprintln!("{}: bad arguments {raw}: {error}", call.name);
//!     }
//! }
//! messages.push(response.into_message());
//! # Ok(())
//! # }
//! ```

mod anthropic;
pub mod cache_model;
mod cancel;
mod config;
mod error;
mod models;
mod openai;
mod price;
mod sources;
mod sse;
mod transport;
mod types;

pub use cancel::CancelToken;
pub use config::{
    ConfigError, DEFAULT_MAX_OUTPUT_TOKENS, ProviderConfig, ProviderKind, RetryPolicy, Timeouts,
    process_env,
};
pub use error::LlmError;
pub use models::{
    ListError, ModelCheck, ModelInfo, check_model, closest_names, list_models, pick_default,
};
pub use price::Price;
pub use sources::{LlmSection, ignored_base_url_error, llm_section};
pub use types::{
    ApiKey, ContentBlock, Message, Request, Response, Role, StopReason, StreamEvent, ToolCall,
    ToolDefinition, ToolInput, Usage,
};

/// A model endpoint. Object-safe, `Send + Sync`: share it as `Arc<dyn Provider>` and call it
/// from a worker thread.
pub trait Provider: Send + Sync {
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
pub fn connect(config: ProviderConfig) -> Box<dyn Provider> {
    match config.kind {
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(config)),
        ProviderKind::OpenAi => Box::new(openai::OpenAi::new(config)),
    }
}

impl ProviderConfig {
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
    pub(crate) fn anthropic_config(base_url: &str) -> ProviderConfig {
        config(ProviderKind::Anthropic, base_url.to_owned())
    }

    /// OpenAI-compatible at `base_url` (e.g. `{server}/v1`).
    pub(crate) fn openai_config(base_url: &str) -> ProviderConfig {
        config(ProviderKind::OpenAi, base_url.to_owned())
    }
}
