//! Token accounting: per turn, in total, and how full the context window is.

use serde::{Deserialize, Serialize};

use crate::llm::Usage;

/// Running usage figures, shown in the status bar and used by the restart logic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageMeter {
    /// Tokens in and out of the latest turn (all its requests).
    pub turn_in: u64,
    pub turn_out: u64,
    pub total_in: u64,
    pub total_out: u64,
    /// Prompt size of the latest request.
    pub context_tokens: u64,
    pub context_window: u64,
    /// Tool calls made in this session (for the restart logic's fallback threshold).
    pub tool_calls: u64,
}

impl UsageMeter {
    pub fn new(context_window: u64) -> Self {
        Self {
            context_window,
            ..Self::default()
        }
    }

    pub fn start_turn(&mut self) {
        self.turn_in = 0;
        self.turn_out = 0;
    }

    /// Adds one request's usage.
    pub fn record(&mut self, usage: &Usage) {
        let input = usage.context_tokens();
        self.turn_in += input;
        self.turn_out += usage.output_tokens;
        self.total_in += input;
        self.total_out += usage.output_tokens;
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

    /// `in 1.2k out 300 · total 5.1k/1.0k · ctx 12%`
    pub fn summary(&self) -> String {
        format!(
            "in {} out {} · ctx {:.0}%",
            short(self.turn_in),
            short(self.turn_out),
            self.context_percent()
        )
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
        assert_eq!(meter.summary(), "in 0 out 0 · ctx 23%");
    }
}
