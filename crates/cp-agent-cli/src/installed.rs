//! Which agent CLIs this machine has: each agent of [`AGENT_CLIS`] looked for on `PATH`, with
//! the version it reports against the descriptor's minimum. `context-pilot doctor`, `init`
//! without an agent and the TUI's no-model screen all ask this.
//!
//! ```no_run
//! for presence in cp_agent_cli::look_for_agents() {
//!     println!("{}: {}", presence.agent.spec().display_name, presence.found);
//! }
//! ```

use std::fmt;
use std::path::PathBuf;

use crate::agent::AgentCli;
use crate::kind::AGENT_CLIS;
use crate::{AgentBinary, AgentError};

/// What was found of one agent CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Its program is not on `PATH`.
    Missing,
    /// On `PATH`, at a version the driver supports.
    Usable(AgentBinary),
    /// On `PATH`, but older than the descriptor's minimum.
    TooOld {
        path: PathBuf,
        version: String,
        needed: String,
    },
    /// On `PATH`, but `--version` failed or said something unexpected.
    Unreadable { path: PathBuf, detail: String },
}

impl Found {
    /// Whether the program is on `PATH` at all.
    pub fn installed(&self) -> bool {
        !matches!(self, Self::Missing)
    }

    /// The binary, when it can be used.
    pub fn usable(&self) -> Option<&AgentBinary> {
        match self {
            Self::Usable(binary) => Some(binary),
            _ => None,
        }
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => f.write_str("not on PATH"),
            Self::Usable(binary) => write!(f, "{} at {}", binary.version, binary.path.display()),
            Self::TooOld {
                path,
                version,
                needed,
            } => write!(
                f,
                "{version} at {} is too old ({needed} or newer is needed)",
                path.display()
            ),
            Self::Unreadable { path, detail } => {
                write!(
                    f,
                    "at {} did not report its version ({detail})",
                    path.display()
                )
            }
        }
    }
}

/// One agent of the table and what was found of it.
#[derive(Debug, Clone)]
pub struct Presence {
    pub agent: &'static dyn AgentCli,
    pub found: Found,
}

/// Every agent of [`AGENT_CLIS`], in the table's order, with what `PATH` holds of it. Runs
/// each installed one's `--version` (blocking: run it off the UI thread).
pub fn look_for_agents() -> Vec<Presence> {
    AGENT_CLIS
        .iter()
        .map(|agent| look_for(*agent, None))
        .collect()
}

/// What this machine has of `agent`: `command` (config's `agent.command`) when given, else
/// its program on `PATH`; its `--version` runs (blocking).
pub fn look_for(agent: &'static dyn AgentCli, command: Option<&str>) -> Presence {
    Presence {
        agent,
        found: found(agent.spec().locate(command)),
    }
}

fn found(located: Result<AgentBinary, AgentError>) -> Found {
    match located {
        Ok(binary) => Found::Usable(binary),
        Err(AgentError::TooOld {
            path,
            found,
            needed,
            ..
        }) => Found::TooOld {
            path,
            version: found,
            needed,
        },
        Err(AgentError::Version { path, detail, .. }) => Found::Unreadable { path, detail },
        Err(_) => Found::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::SPEC as CLAUDE;

    #[test]
    fn what_locate_says_becomes_what_was_found() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("claude");
        std::fs::write(&fake, "#!/bin/sh\necho '1.0.3 (Claude Code)'\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let old = found(CLAUDE.locate(fake.to_str()));
        assert_eq!(
            old.to_string(),
            format!(
                "1.0.3 at {} is too old (2.0.31 or newer is needed)",
                fake.display()
            )
        );
        assert!(old.installed() && old.usable().is_none());
        let missing = found(CLAUDE.locate(Some("/nonexistent/claude")));
        assert_eq!(missing, Found::Missing);
        assert!(!missing.installed());
    }
}
