//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with `stream: true`.
//!
//! Serves OpenAI, Ollama, vLLM, llama.cpp, OpenRouter and anything else speaking the format.
//! Each `data:` chunk carries `choices[0].delta` with `content` text and/or `tool_calls`
//! fragments keyed by `index` (id and name first, then `arguments` string pieces), then a
//! `finish_reason`, then (with `stream_options.include_usage`) a usage chunk, then
//! `data: [DONE]`. Servers differ in small ways; the decoder tolerates a missing `index`, a
//! missing `[DONE]` after `finish_reason`, and `finish_reason: "stop"` on tool calls.

mod decode;
mod request;

use super::config::ProviderConfig;
use super::error::LlmError;
use super::provider::Provider;
use super::transport::{HttpRequest, Transport};
use super::types::{Request, Response, StreamEvent};
use cp_base::CancelToken;
use decode::Decoder;
#[cfg(test)]
pub(super) use decode::decode_chunks;
use request::{TokensField, request_body};

/// A provider speaking OpenAI Chat Completions.
pub(super) struct OpenAi {
    config: ProviderConfig,
    transport: Transport,
}

impl OpenAi {
    /// A provider for `config` (whose kind is OpenAI).
    pub(super) fn new(config: ProviderConfig) -> Self {
        let transport = Transport::new(&config);
        Self { config, transport }
    }

    fn http_request(&self, request: &Request) -> Result<HttpRequest, LlmError> {
        let mut headers = vec![
            ("content-type", "application/json".to_owned()),
            ("accept", "text/event-stream".to_owned()),
        ];
        if let Some(key) = &self.config.api_key {
            headers.push(("authorization", format!("Bearer {}", key.expose())));
        }
        let tokens_field = if self.config.is_official_openai() {
            TokensField::MaxCompletionTokens
        } else {
            TokensField::MaxTokens
        };
        let body = request_body(request, tokens_field).map_err(|e| LlmError::Connection {
            provider: self.config.label(),
            message: format!("the request body could not be encoded as JSON: {e}"),
        })?;
        Ok(HttpRequest {
            url: format!("{}/chat/completions", self.config.base_url),
            headers,
            body,
        })
    }
}

impl Provider for OpenAi {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn stream(
        &self,
        request: &Request,
        cancel: &CancelToken,
        on_event: &mut dyn FnMut(StreamEvent),
    ) -> Result<Response, LlmError> {
        self.transport
            .stream(&self.http_request(request)?, Decoder::new, cancel, on_event)
    }
}
