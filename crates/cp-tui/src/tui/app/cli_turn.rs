//! Starting a turn of the person's own agent CLI (`--agent claude|gemini`); its events are
//! applied as the built-in agent's are (`App::apply_agent`).

use cp_agent::{AgentInbox, StopControl};
use cp_base::Level;
use cp_llm::CancelToken;

use crate::tui::agent_state::RunningTurn;
use crate::tui::conversation::Entry;
use crate::tui::restartable::last_user_text;

use super::App;

impl App {
    /// Runs one turn of the agent CLI for the person's latest message.
    pub(super) fn start_cli_turn(&mut self) {
        if self.agent.cli.is_none() {
            return;
        }
        let turn = RunningTurn {
            cancel: CancelToken::new(),
            stop: StopControl::default(),
        };
        let restart = self.restart_config();
        // What came in the background since the last turn goes first (the built-in agent
        // reads its inbox the same way).
        let mut prompt = last_user_text(&self.agent.messages);
        let notes = self.agent.inbox.take();
        if !notes.is_empty() {
            prompt = format!("{}\n\n{prompt}", AgentInbox::render(&notes));
        }
        let Some(cli) = &self.agent.cli else {
            return;
        };
        let started = cli.start_turn(
            &self.host,
            restart,
            prompt,
            self.agent.messages.clone(),
            &turn.cancel,
            self.tx.clone(),
        );
        match started {
            Ok(()) => {
                self.agent.usage.start_turn();
                self.agent.streaming_entry = None;
                self.agent.work_left = None;
                self.agent.turn = Some(turn);
            }
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: format!("cannot start the agent: {e}"),
                });
            }
        }
    }
}
