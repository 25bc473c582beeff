//! The `"agent"` section of `config.json`: which agent runs workflows and how it is started.

use std::time::Duration;

use cp_base::Project;
use serde::{Deserialize, Serialize};

use crate::{AgentError, AgentKind};

/// The key of the section in `config.json`.
pub const AGENT_CONFIG_KEY: &str = "agent";

/// How to start and watch an external agent, e.g.
/// `{"agent": {"kind": "claude", "permission_mode": "acceptEdits", "context_window": 200000}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// The agent `context-pilot run` uses when neither `--agent` nor the workflow says.
    pub kind: Option<AgentKind>,
    /// The binary to run instead of `claude` / `gemini` / `codex` from `PATH`. Taken from the project's
    /// config only when the project is trusted (it is a command to run).
    pub command: Option<String>,
    /// Claude Code's `--permission-mode` (default `acceptEdits`); Gemini CLI's
    /// `--approval-mode` (default `yolo`, as a headless run cannot ask); Codex CLI's sandbox
    /// (`sandbox_mode`, default `danger-full-access`, with approvals off).
    pub permission_mode: Option<String>,
    /// More tools to allow without asking (Claude Code `--allowedTools`), e.g. `["Bash"]`.
    /// Context Pilot's MCP tools are always allowed.
    pub allowed_tools: Vec<String>,
    /// The model (`--model`); the agent's default when unset.
    pub model: Option<String>,
    /// The model's context window in tokens, when the model table and the agent do not know
    /// it (or to restart earlier).
    pub context_window: Option<u64>,
    /// Seconds a stopped agent gets to exit after SIGINT before its process group is killed.
    pub stop_grace_secs: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            kind: None,
            command: None,
            permission_mode: None,
            allowed_tools: Vec::new(),
            model: None,
            context_window: None,
            stop_grace_secs: 10,
        }
    }
}

impl AgentConfig {
    /// Reads the section (defaults when absent). A `command` from an untrusted project is
    /// dropped with a warning: a cloned repository must not choose what runs.
    pub fn load(project: &Project) -> Result<Self, AgentError> {
        let mut config: Self = project.config().section(AGENT_CONFIG_KEY)?;
        if config.command.is_some() && !project.is_trusted() {
            tracing::warn!(
                "ignoring agent.command from an untrusted project; run `context-pilot trust` to use it"
            );
            config.command = None;
        }
        Ok(config)
    }

    /// The settings for a workflow phase run by `agent` in a run whose agent is `run_agent`.
    /// The section describes one agent: the one its `kind` names, else the run's. Any other
    /// agent (a phase's own `agent:`) gets its defaults and only the settings tied to no CLI
    /// (`stop_grace_secs`): one CLI's model, binary, permission mode or window would be wrong
    /// for another (Gemini CLI asked for a Claude model fails every request).
    #[must_use]
    pub fn for_agent(self, agent: AgentKind, run_agent: AgentKind) -> Self {
        if agent == self.kind.unwrap_or(run_agent) {
            return self;
        }
        Self {
            kind: Some(agent),
            stop_grace_secs: self.stop_grace_secs,
            ..Self::default()
        }
    }

    /// The grace period after SIGINT.
    pub fn stop_grace(&self) -> Duration {
        Duration::from_secs(self.stop_grace_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_reads_with_defaults_and_rejects_unknown_keys() {
        let config: AgentConfig =
            serde_json::from_value(serde_json::json!({"kind": "claude", "context_window": 1000}))
                .unwrap();
        assert_eq!(config.kind.map(AgentKind::as_str), Some("claude"));
        assert_eq!(config.context_window, Some(1000));
        assert_eq!(config.stop_grace_secs, 10);
        assert!(serde_json::from_value::<AgentConfig>(serde_json::json!({"kinds": "x"})).is_err());
    }

    #[test]
    fn another_agent_than_the_sections_gets_its_defaults_and_the_grace_period() {
        let claude: AgentKind = "claude".parse().unwrap();
        let gemini: AgentKind = "gemini".parse().unwrap();
        let section: AgentConfig = serde_json::from_value(serde_json::json!({
            "command": "/opt/claude", "model": "claude-sonnet-4-5", "permission_mode": "plan",
            "allowed_tools": ["Bash"], "context_window": 1000, "stop_grace_secs": 3
        }))
        .unwrap();
        // Without `kind`, the section is the run's agent's.
        assert_eq!(section.clone().for_agent(claude, claude), section);
        let other = section.clone().for_agent(gemini, claude);
        assert_eq!(other.model, None);
        assert_eq!(other.command, None);
        assert_eq!(other.permission_mode, None);
        assert!(other.allowed_tools.is_empty());
        assert_eq!(other.context_window, None);
        assert_eq!(other.stop_grace_secs, 3);
        // With `kind`, it is that agent's, whatever the run's agent.
        let for_gemini = AgentConfig {
            kind: Some(gemini),
            ..section
        };
        assert_eq!(for_gemini.clone().for_agent(gemini, claude), for_gemini);
        assert_eq!(for_gemini.for_agent(claude, claude).model, None);
    }
}
