//! The no-model screen's keys: the agent CLIs found are shown in the conversation
//! ([`AgentOffer`]); Alt-↑/Alt-↓ picks one; F5 starts the one picked (off the UI thread: its `--version` runs and
//! its wiring is written) and it runs the TUI's turns from then on; F6 also remembers it.

use cp_base::Level;

use super::App;
use crate::agent::AgentState;
use crate::agent_offer::AgentOffer;
use crate::agent_offer::agent_start::{StartAgent, StartedAgent};
use crate::background;
use crate::conversation::Entry;

impl App {
    /// The look for agent CLIs answered: the no-provider help becomes the offer.
    pub(super) fn offer_agents(&mut self, offer: AgentOffer) {
        if self.agent.has_agent() {
            return;
        }
        self.conversation.drop_no_provider_help();
        self.conversation.push(Entry::System(offer.text()));
        self.offer = Some(offer);
    }

    /// The agent started with F5/F6, if any (a live reload passes it on as `--agent`).
    pub(crate) fn picked_agent(&self) -> Option<cp_agent_cli::AgentKind> {
        self.picked_agent
    }

    /// Alt-↑ (`forward`: Alt-↓): F5 and F6 start the previous (next) usable agent of the
    /// offer; its text marks it.
    pub(super) fn pick_offered_agent(&mut self, forward: bool) {
        if self.agent.has_agent() {
            return;
        }
        let Some(offer) = &mut self.offer else {
            self.ui.flash = Some("Still looking for agent CLIs…".into());
            return;
        };
        if offer.starting {
            return;
        }
        if !offer.pick_another(forward) {
            self.ui.flash = Some("There is no other agent CLI to pick.".into());
            return;
        }
        if let Some((_, presence)) = offer.pick() {
            self.ui.flash = Some(format!(
                "F5 starts {} (F6 also remembers it).",
                presence.agent.spec().display_name
            ));
        }
        let text = offer.text();
        self.conversation.replace_no_provider_help(text);
    }

    /// F5 (`remember`: F6): starts the picked agent in the background.
    pub(super) fn use_offered_agent(&mut self, remember: bool) {
        if self.agent.has_agent() {
            self.ui.flash = Some("An agent already runs your messages.".into());
            return;
        }
        let Some(offer) = &mut self.offer else {
            self.ui.flash = Some("Still looking for agent CLIs…".into());
            return;
        };
        if offer.starting {
            return;
        }
        let Some((kind, presence)) = offer.pick() else {
            self.ui.flash = Some("No agent CLI that can run the turns was found.".into());
            return;
        };
        let name = presence.agent.spec().display_name;
        let job = StartAgent {
            project: self.host.project().clone(),
            worker: self.host.worker().clone(),
            kind,
            remember,
            slot: std::sync::Arc::clone(&self.started_agent),
        };
        if background::spawn(job, &self.tx).is_ok() {
            offer.starting = true;
            self.ui.flash = Some(format!("Starting {name}…"));
        }
    }

    /// The agent picked with F5/F6 started: it runs the turns from now on, as with
    /// `--agent NAME`.
    pub(super) fn agent_started(&mut self) {
        if let Some(offer) = &mut self.offer {
            offer.starting = false;
        }
        let taken = self
            .started_agent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(started) = taken else {
            return;
        };
        let StartedAgent {
            kind,
            cli,
            remembered,
        } = started;
        let cli = match cli {
            Ok(cli) if !self.agent.has_agent() => cli,
            Ok(_) => return,
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: e.to_string(),
                });
                return;
            }
        };
        let said = format!(
            "{} runs your messages now (as `context-pilot --agent {kind}` would).",
            cli.label()
        );
        let old = std::mem::replace(&mut self.agent, AgentState::with_cli(cli));
        self.picked_agent = Some(kind);
        self.agent.messages = old.messages;
        self.agent.inbox = old.inbox;
        self.conversation.drop_no_provider_help();
        self.conversation.push(Entry::Notice {
            level: Level::Info,
            text: said,
        });
        let note = match remembered {
            Some(Ok(path)) => Some(Entry::Notice {
                level: Level::Info,
                text: format!(
                    "Remembered in {}: started with no provider configured and no --agent, \
                     context-pilot uses {kind}.",
                    path.display()
                ),
            }),
            Some(Err(e)) => Some(Entry::Notice {
                level: Level::Error,
                text: format!("cannot remember the agent: {e}"),
            }),
            None => None,
        };
        if let Some(note) = note {
            self.conversation.push(note);
        }
        self.life.autosave.mark();
    }
}

#[cfg(test)]
mod tests {
    use cp_agent_cli::{AgentKind, Found, Presence};

    use crate::conversation::Entry;
    use crate::events::AppEvent;
    use crate::keymap::Action;

    /// The conversation's system entries (the offer is one).
    fn system_texts(conversation: &crate::conversation::Conversation) -> Vec<&str> {
        conversation
            .entries()
            .iter()
            .filter_map(|e| match e {
                Entry::System(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_offer_replaces_the_no_provider_help_and_f5_without_a_usable_agent_says_so() {
        let mut app = crate::tests::app(false);
        let claude = "claude".parse::<AgentKind>().unwrap().cli().unwrap();
        app.handle(AppEvent::AgentsFound(vec![Presence {
            agent: claude,
            found: Found::TooOld {
                path: "/bin/claude".into(),
                version: "1.0.0".into(),
                needed: "2.0.31".into(),
            },
        }]));
        app.apply(Action::UseOfferedAgent);
        assert_eq!(
            app.ui.flash.as_deref(),
            Some("No agent CLI that can run the turns was found.")
        );
        let (conversation, _, agent) = app.parts_for_test();
        assert!(!agent.has_agent());
        let systems = system_texts(conversation);
        assert_eq!(systems.len(), 1, "{systems:?}");
        assert!(
            systems[0].contains("Claude Code 1.0.0 at /bin/claude is too old"),
            "{systems:?}"
        );
    }

    #[test]
    fn alt_down_picks_the_next_agent_in_place_of_the_offer() {
        let mut app = crate::tests::app(false);
        let usable = |name: &str, version: &str| Presence {
            agent: name.parse::<AgentKind>().unwrap().cli().unwrap(),
            found: Found::Usable(cp_agent_cli::AgentBinary {
                path: format!("/bin/{name}").into(),
                version: version.into(),
            }),
        };
        app.handle(AppEvent::AgentsFound(vec![
            usable("claude", "2.1.0"),
            usable("codex", "0.169.0"),
        ]));
        app.apply(Action::PickOfferedAgent(true));
        assert_eq!(
            app.ui.flash.as_deref(),
            Some("F5 starts Codex CLI (F6 also remembers it).")
        );
        let (conversation, _, agent) = app.parts_for_test();
        assert!(!agent.has_agent());
        let systems = system_texts(conversation);
        assert_eq!(systems.len(), 1, "replaced, not added: {systems:?}");
        assert!(
            systems[0].contains("▸ Codex CLI 0.169.0 (/bin/codex) — F5 runs"),
            "{systems:?}"
        );
    }
}
