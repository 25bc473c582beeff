//! The `"checkpoint"` section of `.context-pilot/config.json`.

use cp_base::Project;
// The largest accepted `max_blocks`: beyond it an agent that cannot commit burns turns.
use cp_orchestrate::MAX_MAX_BLOCKS;
use serde::{Deserialize, Serialize};

use crate::error::CheckpointError;

/// Default limit for one test run, in seconds (30 s).
pub const DEFAULT_TEST_TIMEOUT_SECS: u64 = 30;

/// The most a learned limit grows to, in seconds (10 minutes): without a configured
/// `timeout_secs`, a run may take twice the suite's usual time, up to this.
pub const MAX_LEARNED_TIMEOUT_SECS: u64 = 600;

/// Default quiet time before a warm run starts, in milliseconds.
pub const DEFAULT_WARM_QUIET_MS: u64 = 500;

/// How many times in a row the stop gate may block one agent session by default.
pub const DEFAULT_MAX_BLOCKS: u32 = 3;

/// The built-in category of Context Pilot's own configuration files.
const CONTEXT_PILOT_CONFIG: &str = "context-pilot config";

/// Key of the stop gate section in `config.json`.
pub const CONFIG_KEY: &str = "checkpoint";

/// How the stop gate sorts changed files, which tests it runs, and what it says.
///
/// Every field is optional. With no section at all the stop gate still works: every changed
/// file except documentation (`*.md`, `*.txt`, `docs/**`) and Context Pilot's own
/// configuration counts as code and is gated, and the test command is what the project
/// declares (a Makefile's `test` target, `package.json`'s `test` script, tox's commands, a
/// nox `tests` session, `runtests.py`), else a guess from its manifest (`Cargo.toml` →
/// `cargo test --no-fail-fast`, `pyproject.toml`/`setup.py` or a `tests/` folder of pytest
/// files → `pytest`, `go.mod` → `go test ./...`); in a repository whose root is no project,
/// from each changed file's nearest project, whose tests run on their own.
///
/// Patterns are gitignore-style: a pattern without `/` (`*.py`) matches at any depth, one
/// with `/` (`src/**/*.py`) is anchored at the repository root, and a directory pattern
/// (`docs`, `docs/`) matches everything below it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopGateConfig {
    /// File categories. Empty means the built-in rules (code vs. documentation).
    #[serde(default)]
    pub rules: Vec<StopRule>,
    /// The test run. Absent means detect the command; an empty `command` disables tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestConfig>,
    /// What the stop gate says when nothing code-related changed.
    #[serde(default = "default_capture_only_message")]
    pub capture_only_message: String,
    /// How many stops in a row one agent session may be blocked (verification message, red
    /// tests, commit gate). Then the agent may stop and the person is told what is left.
    #[serde(default = "default_max_blocks")]
    pub max_blocks: u32,
    /// Warm runs: the tests start in the background once the agent's edits settle, and a stop
    /// on the very same tree takes their verdict without waiting.
    #[serde(default)]
    pub warm: WarmConfig,
}

/// When warm runs start. Every key is optional on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmConfig {
    /// Whether edits start warm runs (on by default).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// How long no edit must come before a warm run starts, in milliseconds.
    #[serde(default = "default_quiet_ms")]
    pub quiet_ms: u64,
}

impl Default for WarmConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            quiet_ms: DEFAULT_WARM_QUIET_MS,
        }
    }
}

fn default_true() -> bool {
    true
}

fn default_quiet_ms() -> u64 {
    DEFAULT_WARM_QUIET_MS
}

/// One category of files, with what the agent must do when such a file changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopRule {
    /// Category name shown in the message and the panel, e.g. `daemon code`.
    pub name: String,
    /// Files in the category. `!pattern` here works like an `exclude` entry.
    #[serde(default)]
    pub include: Vec<String>,
    /// Files left out of the category even though `include` matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// What to tell the agent, e.g. "Run `make restart` then `make status`". Identical
    /// instructions of several categories are given once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Whether such files must be committed before the second stop passes.
    #[serde(default)]
    pub gated: bool,
}

/// When and how tests run. Every key is optional on its own: `{"timeout_secs": 120}` keeps
/// the detected command and only raises its limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestConfig {
    /// Changed files that trigger the run. Empty means any code-related change.
    #[serde(default)]
    pub include: Vec<String>,
    /// Shell command (`sh -c`) run in the project root. Absent: detected from the project.
    /// Empty: no test run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Limit for the run; on expiry the whole process group is killed. Absent: 30 s, or
    /// twice the suite's usual time when that is longer (at most 10 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Whether failures that were already failing at the session's base hold the agent too.
    /// Off: when the base's verdict is known, only new failures hold it, and the old ones are
    /// named "already failing before this session".
    #[serde(default)]
    pub hold_on_existing_failures: bool,
}

fn default_max_blocks() -> u32 {
    DEFAULT_MAX_BLOCKS
}

fn default_capture_only_message() -> String {
    "Stop gate: no code changed this turn, only documentation or notes. Before you stop, \
     capture anything worth keeping (decisions, follow-ups, open questions) in the project's \
     notes. No tests or restarts are needed."
        .to_owned()
}

impl Default for StopGateConfig {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            tests: None,
            capture_only_message: default_capture_only_message(),
            max_blocks: DEFAULT_MAX_BLOCKS,
            warm: WarmConfig::default(),
        }
    }
}

impl StopGateConfig {
    /// Whether failures already failing at the session's base hold the agent too
    /// (`tests.hold_on_existing_failures`).
    pub fn hold_on_existing_failures(&self) -> bool {
        self.tests
            .as_ref()
            .is_some_and(|t| t.hold_on_existing_failures)
    }

    /// Reads the `"checkpoint"` section of the project's `config.json`; missing means default.
    pub fn load(project: &Project) -> Result<Self, CheckpointError> {
        let config: Self = project.config().section(CONFIG_KEY)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks the values serde cannot: the test timeout and the block limit.
    pub fn validate(&self) -> Result<(), CheckpointError> {
        if let Some(tests) = &self.tests
            && tests.timeout_secs == Some(0)
        {
            return Err(CheckpointError::InvalidConfig(
                "tests.timeout_secs is 0; give the limit in seconds, e.g. 30".into(),
            ));
        }
        if self.max_blocks == 0 || self.max_blocks > MAX_MAX_BLOCKS {
            return Err(CheckpointError::InvalidConfig(format!(
                "max_blocks is {}; give how many stops in a row may be blocked, from 1 to \
                 {MAX_MAX_BLOCKS}, e.g. \"max_blocks\": {DEFAULT_MAX_BLOCKS}",
                self.max_blocks
            )));
        }
        Ok(())
    }

    /// The rules used when none are configured: documentation is not code, the rest is
    /// code and gated. Host records (`.context-pilot/handoffs/`, `runs/`) are not code.
    /// Context Pilot's own configuration (`.context-pilot/config.json`, `scripts/`,
    /// `workflows/`) is listed in a category of its own, neither code (it runs no tests) nor
    /// gated: it is the person's setup, often changed through Context Pilot's tools (a
    /// callback the agent made), and the person decides when to commit it.
    pub fn builtin_rules() -> Vec<StopRule> {
        let docs: Vec<String> = ["*.md", "*.txt", "docs/"]
            .into_iter()
            .map(String::from)
            .collect();
        let own_config: Vec<String> = [
            ".context-pilot/config.json",
            ".context-pilot/scripts/",
            ".context-pilot/workflows/",
        ]
        .into_iter()
        .map(|p| format!("**/{p}"))
        .collect();
        let mut not_code = docs.clone();
        not_code.extend(
            [
                ".context-pilot/handoffs/",
                ".context-pilot/runs/",
                ".context-pilot/.gitignore",
            ]
            .into_iter()
            .map(|p| format!("**/{p}")),
        );
        not_code.extend(own_config.iter().cloned());
        vec![
            StopRule {
                name: "code".into(),
                include: vec!["*".into()],
                exclude: not_code,
                instruction: None,
                gated: true,
            },
            StopRule {
                name: "docs".into(),
                include: docs,
                exclude: Vec::new(),
                instruction: None,
                gated: false,
            },
            StopRule {
                name: CONTEXT_PILOT_CONFIG.into(),
                include: own_config,
                exclude: Vec::new(),
                instruction: None,
                gated: false,
            },
        ]
    }

    /// Seed 000's categories, written for a generic Python service laid out as `src/` (the
    /// daemon, with `src/hooks/receiver.py` and the TUI in `src/cli/tui/`) and `tests/`.
    /// The same preset ships as `presets/seed000.json`; adapt names, paths and commands.
    pub fn example_preset() -> Self {
        fn rule(name: &str, include: &[&str], exclude: &[&str]) -> StopRule {
            StopRule {
                name: name.into(),
                include: include.iter().map(|s| (*s).to_owned()).collect(),
                exclude: exclude.iter().map(|s| (*s).to_owned()).collect(),
                instruction: None,
                gated: false,
            }
        }
        let restart = Some("Run `make restart` then `make status`".to_owned());
        Self {
            rules: vec![
                StopRule {
                    instruction: restart.clone(),
                    gated: true,
                    ..rule(
                        "daemon code",
                        &["src/**/*.py"],
                        &["src/hooks/receiver.py", "src/cli/tui/"],
                    )
                },
                // Hook code auto-reloads: gated, but nothing to do.
                StopRule {
                    gated: true,
                    ..rule("hook code", &["src/hooks/receiver.py"], &[])
                },
                StopRule {
                    instruction: Some(
                        "Reload the TUI: run `pkill -SIGUSR2 -f -- '-m app.cli.tui$'`".to_owned(),
                    ),
                    gated: true,
                    ..rule("TUI code", &["src/cli/tui/"], &[])
                },
                // Tests need nothing beyond the test run itself.
                StopRule {
                    gated: true,
                    ..rule("tests", &["tests/**/*.py"], &[])
                },
                StopRule {
                    instruction: Some("Run agent-restart to reload artifacts".to_owned()),
                    ..rule(
                        "agent artifacts",
                        &[".claude/agents/", ".claude/commands/", ".claude/skills/"],
                        &[],
                    )
                },
                StopRule {
                    instruction: restart,
                    gated: true,
                    ..rule("config", &["/config.yml"], &[])
                },
                // Docs are synced by a pre-commit hook: listed, never gated, no instruction.
                rule(
                    "docs",
                    &["*.md", "docs/", "todos/", "ideas/"],
                    &[".claude/agents/", ".claude/commands/", ".claude/skills/"],
                ),
            ],
            tests: Some(TestConfig {
                include: vec!["*.py".into()],
                command: Some("pytest tests/unit/ -x -q".into()),
                timeout_secs: Some(DEFAULT_TEST_TIMEOUT_SECS),
                hold_on_existing_failures: false,
            }),
            capture_only_message: default_capture_only_message(),
            max_blocks: DEFAULT_MAX_BLOCKS,
            warm: WarmConfig::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_preset_file_matches_example_preset() {
        let text = include_str!("../../presets/seed000.json");
        let parsed: StopGateConfig = serde_json::from_str(text).unwrap();
        assert_eq!(parsed, StopGateConfig::example_preset());
    }

    #[test]
    fn empty_section_is_the_default() {
        let parsed: StopGateConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(parsed, StopGateConfig::default());
        let tests: TestConfig = serde_json::from_str(r#"{"command": "make test"}"#).unwrap();
        assert_eq!(tests.timeout_secs, None);
        assert!(tests.include.is_empty());
    }

    /// Every key of the section, from a value with all of them set.
    fn every_key() -> Vec<String> {
        let mut config = StopGateConfig::example_preset();
        config.rules[0].exclude = vec!["x".into()];
        config.rules[0].instruction = Some("x".into());
        let value = serde_json::to_value(&config).unwrap();
        let mut keys = Vec::new();
        for (key, inner) in value.as_object().unwrap() {
            keys.push(key.clone());
            let nested = match inner {
                serde_json::Value::Array(items) => items.first().and_then(|i| i.as_object()),
                other => other.as_object(),
            };
            let sep = if inner.is_array() { "[]." } else { "." };
            for sub in nested.into_iter().flat_map(|o| o.keys()) {
                keys.push(format!("{key}{sep}{sub}"));
            }
        }
        keys
    }

    #[test]
    fn the_guide_names_every_setting_with_its_default() {
        let guide = include_str!("../../../../docs/guide/stop-gate.md");
        let keys = every_key();
        assert!(keys.len() >= 14, "{keys:?}");
        for key in keys {
            let item = format!("\n- `{key}`\n  - default: ");
            assert!(
                guide.contains(&item),
                "docs/guide/stop-gate.md's settings lack `{key}` with its default"
            );
        }
        assert!(guide.contains(&format!("default: `{DEFAULT_TEST_TIMEOUT_SECS}`, or twice")));
        assert!(guide.contains(&format!("default: `{DEFAULT_WARM_QUIET_MS}`\n")));
        assert!(guide.contains(&format!(
            "default: `{DEFAULT_MAX_BLOCKS}` (1 to {MAX_MAX_BLOCKS})"
        )));
    }

    #[test]
    fn each_test_key_is_optional_on_its_own() {
        // Issue 41: this alone switched the whole stop gate off ("missing field `command`").
        let parsed: StopGateConfig =
            serde_json::from_str(r#"{"tests": {"timeout_secs": 120}}"#).unwrap();
        let tests = parsed.tests.unwrap();
        assert_eq!((tests.command, tests.timeout_secs), (None, Some(120)));
        let include: TestConfig = serde_json::from_str(r#"{"include": ["*.py"]}"#).unwrap();
        assert_eq!((include.command, include.timeout_secs), (None, None));
        let warm: StopGateConfig = serde_json::from_str(r#"{"warm": {"quiet_ms": 900}}"#).unwrap();
        assert_eq!(
            warm.warm,
            WarmConfig {
                enabled: true,
                quiet_ms: 900
            }
        );
        let off: StopGateConfig = serde_json::from_str(r#"{"warm": {"enabled": false}}"#).unwrap();
        assert!(!off.warm.enabled);
        assert_eq!(off.warm.quiet_ms, DEFAULT_WARM_QUIET_MS);
        let off: TestConfig = serde_json::from_str(r#"{"command": ""}"#).unwrap();
        assert_eq!(off.command.as_deref(), Some(""));
    }

    #[test]
    fn misspelled_keys_are_rejected() {
        let err = serde_json::from_str::<StopGateConfig>(r#"{"rule": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `rule`"), "{err}");
    }

    #[test]
    fn load_reads_the_checkpoint_section_and_names_the_file_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        assert_eq!(
            StopGateConfig::load(&project).unwrap(),
            StopGateConfig::default()
        );
        std::fs::create_dir_all(project.dir()).unwrap();
        std::fs::write(
            project.config().path(),
            r#"{"checkpoint": {"tests": {"command": "make check", "timeout_secs": 5}}}"#,
        )
        .unwrap();
        let config = StopGateConfig::load(&project).unwrap();
        assert_eq!(config.tests.unwrap().timeout_secs, Some(5));
        std::fs::write(project.config().path(), r#"{"checkpoint": {"rules": 3}}"#).unwrap();
        let err = StopGateConfig::load(&project).unwrap_err().to_string();
        assert!(
            err.contains("config.json") && err.contains("checkpoint"),
            "{err}"
        );
    }

    #[test]
    fn max_blocks_defaults_to_three_and_is_validated_on_load() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path());
        std::fs::create_dir_all(project.dir()).unwrap();
        std::fs::write(
            project.config().path(),
            r#"{"checkpoint": {"max_blocks": 2}}"#,
        )
        .unwrap();
        assert_eq!(StopGateConfig::load(&project).unwrap().max_blocks, 2);
        assert_eq!(StopGateConfig::default().max_blocks, 3);
        for bad in ["0", "21"] {
            std::fs::write(
                project.config().path(),
                format!(r#"{{"checkpoint": {{"max_blocks": {bad}}}}}"#),
            )
            .unwrap();
            let err = StopGateConfig::load(&project).unwrap_err().to_string();
            assert!(err.contains(&format!("max_blocks is {bad}")), "{err}");
            assert!(err.contains("from 1 to 20"), "{err}");
        }
        std::fs::write(
            project.config().path(),
            r#"{"checkpoint": {"max_blocks": -1}}"#,
        )
        .unwrap();
        assert!(StopGateConfig::load(&project).is_err());
    }
}
