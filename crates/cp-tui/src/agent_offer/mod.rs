//! The no-model screen's offer: with no LLM provider configured, the agent CLIs this machine
//! has (looked for off the UI thread, by `agent_start::LookForAgents`) are listed in the
//! conversation with their versions, the ones too old marked. The first usable one is picked,
//! Alt-↑/Alt-↓ picks another; F5 runs the TUI's turns with the picked one (as `--agent NAME`
//! does; `agent_start::StartAgent` starts it off the UI thread), F6 does that and remembers it
//! in the user's config ([`crate::agent_offer::remembered_agent`]). With nothing installed it says, in three
//! lines, how to get a model or an agent. This file is data only: the events name it.

pub(crate) mod agent_start;
pub mod remembered_agent;

use cp_agent_cli::{AGENT_CLIS, AgentKind, Found, Presence};

/// The agents found, for the offer.
#[derive(Debug, Clone, Default)]
pub struct AgentOffer {
    pub presence: Vec<Presence>,
    /// Which of the usable agents ([`Self::usable`]) F5 and F6 start, counted from 0 (the
    /// first unless Alt-↑/Alt-↓ picked another).
    pub picked: usize,
    /// F5 or F6 was pressed and the agent is starting.
    pub starting: bool,
}

impl AgentOffer {
    /// The offer of the agents found, the first usable one picked.
    pub fn new(presence: Vec<Presence>) -> Self {
        Self {
            presence,
            picked: 0,
            starting: false,
        }
    }

    /// The agents F5 and F6 can start: installed and new enough, in the order they are listed.
    fn usable(&self) -> impl Iterator<Item = &Presence> {
        self.presence.iter().filter(|p| p.found.usable().is_some())
    }

    /// The agent F5 and F6 start: the picked one of [`Self::usable`].
    pub fn pick(&self) -> Option<(AgentKind, &Presence)> {
        let count = self.usable().count();
        self.usable()
            .nth(self.picked.min(count.saturating_sub(1)))
            .map(|p| (AgentKind::Cli(p.agent), p))
    }

    /// Picks the next usable agent (`forward`) or the previous one, wrapping around; whether
    /// there was another to pick.
    pub fn pick_another(&mut self, forward: bool) -> bool {
        let count = self.usable().count();
        if count < 2 {
            return false;
        }
        let current = self.picked.min(count - 1);
        self.picked = if forward {
            (current + 1) % count
        } else {
            (current + count - 1) % count
        };
        true
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
        let several = self.usable().count() > 1;
        let mut out = String::from(
            "No LLM provider is configured, but this machine has agent CLIs that need no API key here:\n",
        );
        for presence in installed {
            let spec = presence.agent.spec();
            let line = match &presence.found {
                Found::Usable(binary) => {
                    let is_picked = picked == Some(spec.name);
                    let mark = if is_picked {
                        " — F5 runs your messages with it, F6 also remembers it for next time"
                            .to_owned()
                    } else if several {
                        " — Alt-↑/Alt-↓ picks it".to_owned()
                    } else {
                        String::new()
                    };
                    format!(
                        "{}{} {} ({}){mark}",
                        if is_picked { "▸ " } else { "  " },
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
        .map(|agent| format!("{}: {}", agent.spec().display_name, agent.spec().install))
        .collect();
    format!(
        "No LLM provider is configured and no agent CLI is installed, so there is no agent to talk to yet (Ctrl-P still runs any tool; F1 lists the keys).\n\
         For a model: set ANTHROPIC_API_KEY, or OPENAI_API_KEY and/or OPENAI_BASE_URL (CP_MODEL names the model), then start context-pilot again.\n\
         For your own agent: {}; then start context-pilot again.",
        agents.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cp_agent_cli::AgentBinary;

    fn agent(name: &str) -> &'static dyn cp_agent_cli::AgentCli {
        name.parse::<AgentKind>().unwrap().cli().unwrap()
    }

    fn usable(name: &str, path: &str, version: &str) -> Presence {
        Presence {
            agent: agent(name),
            found: Found::Usable(AgentBinary {
                path: path.into(),
                version: version.into(),
            }),
        }
    }

    #[test]
    fn the_first_usable_agent_is_picked_and_old_ones_are_marked() {
        let offer = AgentOffer::new(vec![
            Presence {
                agent: agent("claude"),
                found: Found::TooOld {
                    path: "/bin/claude".into(),
                    version: "1.0.0".into(),
                    needed: "2.0.31".into(),
                },
            },
            usable("gemini", "/bin/gemini", "0.61.0"),
            Presence {
                agent: agent("codex"),
                found: Found::Missing,
            },
        ]);
        assert_eq!(offer.pick().map(|(k, _)| k.as_str()), Some("gemini"));
        let text = offer.text();
        assert!(text.starts_with("No LLM provider is configured"), "{text}");
        assert!(
            text.contains("Claude Code 1.0.0 at /bin/claude is too old"),
            "{text}"
        );
        assert!(
            text.contains("▸ Gemini CLI 0.61.0 (/bin/gemini) — F5 runs your messages with it"),
            "{text}"
        );
        assert!(!text.contains("Alt-↑"), "only one to pick: {text}");
        assert!(!text.contains("Codex"), "{text}");
    }

    #[test]
    fn alt_arrows_pick_any_usable_agent_codex_included_and_wrap_around() {
        let mut offer = AgentOffer::new(vec![
            usable("claude", "/bin/claude", "2.1.0"),
            usable("gemini", "/bin/gemini", "0.61.0"),
            usable("codex", "/bin/codex", "0.169.0"),
        ]);
        let picked = |offer: &AgentOffer| offer.pick().map(|(k, _)| k.as_str().to_owned());
        assert_eq!(picked(&offer).as_deref(), Some("claude"));
        assert!(offer.pick_another(false));
        assert_eq!(picked(&offer).as_deref(), Some("codex"), "wraps backwards");
        let text = offer.text();
        assert!(
            text.contains("▸ Codex CLI 0.169.0 (/bin/codex) — F5 runs your messages with it"),
            "{text}"
        );
        assert!(
            text.contains("  Claude Code 2.1.0 (/bin/claude) — Alt-↑/Alt-↓ picks it"),
            "{text}"
        );
        assert!(!text.contains("cannot"), "{text}");
        assert!(offer.pick_another(true));
        assert_eq!(picked(&offer).as_deref(), Some("claude"), "wraps forwards");
        assert!(offer.pick_another(true));
        assert_eq!(picked(&offer).as_deref(), Some("gemini"));
        let alone = &mut AgentOffer::new(vec![usable("codex", "/bin/codex", "0.169.0")]);
        assert!(!alone.pick_another(true));
        assert_eq!(picked(alone).as_deref(), Some("codex"));
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
