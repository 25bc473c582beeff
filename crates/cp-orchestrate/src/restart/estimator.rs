//! How full a session is: context use from provider-reported usage, plus a tool-call count.

use serde::{Deserialize, Serialize};

use super::config::RestartConfig;

/// Which threshold ended a session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RestartTrigger {
    /// The latest request used `percent` % of the context window (threshold `threshold`).
    Context {
        /// Measured use.
        percent: f64,
        /// The configured threshold.
        threshold: f64,
    },
    /// The session made `calls` tool calls (threshold `threshold`).
    ToolCalls {
        /// Tool calls so far.
        calls: u64,
        /// The configured threshold.
        threshold: u64,
    },
}

impl std::fmt::Display for RestartTrigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Context { percent, threshold } => write!(
                f,
                "context at {percent:.1}% of the window (threshold {threshold}%)"
            ),
            Self::ToolCalls { calls, threshold } => {
                write!(f, "{calls} tool calls (threshold {threshold})")
            }
        }
    }
}

/// Tracks one session's context use and tool calls against the restart thresholds.
///
/// Context use is the input tokens of the *latest* request over the model's context window:
/// each request resends the whole conversation, so the latest one is the current size.
///
/// ```
/// use cp_orchestrate::{ContextEstimator, RestartConfig};
///
/// let mut estimator = ContextEstimator::new(&RestartConfig::default());
/// estimator.record_usage(150_000, 200_000);
/// assert!(!estimator.should_restart()); // 75 %
/// estimator.record_usage(161_000, 200_000);
/// assert!(estimator.should_restart()); // 80.5 %
/// ```
#[derive(Debug, Clone)]
pub struct ContextEstimator {
    context_threshold: f64,
    tool_call_threshold: u64,
    enabled: bool,
    input_tokens: u64,
    context_window: u64,
    tool_calls: u64,
}

impl ContextEstimator {
    /// A fresh estimator with the thresholds of `config`. When the config disables restarts
    /// (threshold ≥ 100 or `max_restarts` 0) it never asks for one.
    pub fn new(config: &RestartConfig) -> Self {
        Self {
            context_threshold: config.context_threshold,
            tool_call_threshold: config.tool_call_threshold,
            enabled: config.restarts_enabled(),
            input_tokens: 0,
            context_window: 0,
            tool_calls: 0,
        }
    }

    /// Records the usage the provider reported for the latest request. A window of 0 (unknown
    /// model) leaves the context estimate unknown; the tool-call fallback still applies.
    pub fn record_usage(&mut self, input_tokens: u64, context_window: u64) {
        self.input_tokens = input_tokens;
        self.context_window = context_window;
    }

    /// Counts `calls` more tool calls.
    pub fn record_tool_calls(&mut self, calls: u64) {
        self.tool_calls = self.tool_calls.saturating_add(calls);
    }

    /// The latest request's share of the context window in percent, if known.
    pub fn context_percent(&self) -> Option<f64> {
        #[expect(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52; a percentage needs no more precision"
        )]
        (self.context_window > 0)
            .then(|| self.input_tokens as f64 * 100.0 / self.context_window as f64)
    }

    /// Tool calls counted so far.
    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    /// Which threshold is reached, if any (context first).
    pub fn trigger(&self) -> Option<RestartTrigger> {
        if !self.enabled {
            return None;
        }
        if let Some(percent) = self.context_percent()
            && percent >= self.context_threshold
        {
            return Some(RestartTrigger::Context {
                percent,
                threshold: self.context_threshold,
            });
        }
        (self.tool_call_threshold > 0 && self.tool_calls >= self.tool_call_threshold).then_some(
            RestartTrigger::ToolCalls {
                calls: self.tool_calls,
                threshold: self.tool_call_threshold,
            },
        )
    }

    /// True once either threshold is reached (and restarts are enabled).
    pub fn should_restart(&self) -> bool {
        self.trigger().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(threshold: f64, calls: u64, max: u32) -> RestartConfig {
        RestartConfig {
            context_threshold: threshold,
            tool_call_threshold: calls,
            max_restarts: max,
            ..RestartConfig::default()
        }
    }

    #[test]
    fn context_threshold_is_inclusive_and_uses_the_latest_request() {
        let mut e = ContextEstimator::new(&config(80.0, 100, 3));
        e.record_usage(79_999, 100_000);
        assert!(!e.should_restart());
        e.record_usage(80_000, 100_000);
        assert!(matches!(
            e.trigger(),
            Some(RestartTrigger::Context { percent, .. }) if (percent - 80.0).abs() < 1e-9
        ));
        // A smaller later request (after the provider compacted, say) clears it.
        e.record_usage(10_000, 100_000);
        assert!(!e.should_restart());
    }

    #[test]
    fn tool_calls_are_a_fallback_and_zero_disables_them() {
        let mut e = ContextEstimator::new(&config(80.0, 3, 3));
        e.record_tool_calls(2);
        assert!(!e.should_restart());
        e.record_tool_calls(1);
        assert_eq!(
            e.trigger(),
            Some(RestartTrigger::ToolCalls {
                calls: 3,
                threshold: 3
            })
        );
        let mut off = ContextEstimator::new(&config(80.0, 0, 3));
        off.record_tool_calls(1000);
        assert!(!off.should_restart());
    }

    #[test]
    fn unknown_window_gives_no_context_estimate() {
        let mut e = ContextEstimator::new(&config(80.0, 100, 3));
        e.record_usage(1_000_000, 0);
        assert_eq!(e.context_percent(), None);
        assert!(!e.should_restart());
    }

    #[test]
    fn disabled_configs_never_trigger() {
        for c in [config(100.0, 1, 3), config(150.0, 1, 3), config(80.0, 1, 0)] {
            let mut e = ContextEstimator::new(&c);
            e.record_usage(99, 100);
            e.record_tool_calls(50);
            assert!(!e.should_restart(), "{c:?}");
        }
    }
}
