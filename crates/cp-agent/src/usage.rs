//! Token accounting: per turn, in total, and how full the context window is.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use cp_llm::{Price, Usage};

/// Running usage figures, shown in the status bar and used by the restart logic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageMeter {
    /// Prompt tokens (fresh + cached) and output tokens of the latest turn (all its requests).
    pub turn_in: u64,
    pub turn_out: u64,
    pub total_in: u64,
    pub total_out: u64,
    /// Of `turn_in` / `total_in`: tokens read from the provider's prompt cache.
    #[serde(default)]
    pub turn_cached: u64,
    #[serde(default)]
    pub total_cached: u64,
    /// Of `total_in`: tokens written to the prompt cache (Anthropic bills them extra).
    #[serde(default)]
    pub total_cache_write: u64,
    /// Estimated dollars of the latest turn and of the session (0 when the price is unknown).
    #[serde(default)]
    pub turn_cost: f64,
    #[serde(default)]
    pub total_cost: f64,
    /// Prompt size of the latest request.
    pub context_tokens: u64,
    pub context_window: u64,
    /// Tool calls made in this session (for the restart logic's fallback threshold).
    pub tool_calls: u64,
    /// The model's price, when known (built-in table or `llm.price`); not saved.
    #[serde(skip)]
    pub price: Option<Price>,
}

impl UsageMeter {
    pub fn new(context_window: u64) -> Self {
        Self {
            context_window,
            ..Self::default()
        }
    }

    /// A meter that also estimates cost at `price`.
    pub fn priced(context_window: u64, price: Option<Price>) -> Self {
        Self {
            price,
            ..Self::new(context_window)
        }
    }

    pub fn start_turn(&mut self) {
        self.turn_in = 0;
        self.turn_out = 0;
        self.turn_cached = 0;
        self.turn_cost = 0.0;
    }

    /// Adds one request's usage.
    pub fn record(&mut self, usage: &Usage) {
        let input = usage.context_tokens();
        self.turn_in += input;
        self.turn_out += usage.output_tokens;
        self.total_in += input;
        self.total_out += usage.output_tokens;
        self.turn_cached += usage.cache_read_tokens;
        self.total_cached += usage.cache_read_tokens;
        self.total_cache_write += usage.cache_creation_tokens;
        if let Some(price) = self.price {
            let cost = price.cost(usage);
            self.turn_cost += cost;
            self.total_cost += cost;
        }
        self.context_tokens = input + usage.output_tokens;
    }

    /// Context fill in percent of the window (0 when the window is unknown).
    pub fn context_percent(&self) -> f64 {
        if self.context_window == 0 {
            return 0.0;
        }
        // Token counts are far below 2^52, so the conversion is exact.
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52"
        )]
        let pct = self.context_tokens as f64 * 100.0 / self.context_window as f64;
        pct
    }

    /// For the status bar, per turn then per session:
    /// `turn in 12.3k (10.1k cached) out 300 ~$0.012 · session ~$0.41 · ctx 12%`.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "turn in {} ({} cached) out {}",
            short(self.turn_in),
            short(self.turn_cached),
            short(self.turn_out)
        );
        if self.price.is_some() {
            let _ = write!(
                text,
                " ~{} · session ~{}",
                dollars(self.turn_cost),
                dollars(self.total_cost)
            );
        }
        let _ = write!(text, " · ctx {:.0}%", self.context_percent());
        text
    }

    /// For narrow status bars, the last turn's tokens and whose each cost is:
    /// `turn in 23.0k out 1.0k 87% cached ~$0.024/turn ~$0.048/session ctx 11%`.
    pub fn compact_summary(&self) -> String {
        let cached_pct = (self.turn_cached * 100)
            .checked_div(self.turn_in)
            .unwrap_or_default();
        let mut text = format!(
            "turn in {} out {} {cached_pct}% cached",
            short(self.turn_in),
            short(self.turn_out)
        );
        if self.price.is_some() {
            let _ = write!(
                text,
                " ~{}/turn ~{}/session",
                dollars(self.turn_cost),
                dollars(self.total_cost)
            );
        }
        let _ = write!(text, " ctx {:.0}%", self.context_percent());
        text
    }

    /// The whole session: `session: in 120.3k (98.0k cached, 22.3k fresh, 4.1k cache write)
    /// out 5.2k · est. $0.41`.
    pub fn session_summary(&self) -> String {
        let mut text = format!(
            "session: in {} ({} cached, {} fresh, {} cache write) out {}",
            short(self.total_in),
            short(self.total_cached),
            short(self.total_in.saturating_sub(self.total_cached)),
            short(self.total_cache_write),
            short(self.total_out)
        );
        if self.price.is_some() {
            let _ = write!(text, " · est. {}", dollars(self.total_cost));
        } else {
            text.push_str(" · cost unknown for this model (set llm.price)");
        }
        text
    }
}

/// `$0.012` below ten cents, `$1.23` above.
fn dollars(amount: f64) -> String {
    if amount < 0.1 {
        format!("${amount:.3}")
    } else {
        format!("${amount:.2}")
    }
}

/// `950`, `12.3k`, `1.2M`: tenths computed in integers, so no float conversion is needed.
fn short(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{}.{}k", n / 1_000, n % 1_000 / 100),
        _ => format!("{}.{}M", n / 1_000_000, n % 1_000_000 / 100_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_and_computes_the_fill() {
        let mut meter = UsageMeter::new(1000);
        meter.start_turn();
        meter.record(&Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 50,
            cache_creation_tokens: 0,
        });
        meter.record(&Usage {
            input_tokens: 200,
            output_tokens: 30,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
        });
        assert_eq!(
            (meter.turn_in, meter.turn_out, meter.total_in),
            (350, 50, 350)
        );
        assert!((meter.context_percent() - 23.0).abs() < 1e-9);
        meter.start_turn();
        assert_eq!(meter.turn_in, 0);
        assert_eq!(meter.total_out, 50);
        assert_eq!(meter.summary(), "turn in 0 (0 cached) out 0 · ctx 23%");
    }

    #[test]
    fn cached_tokens_and_cost_per_turn_and_session() {
        let mut meter = UsageMeter::priced(200_000, Price::builtin("claude-sonnet-4-5"));
        let usage = Usage {
            input_tokens: 1_000,
            output_tokens: 500,
            cache_read_tokens: 20_000,
            cache_creation_tokens: 2_000,
        };
        meter.record(&usage);
        meter.start_turn();
        meter.record(&usage);
        // 1000*3 + 20000*0.3 + 2000*3.75 + 500*15 = 24000 per million: $0.024 a request.
        assert!((meter.turn_cost - 0.024).abs() < 1e-9);
        assert!((meter.total_cost - 0.048).abs() < 1e-9);
        assert_eq!(
            meter.summary(),
            "turn in 23.0k (20.0k cached) out 500 ~$0.024 · session ~$0.048 · ctx 12%"
        );
        assert_eq!(
            meter.compact_summary(),
            "turn in 23.0k out 500 86% cached ~$0.024/turn ~$0.048/session ctx 12%"
        );
        assert_eq!(
            meter.session_summary(),
            "session: in 46.0k (40.0k cached, 6.0k fresh, 4.0k cache write) out 1.0k · est. $0.048"
        );
    }
}
