//! Picks the client for a configuration's wire format.

use super::anthropic::Anthropic;
use super::config::{ProviderConfig, ProviderKind};
use super::openai::OpenAi;
use super::provider::Provider;

/// Builds the provider for `config`.
pub fn connect(config: ProviderConfig) -> Box<dyn Provider> {
    match config.kind {
        ProviderKind::Anthropic => Box::new(Anthropic::new(config)),
        ProviderKind::OpenAi => Box::new(OpenAi::new(config)),
    }
}
