//! The table of agent CLIs, and [`AgentKind`]: which agent drives a session (the built-in
//! loop, or one of the table's CLIs).

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::AgentError;
use crate::agent::AgentCli;
use crate::spec::{EditTool, HookEventSpec};

/// Every agent CLI Context Pilot drives, in the order help and messages list them. A new
/// agent is its folder (with `mod` in `lib.rs`) and one row here.
pub static AGENT_CLIS: &[&dyn AgentCli] = &[
    &crate::claude::Claude, // Claude Code
    &crate::gemini::Gemini, // Gemini CLI
    &crate::codex::Codex,   // Codex CLI
];

/// The name of the built-in agent loop.
const BUILTIN: &str = "builtin";

/// Which agent drives the sessions: `builtin` or the name of an agent CLI, on the command line
/// (`--agent`), in config.json (`agent.kind`) and in a workflow (`agent:`).
#[derive(Clone, Copy, Default)]
pub enum AgentKind {
    /// Context Pilot's own agent loop over an LLM provider.
    #[default]
    Builtin,
    /// One of [`AGENT_CLIS`].
    Cli(&'static dyn AgentCli),
}

impl AgentKind {
    /// The name used on the command line and in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Builtin => BUILTIN,
            Self::Cli(agent) => agent.spec().name,
        }
    }

    /// The agent CLI, unless this is the built-in loop.
    pub fn cli(self) -> Option<&'static dyn AgentCli> {
        match self {
            Self::Builtin => None,
            Self::Cli(agent) => Some(agent),
        }
    }

    /// The kind named exactly `name`.
    fn named(name: &str) -> Option<Self> {
        if name == BUILTIN {
            return Some(Self::Builtin);
        }
        AGENT_CLIS
            .iter()
            .find(|agent| agent.spec().name == name)
            .map(|agent| Self::Cli(*agent))
    }

    /// Every kind's name: `builtin`, then the table's.
    pub fn names() -> &'static [&'static str] {
        static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
        NAMES.get_or_init(|| {
            std::iter::once(BUILTIN)
                .chain(AGENT_CLIS.iter().map(|agent| agent.spec().name))
                .collect()
        })
    }
}

impl PartialEq for AgentKind {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for AgentKind {}

impl fmt::Debug for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin => f.write_str("Builtin"),
            Self::Cli(agent) => write!(f, "Cli({})", agent.spec().name),
        }
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AgentKind {
    type Err = AgentError;

    /// Any case, surrounding blanks ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::named(&s.trim().to_ascii_lowercase()).ok_or_else(|| AgentError::UnknownAgent {
            name: s.to_owned(),
            known: Self::names().join(", "),
        })
    }
}

impl Serialize for AgentKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AgentKind {
    /// Exactly a kind's name, as a derived enum reads it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::named(&name).ok_or_else(|| serde::de::Error::unknown_variant(&name, Self::names()))
    }
}

/// The agent CLI and its hook event named `name` (ours, e.g. `post-tool-use`, or the agent's,
/// e.g. `PostToolUse`).
pub fn hook_event(name: &str) -> Option<(&'static dyn AgentCli, &'static HookEventSpec)> {
    AGENT_CLIS.iter().find_map(|agent| {
        agent
            .spec()
            .hook_events
            .iter()
            .find(|event| event.cli_name == name || event.name == name)
            .map(|event| (*agent, event))
    })
}

/// The edit tool named `name`, of whichever agent has it.
pub fn edit_tool(name: &str) -> Option<&'static EditTool> {
    AGENT_CLIS.iter().find_map(|agent| {
        agent
            .spec()
            .edit_tools
            .iter()
            .find(|tool| tool.name == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::EditPaths;

    #[test]
    fn kinds_parse_from_names_and_reject_others() {
        assert_eq!("Claude".parse::<AgentKind>().unwrap().as_str(), "claude");
        assert_eq!("gemini".parse::<AgentKind>().unwrap().as_str(), "gemini");
        assert_eq!("builtin".parse::<AgentKind>().unwrap(), AgentKind::Builtin);
        assert_eq!("codex".parse::<AgentKind>().unwrap().as_str(), "codex");
        let err = "aider".parse::<AgentKind>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown agent \"aider\"; expected one of: builtin, claude, gemini, codex"
        );
    }

    #[test]
    fn config_reads_exact_names_as_a_derived_enum_did() {
        let kind: AgentKind = serde_json::from_value(serde_json::json!("gemini")).unwrap();
        assert_eq!(kind.as_str(), "gemini");
        assert_eq!(serde_json::to_value(kind).unwrap(), "gemini");
        let err = serde_json::from_value::<AgentKind>(serde_json::json!("Gemini"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "unknown variant `Gemini`, expected one of `builtin`, `claude`, `gemini`, `codex`"
        );
    }

    #[test]
    fn hook_events_and_edit_tools_are_found_by_either_name() {
        let (agent, event) = hook_event("AfterTool").unwrap();
        assert_eq!(
            (agent.spec().name, event.cli_name),
            ("gemini", "after-tool")
        );
        let (agent, event) = hook_event("stop").unwrap();
        assert_eq!((agent.spec().name, event.name), ("claude", "Stop"));
        assert!(hook_event("bogus").is_none());
        assert!(matches!(
            edit_tool("NotebookEdit").unwrap().paths,
            EditPaths::Keys(["notebook_path"])
        ));
        let (agent, event) = hook_event("codex-stop").unwrap();
        assert_eq!((agent.spec().name, event.name), ("codex", "Stop"));
        assert!(matches!(
            edit_tool("apply_patch").unwrap().paths,
            EditPaths::Parse(_)
        ));
        assert!(edit_tool("Read").is_none());
    }
}
