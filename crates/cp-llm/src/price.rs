//! Model prices, for the estimated cost shown in the status bar and the session summary.
//!
//! A small built-in table in US dollars per million tokens, matched by model-name prefix (the
//! longest prefix wins, so `claude-opus-4-5` is not priced as `claude-opus-4`). The `llm.price`
//! object of config.json overrides it: `{"input": 3, "cached_input": 0.3, "cache_write": 3.75,
//! "output": 15}`. Figures are estimates: the provider's bill is authoritative.

use serde::{Deserialize, Serialize};

use super::types::Usage;

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Fresh (uncached) input.
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (Anthropic charges extra; OpenAI does not).
    pub cache_write: f64,
    /// Generated output.
    pub output: f64,
}

/// `(model prefix, input, cached input, cache write, output)`, per million tokens.
const TABLE: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 0.5, 6.25, 25.0),
    ("claude-opus-4", 15.0, 1.5, 18.75, 75.0),
    ("claude-sonnet-4", 3.0, 0.3, 3.75, 15.0),
    ("claude-3-7-sonnet", 3.0, 0.3, 3.75, 15.0),
    ("claude-haiku-4", 1.0, 0.1, 1.25, 5.0),
    ("claude-3-5-haiku", 0.8, 0.08, 1.0, 4.0),
    ("gpt-5-mini", 0.25, 0.025, 0.25, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.05, 0.4),
    ("gpt-5", 1.25, 0.125, 1.25, 10.0),
    ("gpt-4.1-mini", 0.4, 0.1, 0.4, 1.6),
    ("gpt-4.1", 2.0, 0.5, 2.0, 8.0),
    ("gpt-4o-mini", 0.15, 0.075, 0.15, 0.6),
    ("gpt-4o", 2.5, 1.25, 2.5, 10.0),
];

impl Price {
    /// The built-in price of `model`, if the table knows it.
    pub fn builtin(model: &str) -> Option<Self> {
        TABLE
            .iter()
            .filter(|(prefix, ..)| model.starts_with(prefix))
            .max_by_key(|(prefix, ..)| prefix.len())
            .map(|&(_, input, cached_input, cache_write, output)| Self {
                input,
                cached_input,
                cache_write,
                output,
            })
    }

    /// Estimated dollars for `usage`.
    pub fn cost(&self, usage: &Usage) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52"
        )]
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(usage.input_tokens, self.input)
            + per(usage.cache_read_tokens, self.cached_input)
            + per(usage.cache_creation_tokens, self.cache_write)
            + per(usage.output_tokens, self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(clippy::float_cmp, reason = "the table's exact literals")]
    fn longest_prefix_wins_and_unknown_models_have_no_price() {
        assert_eq!(
            Price::builtin("claude-opus-4-5-20251101").unwrap().input,
            5.0
        );
        assert_eq!(Price::builtin("claude-opus-4-1").unwrap().input, 15.0);
        assert_eq!(Price::builtin("gpt-4o-mini").unwrap().output, 0.6);
        assert!(Price::builtin("llama3.1:8b").is_none());
    }

    #[test]
    fn cost_counts_each_kind_of_token_at_its_price() {
        let price = Price::builtin("claude-sonnet-4-5").unwrap();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 2_000_000,
            cache_creation_tokens: 1_000_000,
        };
        // 3 + 1.5 + 0.6 + 3.75
        assert!((price.cost(&usage) - 8.85).abs() < 1e-9);
    }
}
