//! Scripted assistant turns, the provider-neutral input of the wire-format builders.

/// A scripted assistant turn: optional text, then tool calls.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// Assistant text (may be empty).
    pub text: String,
    /// Tool calls: id, name and the raw argument JSON text (may be invalid on purpose).
    pub tool_calls: Vec<(String, String, String)>,
    /// Prompt tokens reported.
    pub input_tokens: u64,
    /// Prompt tokens reported as cache reads.
    pub cache_read_tokens: u64,
    /// Prompt tokens reported as written to the cache (Anthropic only).
    pub cache_creation_tokens: u64,
    /// Generated tokens reported.
    pub output_tokens: u64,
    /// Stop reason to report instead of the natural one (e.g. `max_tokens` / `length`).
    pub stop_reason: Option<String>,
}

/// Realistic default usage figures of scripted turns.
pub const DEFAULT_INPUT_TOKENS: u64 = 1843;
/// Default generated-token count of scripted turns.
pub const DEFAULT_OUTPUT_TOKENS: u64 = 57;

impl Turn {
    /// A text-only turn.
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            input_tokens: DEFAULT_INPUT_TOKENS,
            output_tokens: DEFAULT_OUTPUT_TOKENS,
            ..Self::default()
        }
    }

    /// A turn of tool calls `(id, name, argument JSON)`.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Self {
        Self {
            tool_calls: calls
                .iter()
                .map(|(id, name, args)| ((*id).to_owned(), (*name).to_owned(), (*args).to_owned()))
                .collect(),
            ..Self::text("")
        }
    }

    /// Adds text before the tool calls.
    #[must_use]
    pub fn with_text(mut self, text: &str) -> Self {
        text.clone_into(&mut self.text);
        self
    }

    /// Sets the usage figures.
    #[must_use]
    pub fn with_usage(mut self, input: u64, cache_read: u64, output: u64) -> Self {
        (
            self.input_tokens,
            self.cache_read_tokens,
            self.output_tokens,
        ) = (input, cache_read, output);
        self
    }

    /// Sets the prompt tokens reported as written to the cache (Anthropic's
    /// `cache_creation_input_tokens`).
    #[must_use]
    pub fn with_cache_creation(mut self, tokens: u64) -> Self {
        self.cache_creation_tokens = tokens;
        self
    }

    /// Overrides the stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.to_owned());
        self
    }
}

/// Splits `text` into pieces of about `size` bytes on character boundaries, as models stream.
pub(super) fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}
