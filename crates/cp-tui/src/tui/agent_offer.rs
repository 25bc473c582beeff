//! The no-model screen's offer: with no LLM provider configured, the agent CLIs this machine
//! has (looked for off the UI thread, by [`LookForAgents`]) are listed in the conversation
//! with their versions, the ones too old marked; F5 runs the TUI's turns with the first that
//! can (as `--agent NAME` does; [`StartAgent`] starts it off the UI thread), F6 does that and
//! remembers it in the user's config ([`super::remembered_agent`]). With nothing installed it says, in three lines, how to get
//! a model or an agent.

use std::path::PathBuf;

use cp_agent_cli::{AGENT_CLIS, AgentKind, Found, Presence};
use cp_base::{Project, WorkerId};

use super::background::{Job, Reporter};
use super::cli_agent::CliAgent;
use super::events::AppEvent;
use super::remembered_agent;

/// The agents found, for the offer.
#[derive(Debug, Clone, Default)]
pub struct AgentOffer {
    pub presence: Vec<Presence>,
    /// F5 or F6 was pressed and the agent is starting.
    pub starting: bool,
}

impl AgentOffer {
    /// The agent F5 and F6 start: the first installed one that is new enough and that the
    /// TUI can drive.
    pub fn pick(&self) -> Option<(AgentKind, &Presence)> {
        self.presence
            .iter()
            .find(|p| p.found.usable().is_some() && p.agent.runs_unsupported().is_none())
            .map(|p| (AgentKind::Cli(p.agent), p))
    }

    /// The conversation's text (it starts as the no-provider help does, so it is replaced the
    /// same way once an agent runs the turns).
    pub fn text(&self) -> String {
        let installed: Vec<&Presence> = self
            .presence
            .iter()
            .filter(|p| p.found.installed())
            .collect();
        if installed.is_empty() {
            return nothing_installed();
        }
        let picked = self.pick().map(|(kind, _)| kind.as_str());
        let mut out = String::from(
            "No LLM provider is configured, but this machine has agent CLIs that need no API key here:\n",
        );
        for presence in installed {
            let spec = presence.agent.spec();
            let line = match &presence.found {
                Found::Usable(binary) => {
                    let mark = if picked == Some(spec.name) {
                        " — F5 runs your messages with it, F6 also remembers it for next time"
                            .to_owned()
                    } else if let Some(why) = presence.agent.runs_unsupported() {
                        format!(" — cannot run the TUI's turns yet: {why}")
                    } else {
                        format!(" — `context-pilot --agent {}` uses it", spec.name)
                    };
                    format!(
                        "  {} {} ({}){mark}",
                        spec.display_name,
                        binary.version,
                        binary.path.display()
                    )
                }
                found => format!(
                    "  {} {found} — too old to use: {}",
                    spec.display_name, spec.install
                ),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(
            "Or set ANTHROPIC_API_KEY (or OPENAI_API_KEY and/or OPENAI_BASE_URL) and start \
             context-pilot again. Ctrl-P runs any tool; F1 lists the keys.",
        );
        out
    }
}

/// Three lines: no model, no agent; how to get either.
fn nothing_installed() -> String {
    let agents: Vec<String> = AGENT_CLIS
        .iter()
        .filter(|agent| agent.runs_unsupported().is_none())
        .map(|agent| format!("{}: {}", agent.spec().display_name, agent.spec().install))
        .collect();
    format!(
        "No LLM provider is configured and no agent CLI is installed, so there is no agent to talk to yet (Ctrl-P still runs any tool; F1 lists the keys).\n\
         For a model: set ANTHROPIC_API_KEY, or OPENAI_API_KEY and/or OPENAI_BASE_URL (CP_MODEL names the model), then start context-pilot again.\n\
         For your own agent: {}; then start context-pilot again.",
        agents.join("; ")
    )
}

/// Looks for the agent CLIs (each one's `--version` runs); ends with
/// [`AppEvent::AgentsFound`].
pub struct LookForAgents;

impl Job for LookForAgents {
    fn thread_name(&self) -> String {
        "cp-agent-look".into()
    }

    fn what(&self) -> &'static str {
        "the look for installed agent CLIs"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        Some(AppEvent::AgentsFound(AgentOffer {
            presence: cp_agent_cli::look_for_agents(),
            starting: false,
        }))
    }
}

/// Starts the agent the person picked (F5, F6): finds and checks its binary and writes its
/// wiring, and with `remember` records the choice; ends with [`AppEvent::AgentStarted`].
pub struct StartAgent {
    pub project: Project,
    pub worker: WorkerId,
    pub kind: AgentKind,
    pub remember: bool,
}

/// What [`StartAgent`] did.
pub struct StartedAgent {
    pub kind: AgentKind,
    /// The agent, or why it cannot start.
    pub cli: Result<CliAgent, String>,
    /// With F6: the file the choice was written to, or why it was not.
    pub remembered: Option<Result<PathBuf, String>>,
}

impl std::fmt::Debug for StartedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartedAgent")
            .field("kind", &self.kind)
            .field("cli", &self.cli.as_ref().map(CliAgent::label))
            .field("remembered", &self.remembered)
            .finish()
    }
}

impl Job for StartAgent {
    fn thread_name(&self) -> String {
        "cp-agent-start".into()
    }

    fn what(&self) -> &'static str {
        "the agent CLI"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        let cli =
            CliAgent::start(&self.project, &self.worker, self.kind).map_err(|e| e.to_string());
        let remembered = (self.remember && cli.is_ok())
            .then(|| remembered_agent::remember(self.kind).map_err(|e| e.to_string()));
        Some(AppEvent::AgentStarted(Box::new(StartedAgent {
            kind: self.kind,
            cli,
            remembered,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_agent_cli::AgentBinary;

    fn agent(name: &str) -> &'static dyn cp_agent_cli::AgentCli {
        name.parse::<AgentKind>().unwrap().cli().unwrap()
    }

    #[test]
    fn the_first_usable_agent_is_offered_and_old_ones_are_marked() {
        let offer = AgentOffer {
            presence: vec![
                Presence {
                    agent: agent("claude"),
                    found: Found::TooOld {
                        path: "/bin/claude".into(),
                        version: "1.0.0".into(),
                        needed: "2.0.31".into(),
                    },
                },
                Presence {
                    agent: agent("gemini"),
                    found: Found::Usable(AgentBinary {
                        path: "/bin/gemini".into(),
                        version: "0.61.0".into(),
                    }),
                },
                Presence {
                    agent: agent("codex"),
                    found: Found::Missing,
                },
            ],
            starting: false,
        };
        assert_eq!(offer.pick().map(|(k, _)| k.as_str()), Some("gemini"));
        let text = offer.text();
        assert!(text.starts_with("No LLM provider is configured"), "{text}");
        assert!(
            text.contains("Claude Code 1.0.0 at /bin/claude is too old"),
            "{text}"
        );
        assert!(
            text.contains("Gemini CLI 0.61.0 (/bin/gemini) — F5 runs your messages with it"),
            "{text}"
        );
        assert!(!text.contains("Codex"), "{text}");
    }

    #[test]
    fn with_nothing_installed_it_says_how_to_get_either_in_three_lines() {
        let text = AgentOffer::default().text();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.starts_with("No LLM provider is configured"), "{text}");
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
        assert!(
            text.contains("npm install -g @anthropic-ai/claude-code"),
            "{text}"
        );
    }
}
