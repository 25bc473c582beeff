//! Each agent CLI, with its version against its descriptor's minimum: the one config's
//! `agent.kind` names at its `agent.command` when that is set (as runs and the TUI start it),
//! every other on `PATH`. An agent that is not installed is not a problem; one too old to
//! use is, and so is an `agent.command` that is not there.

use cp_agent_cli::{AGENT_CLIS, AgentConfig, AgentKind, Found, Presence};
use cp_base::Project;

use super::Check;

const GROUP: &str = "agents";

/// Config's `agent.command` and the agent it starts (`agent.kind`).
pub(super) struct Configured {
    agent: &'static str,
    command: String,
}

/// The `agent.command` config sets for the agent `agent.kind` names, if any; and a check for
/// what is wrong with the `agent` section (a command without a kind, a section that does not
/// parse).
pub(super) fn configured_command(project: &Project) -> (Option<Configured>, Option<Check>) {
    let config = match AgentConfig::load(project) {
        Ok(config) => config,
        Err(e) => {
            let fix = "fix the \"agent\" section of .context-pilot/config.json".to_owned();
            return (None, Some(Check::fail(GROUP, e.to_string(), fix)));
        }
    };
    let Some(command) = config.command else {
        return (None, None);
    };
    match config.kind.and_then(AgentKind::cli) {
        Some(agent) => (
            Some(Configured {
                agent: agent.spec().name,
                command,
            }),
            None,
        ),
        None => (
            None,
            Some(Check::info(
                GROUP,
                format!(
                    "agent.command `{command}` is set without an agent CLI in agent.kind; it \
                     runs whichever agent `--agent` names"
                ),
                Some("set agent.kind (claude, gemini or codex) so doctor checks it".into()),
            )),
        ),
    }
}

/// Every agent CLI: the configured one at its command, the others on `PATH`.
pub(super) fn look_for(configured: Option<&Configured>) -> Vec<Presence> {
    AGENT_CLIS
        .iter()
        .map(|agent| {
            let command = configured
                .filter(|c| c.agent == agent.spec().name)
                .map(|c| c.command.as_str());
            cp_agent_cli::look_for(*agent, command)
        })
        .collect()
}

pub(super) fn checks(presence: &[Presence], configured: Option<&Configured>) -> Vec<Check> {
    presence
        .iter()
        .map(|p| {
            let command = configured
                .filter(|c| c.agent == p.agent.spec().name)
                .map(|c| c.command.as_str());
            check(p, command)
        })
        .collect()
}

fn check(presence: &Presence, command: Option<&str>) -> Check {
    let spec = presence.agent.spec();
    let name = spec.display_name;
    let (a, b, c) = spec.min_version;
    let from = command.map_or_else(String::new, |_| " (agent.command)".to_owned());
    match &presence.found {
        Found::Missing => match command {
            Some(command) => Check::fail(
                GROUP,
                format!("{name}: agent.command `{command}` is not found"),
                format!(
                    "fix agent.command in .context-pilot/config.json (a path or a name on \
                     PATH), or remove it to use `{}` from PATH",
                    spec.program
                ),
            ),
            None => Check::info(
                GROUP,
                format!("{name}: `{}` is not on PATH", spec.program),
                Some(format!("optional; {}", spec.install)),
            ),
        },
        Found::Usable(binary) => Check::ok(
            GROUP,
            format!(
                "{name}: {} at {}{from} ({a}.{b}.{c} or newer needed)",
                binary.version,
                binary.path.display()
            ),
        ),
        found @ (Found::TooOld { .. } | Found::Unreadable { .. }) => {
            Check::fail(GROUP, format!("{name}: {found}{from}"), spec.install)
        }
    }
}
