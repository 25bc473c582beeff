//! Starting a turn of the person's own agent CLI (`--agent claude|gemini|codex`); its events are
//! applied as the built-in agent's are (`App::apply_agent`).

use cp_agent::AgentInbox;
use cp_base::Level;
use cp_orchestrate::StopHandle;
use std::time::Duration;

use cp_llm::CancelToken;

use crate::agent::cli_agent::CliTurnError;
use crate::agent::restartable::last_user_text;
use crate::agent::running_turn::RunningTurn;
use crate::conversation::Entry;

use super::App;

/// How long quitting waits, beyond the agent's own grace period, for an interrupted agent
/// CLI to be gone.
const WIND_DOWN_MARGIN: Duration = Duration::from_secs(5);

impl App {
    /// On the way out: an agent CLI still working (the person's turn, or a workflow phase)
    /// is interrupted and waited for, so its process group is gone and the session id it
    /// reached is saved for the next start. `show` draws the app once before the wait, so
    /// the person sees why quitting takes a moment.
    pub fn wind_down(&mut self, show: impl FnOnce(&Self)) {
        let Some(cli) = &self.agent.cli else {
            return;
        };
        if cli.is_idle() {
            return;
        }
        if let Some(turn) = &self.agent.turn {
            turn.cancel.cancel();
        }
        if let Some(turn) = self.workflow.as_ref().and_then(|run| run.turn.as_ref()) {
            turn.cancel.cancel();
        }
        let limit = cli.grace() + WIND_DOWN_MARGIN;
        self.ui.flash = Some(format!(
            "Stopping {}… (at most {} s)",
            cli.name(),
            limit.as_secs()
        ));
        show(self);
        let Some(cli) = &self.agent.cli else {
            return;
        };
        if !cli.wait_idle(limit) {
            tracing::warn!(
                "the agent CLI did not stop in time; its process group is ended with this process"
            );
        }
    }

    /// Runs one turn of the agent CLI for the person's latest message.
    pub(super) fn start_cli_turn(&mut self) {
        if self.agent.cli.is_none() {
            return;
        }
        let turn = RunningTurn {
            cancel: CancelToken::new(),
            stop: StopHandle::default(),
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
            self.agent.messages.len(),
            &turn.cancel,
            &self.tx,
        );
        match started {
            Ok(()) => {
                self.agent.usage.start_turn();
                self.agent.streaming_entry = None;
                self.agent.work_left = None;
                self.agent.turn = Some(turn);
            }
            // Reported by `background::spawn` (`AppEvent::NotStarted`).
            Err(CliTurnError::NotStarted(_)) => {}
            Err(e) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: format!("cannot start the agent: {e}"),
                });
            }
        }
    }
}
