//! Typed failures of a provider call. Every message names the provider and says what to do.
//!
//! Whatever the error, the caller's conversation is untouched: a provider call only returns
//! content on success, so nothing partial is ever committed.

/// Why a provider call failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// 401/403: the key is missing, wrong or lacks permission.
    #[error("{provider}: authentication failed (HTTP {status}): {message}. Check {key_hint}.")]
    Auth {
        /// Provider label, e.g. `Anthropic`.
        provider: String,
        /// HTTP status.
        status: u16,
        /// The provider's own error message.
        message: String,
        /// What to check, e.g. `ANTHROPIC_API_KEY`.
        key_hint: &'static str,
    },
    /// Any other 4xx (400 invalid request, 404 unknown model, 413 too large, ...). Retrying the
    /// same request will not help.
    #[error("{provider}: request rejected (HTTP {status}): {message}")]
    Rejected {
        /// Provider label.
        provider: String,
        /// HTTP status.
        status: u16,
        /// The provider's own error message.
        message: String,
    },
    /// Rate limiting, overload, server errors or network errors that outlasted every retry.
    #[error("{provider}: unavailable after {attempts} attempts: {message}")]
    Unavailable {
        /// Provider label.
        provider: String,
        /// Attempts made.
        attempts: u32,
        /// Last HTTP status, if a response arrived.
        status: Option<u16>,
        /// Last failure, e.g. `HTTP 529: Overloaded` or `connection refused`.
        message: String,
    },
    /// The request could not be sent for a reason retrying cannot fix (invalid URL, TLS
    /// certificate rejected, ...).
    #[error("{provider}: could not send the request: {message}")]
    Connection {
        /// Provider label.
        provider: String,
        /// What failed.
        message: String,
    },
    /// The response stream ended or broke before the message was complete.
    #[error(
        "{provider}: the response stream was cut before the reply was complete ({detail}); \
         the partial reply was discarded, send again to retry"
    )]
    StreamCut {
        /// Provider label.
        provider: String,
        /// What was missing or which error broke the stream.
        detail: String,
    },
    /// The provider reported an error inside the stream (e.g. Anthropic `overloaded_error`).
    #[error("{provider}: error during the reply ({kind}): {message}")]
    StreamError {
        /// Provider label.
        provider: String,
        /// Error type as the provider names it.
        kind: String,
        /// The provider's own error message.
        message: String,
    },
    /// The stream carried data this client cannot understand.
    #[error("{provider}: malformed response: {detail}")]
    Protocol {
        /// Provider label.
        provider: String,
        /// What was wrong, with the offending data abbreviated.
        detail: String,
    },
    /// The cancel token was set.
    #[error("cancelled")]
    Cancelled,
}

impl LlmError {
    /// True when sending the same request again later may succeed (overload, rate limit,
    /// network trouble, a cut stream). The agent loop may offer a retry for these.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unavailable { .. } | Self::StreamCut { .. } => true,
            Self::StreamError { kind, .. } => {
                matches!(
                    kind.as_str(),
                    "overloaded_error" | "rate_limit_error" | "api_error"
                )
            }
            Self::Auth { .. }
            | Self::Rejected { .. }
            | Self::Connection { .. }
            | Self::Protocol { .. }
            | Self::Cancelled => false,
        }
    }
}

/// Shortens `text` to at most `max` characters for error messages, marking the cut.
pub(crate) fn abbreviate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviate_respects_char_boundaries() {
        assert_eq!(abbreviate("  héllo  ", 10), "héllo");
        assert_eq!(abbreviate("héllo", 2), "hé…");
    }

    #[test]
    fn auth_message_names_provider_and_key() {
        let err = LlmError::Auth {
            provider: "Anthropic".into(),
            status: 401,
            message: "invalid x-api-key".into(),
            key_hint: "ANTHROPIC_API_KEY",
        };
        let text = err.to_string();
        assert!(
            text.contains("Anthropic") && text.contains("invalid x-api-key"),
            "{text}"
        );
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
        assert!(!err.is_transient());
    }
}
