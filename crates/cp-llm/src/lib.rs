//! Context Pilot's LLM clients: the Anthropic Messages API and OpenAI-compatible Chat
//! Completions (OpenAI, Ollama, vLLM, llama.cpp, …) behind one small blocking trait,
//! [`Provider`].
//!
//! Calls block, so run them on a background thread and forward the [`StreamEvent`]s to the UI
//! through a channel. Cancel with the [`CancelToken`] (checked about every 50 ms, also while a
//! stalled server sends nothing). Failed calls return an [`LlmError`] and no content, so a
//! conversation is only ever extended with complete replies. Transient failures are retried
//! per the configuration's [`RetryPolicy`].
//!
//! - [`ProviderConfig::resolve`] reads the environment and the `llm` section of config.json
//!   ([`llm_section`] merges the user's and the project's); [`connect`] builds the client.
//! - [`list_models`] and [`check_model`] ask the endpoint which models it serves.
//! - [`Price`] estimates what a [`Usage`] cost; [`cache_model`] models Anthropic's prompt
//!   cache for the benchmarks.
//!
//! The example talks to a scripted local server that speaks the real wire format:
//!
//! ```
//! use cp_llm::{CancelToken, Message, ProviderConfig, StreamEvent, ToolInput};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = cp_e2e::LlmServer::start()?;
//! # server.push(cp_e2e::anthropic::text_turn("Hi."));
//! # let url = server.url();
//! // In the host the environment is `cp_llm::process_env`; here it is a fixed map.
//! let env = |name: &str| match name {
//!     "ANTHROPIC_API_KEY" => Some("test-key".to_owned()),
//!     "ANTHROPIC_BASE_URL" => Some(url.clone()),
//!     _ => None,
//! };
//! let section = serde_json::json!({"model": "claude-sonnet-4-5", "max_output_tokens": 4096});
//! let Some(config) = ProviderConfig::resolve(&env, Some(&section))? else {
//!     unreachable!("an API key is set, so a provider is configured");
//! };
//! let provider = cp_llm::connect(config);
//! let mut messages = vec![Message::user_text("Say hi")];
//! let request = provider.config().request("You are terse.", messages.clone(), Vec::new());
//! let cancel = CancelToken::new(); // a clone goes to the UI, which calls cancel() on Esc
//! let mut streamed = String::new();
//! let response = provider.stream(&request, &cancel, &mut |event| {
//!     if let StreamEvent::TextDelta(text) = event {
//!         streamed.push_str(&text);
//!     }
//! })?;
//! assert_eq!(streamed, "Hi.");
//! for call in response.tool_calls() {
//!     if let ToolInput::Invalid { raw, error } = &call.input {
//!         // Answer with an error tool result quoting `raw` and `error`; do not run the tool.
//!         eprintln!("{}: bad arguments {raw}: {error}", call.name);
//!     }
//! }
//! let price = provider.config().effective_price().expect("Sonnet is in the price table");
//! println!("cost: ${:.4}", price.cost(&response.usage));
//! messages.push(response.into_message());
//! # Ok(())
//! # }
//! ```

mod anthropic;
pub mod cache_model;
mod config;
mod connect;
mod error;
mod models;
mod openai;
mod price;
mod provider;
mod sources;
mod sse;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod transport;
mod types;
mod wire_cache;

pub use config::{
    ConfigError, DEFAULT_MAX_OUTPUT_TOKENS, ProviderConfig, ProviderKind, RetryPolicy, Timeouts,
    process_env,
};
pub use connect::connect;
/// The cancel flag lives in cp-base so the tool batch can see it too.
pub use cp_base::CancelToken;
pub use error::LlmError;
pub use models::{
    ListError, ModelCheck, ModelInfo, check_model, closest_names, list_models, list_models_within,
    pick_default,
};
pub use price::Price;
pub use provider::Provider;
pub use sources::{
    LlmSection, ProviderSetupError, configured_provider, ignored_base_url_error, llm_section,
};
pub use types::{
    ApiKey, ContentBlock, FinishReason, Message, Request, Response, Role, StreamEvent,
    ToolDefinition, ToolInput, ToolUse, Usage,
};

#[cfg(test)]
mod tests;
