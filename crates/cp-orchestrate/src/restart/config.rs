//! The restart policy: the `"restart"` section of `config.json`, the CLI overrides, and the
//! help text the binary shows for them.

use cp_base::Project;
use serde::{Deserialize, Serialize};

use super::error::RestartError;

/// Key of the restart section in `.context-pilot/config.json`.
pub const RESTART_CONFIG_KEY: &str = "restart";

/// Long help for the restart flags of `context-pilot run` (usable as clap `long_help` or
/// `after_long_help`).
pub const RESTART_HELP: &str = "\
Smart restart: when a session's context fills up, Context Pilot stops it gracefully after the
current tool batch, asks the agent for a handoff (Checkpoint_handoff), commits the work, and
starts a fresh session whose prompt is the handoff followed by the original prompt.

Flags override the \"restart\" section of .context-pilot/config.json:
  --context-threshold PCT    restart when the last request used PCT % of the model's context
                             window (default 80; 100 or more disables restarts)
  --tool-call-threshold N    fallback: restart after N tool calls in one session
                             (default 100; 0 disables the fallback)
  --max-restarts N           fail the phase when it needs more than N restarts
                             (default 3; 0 disables restarts)
  --no-auto-commit           do not commit before restarts and after phases
  --allow-dirty              start even if the work tree has uncommitted changes

Config (.context-pilot/config.json):
  \"restart\": {\"context_threshold\": 80.0, \"tool_call_threshold\": 100, \"max_restarts\": 3,
              \"auto_commit\": true, \"commit_on_failure\": false, \"allow_dirty\": false,
              \"commit_as_context_pilot\": false}
  commit_as_context_pilot: when git has no user.name/user.email, auto-commit as
  \"Context Pilot <context-pilot@localhost>\" instead of refusing to start

Examples:
  context-pilot run .context-pilot/workflows/feature.yaml
  context-pilot run feature.yaml --context-threshold 90
  context-pilot run feature.yaml --no-auto-commit --allow-dirty
  context-pilot run feature.yaml --max-restarts 0        # one-shot, never restart

If a phase hits the limit more than --max-restarts times, the run fails: split the phase into
smaller phases or raise --max-restarts.";

/// The restart policy, stored as the `"restart"` section of `config.json`.
///
/// Every field is optional in the file; a missing section gives the defaults:
///
/// ```json
/// "restart": {
///   "context_threshold": 80.0,
///   "tool_call_threshold": 100,
///   "max_restarts": 3,
///   "auto_commit": true,
///   "commit_on_failure": false,
///   "allow_dirty": false,
///   "commit_as_context_pilot": false
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is an independent on/off key of config.json, written there as a JSON boolean"
)]
pub struct RestartConfig {
    /// Restart when the input tokens of the latest request reach this percentage of the
    /// model's context window. 100 or more disables restarts altogether (the documented off
    /// switch), including the tool-call fallback.
    pub context_threshold: f64,
    /// Fallback for providers that report no usage: restart after this many tool calls in one
    /// session. 0 disables only this fallback.
    pub tool_call_threshold: u64,
    /// How many restarts one phase may use; one more fails the phase. 0 disables restarts.
    pub max_restarts: u32,
    /// Commit everything (`git add -A`) before each restart and after each phase, so every
    /// fresh session starts from a commit.
    pub auto_commit: bool,
    /// Also commit when a phase fails (by default failed work stays uncommitted for review).
    pub commit_on_failure: bool,
    /// Start even when the work tree has uncommitted changes. Without it, auto-commit refuses
    /// to start on a dirty tree, because it would sweep those changes into its commits.
    pub allow_dirty: bool,
    /// When git has no identity (`user.name` / `user.email`), auto-commit as
    /// `Context Pilot <context-pilot@localhost>` instead of refusing to start. Git's own
    /// identity always wins when there is one.
    pub commit_as_context_pilot: bool,
}

impl Default for RestartConfig {
    fn default() -> Self {
        Self {
            context_threshold: 80.0,
            tool_call_threshold: 100,
            max_restarts: 3,
            auto_commit: true,
            commit_on_failure: false,
            allow_dirty: false,
            commit_as_context_pilot: false,
        }
    }
}

impl RestartConfig {
    /// Reads the `"restart"` section of the project's `config.json` (defaults if absent) and
    /// validates it.
    pub fn load(project: &Project) -> Result<Self, RestartError> {
        let config: Self = project.config().section(RESTART_CONFIG_KEY)?;
        config.validate()?;
        Ok(config)
    }

    /// Rejects values that cannot mean anything: a threshold that is not a positive number.
    pub fn validate(&self) -> Result<(), RestartError> {
        if !self.context_threshold.is_finite() || self.context_threshold <= 0.0 {
            return Err(RestartError::InvalidConfig(format!(
                "context_threshold is {}; give a percentage above 0, e.g. 80 (100 disables \
                 restarts)",
                self.context_threshold
            )));
        }
        Ok(())
    }

    /// Whether sessions may be restarted at all: false when `context_threshold` is 100 or
    /// more, or `max_restarts` is 0.
    pub fn restarts_enabled(&self) -> bool {
        self.context_threshold < 100.0 && self.max_restarts > 0
    }

    /// This config with the flags in `overrides` applied; flags win over the file.
    #[must_use]
    pub fn with_overrides(mut self, overrides: &RestartOverrides) -> Self {
        if let Some(threshold) = overrides.context_threshold {
            self.context_threshold = threshold;
        }
        if let Some(calls) = overrides.tool_call_threshold {
            self.tool_call_threshold = calls;
        }
        if let Some(max) = overrides.max_restarts {
            self.max_restarts = max;
        }
        if overrides.no_auto_commit {
            self.auto_commit = false;
        }
        if overrides.allow_dirty {
            self.allow_dirty = true;
        }
        self
    }

    /// Loads the project's config, applies `overrides` and validates the result.
    pub fn resolve(project: &Project, overrides: &RestartOverrides) -> Result<Self, RestartError> {
        let config: Self = project.config().section(RESTART_CONFIG_KEY)?;
        let merged = config.with_overrides(overrides);
        merged.validate()?;
        Ok(merged)
    }
}

/// The restart flags of `context-pilot run`, as clap fills them. `None`/`false` means "not
/// given": the config value stays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestartOverrides {
    /// `--context-threshold PCT`
    pub context_threshold: Option<f64>,
    /// `--tool-call-threshold N`
    pub tool_call_threshold: Option<u64>,
    /// `--max-restarts N`
    pub max_restarts: Option<u32>,
    /// `--no-auto-commit`
    pub no_auto_commit: bool,
    /// `--allow-dirty`
    pub allow_dirty: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_seed_003() {
        let c = RestartConfig::default();
        assert!((c.context_threshold - 80.0).abs() < f64::EPSILON);
        assert_eq!(c.tool_call_threshold, 100);
        assert_eq!(c.max_restarts, 3);
        assert!(c.auto_commit && !c.commit_on_failure && !c.allow_dirty);
        assert!(c.restarts_enabled());
    }

    #[test]
    fn partial_section_keeps_defaults_and_unknown_keys_are_rejected() {
        let c: RestartConfig = serde_json::from_str(r#"{"max_restarts": 5}"#).unwrap();
        assert_eq!(c.max_restarts, 5);
        assert_eq!(c.tool_call_threshold, 100);
        let err = serde_json::from_str::<RestartConfig>(r#"{"max_restart": 5}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("max_restart") && err.contains("max_restarts"),
            "{err}"
        );
    }

    #[test]
    fn flags_override_only_what_they_set() {
        let file = RestartConfig {
            max_restarts: 7,
            commit_on_failure: true,
            ..RestartConfig::default()
        };
        let merged = file.clone().with_overrides(&RestartOverrides {
            context_threshold: Some(90.0),
            no_auto_commit: true,
            ..RestartOverrides::default()
        });
        assert!((merged.context_threshold - 90.0).abs() < f64::EPSILON);
        assert_eq!(merged.max_restarts, 7);
        assert!(!merged.auto_commit && merged.commit_on_failure);
        assert_eq!(
            file.with_overrides(&RestartOverrides::default())
                .max_restarts,
            7
        );
    }

    #[test]
    fn threshold_100_or_zero_restarts_disable() {
        let off = RestartConfig {
            context_threshold: 100.0,
            ..RestartConfig::default()
        };
        assert!(!off.restarts_enabled());
        let off = RestartConfig {
            max_restarts: 0,
            ..RestartConfig::default()
        };
        assert!(!off.restarts_enabled());
    }

    #[test]
    fn nonsense_threshold_is_rejected_with_an_example() {
        for bad in [0.0, -5.0, f64::NAN] {
            let c = RestartConfig {
                context_threshold: bad,
                ..RestartConfig::default()
            };
            let err = c.validate().unwrap_err().to_string();
            assert!(err.contains("e.g. 80"), "{err}");
        }
    }
}
