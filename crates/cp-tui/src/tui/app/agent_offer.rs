//! The no-model screen's keys: the agent CLIs found are shown in the conversation
//! ([`AgentOffer`]); F5 runs the TUI's turns with the one offered, F6 also remembers it.

use cp_base::Level;

use super::App;
use crate::tui::agent_offer::AgentOffer;
use crate::tui::agent_state::AgentState;
use crate::tui::cli_agent::CliAgent;
use crate::tui::conversation::Entry;
use crate::tui::remembered_agent;

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

    /// F5 (`remember`: F6): the offered agent runs the turns from now on, as with
    /// `--agent NAME`.
    pub(super) fn use_offered_agent(&mut self, remember: bool) {
        if self.agent.has_agent() {
            self.ui.flash = Some("An agent already runs your messages.".into());
            return;
        }
        let Some((kind, _)) = self.offer.as_ref().and_then(AgentOffer::pick) else {
            self.ui.flash = Some(if self.offer.is_some() {
                "No agent CLI that can run the turns was found.".into()
            } else {
                "Still looking for agent CLIs…".into()
            });
            return;
        };
        let cli = match CliAgent::new(&self.host, kind) {
            Ok(cli) => cli,
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
        self.agent.messages = old.messages;
        self.agent.inbox = old.inbox;
        self.conversation.drop_no_provider_help();
        self.conversation.push(Entry::Notice {
            level: Level::Info,
            text: said,
        });
        if remember {
            let text = match remembered_agent::remember(kind) {
                Ok(path) => Entry::Notice {
                    level: Level::Info,
                    text: format!(
                        "Remembered in {}: with no provider configured and no --agent, \
                         context-pilot uses {kind}.",
                        path.display()
                    ),
                },
                Err(e) => Entry::Notice {
                    level: Level::Error,
                    text: format!("cannot remember the agent: {e}"),
                },
            };
            self.conversation.push(text);
        }
        self.life.autosave.mark();
    }
}
