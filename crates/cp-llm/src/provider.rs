//! The one trait every LLM client implements, so the agent loop never knows which wire format
//! it is talking.

use super::config::ProviderConfig;
use super::error::LlmError;
use super::types::{Request, Response, StreamEvent};
use cp_base::CancelToken;

/// A model endpoint. Object-safe, `Send + Sync`: share it as `Arc<dyn Provider>` and call it
/// from a worker thread.
pub trait Provider: Send + Sync {
    /// The configuration this provider was built from (model, context window, limits).
    fn config(&self) -> &ProviderConfig;

    /// Sends `request` and streams the reply: `on_event` sees text and tool calls as they
    /// arrive (and retries before anything arrived); the returned [`Response`] is the
    /// complete turn. Transient failures are retried per the config's [`RetryPolicy`].
    ///
    /// [`RetryPolicy`]: crate::RetryPolicy
    fn stream(
        &self,
        request: &Request,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError>;
}
