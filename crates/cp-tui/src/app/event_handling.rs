//! Background events (tool batches, the agent, workflows, notices, signals) and the tick.

use cp_base::{Level, Notice};

use super::App;
use crate::agent_offer::AgentOffer;
use crate::conversation::Entry;
use crate::events::{AppEvent, SignalKind};

impl App {
    /// Applies a background event. Terminal input goes through the keymap first.
    pub fn handle(&mut self, event: AppEvent) {
        // What may have changed the work tree: a tool batch, a hook's report, a turn's end.
        let tree_may_change = matches!(
            event,
            AppEvent::BatchDone { .. }
                | AppEvent::AgentNotice(..)
                | AppEvent::Waiting(_)
                | AppEvent::Workflow(_)
                | AppEvent::Agent(
                    cp_agent::AgentEvent::ToolResults(_) | cp_agent::AgentEvent::Finished(_)
                )
        );
        match event {
            AppEvent::Changes(msg) => self.apply_changes(msg),
            AppEvent::BatchDone { job, results } => self.finish_job(job, results),
            AppEvent::Agent(event) => self.apply_agent(event),
            AppEvent::Workflow(msg) => self.apply_workflow(msg),
            AppEvent::Notice => self.drain_notices(),
            AppEvent::Signal(SignalKind::Terminate | SignalKind::Hangup) => self.life.quit = true,
            AppEvent::Signal(SignalKind::Reload) => self.request_reload(),
            AppEvent::ModelCheck(check) => self.apply_model_check(check),
            AppEvent::AgentsFound(presence) => self.offer_agents(AgentOffer::new(presence)),
            AppEvent::AgentStarted => self.agent_started(),
            AppEvent::AgentNotice(level, text) => {
                self.conversation.push(Entry::Notice { level, text });
            }
            AppEvent::Waiting(notes) => {
                for note in notes {
                    self.host.notifier().notify(note);
                }
                self.drain_notices();
            }
            AppEvent::NotStarted(failure) => {
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text: failure.to_string(),
                });
            }
            AppEvent::Term(_) | AppEvent::Highlighted => {}
        }
        if tree_may_change {
            self.changes_may_have_changed();
        }
        self.send_queued_comments();
    }

    /// Moves queued notices into the conversation and honours panel requests.
    pub fn drain_notices(&mut self) {
        let notices = self.host.notifier().drain();
        if notices.iter().any(|n| !matches!(n, Notice::Refresh)) {
            // Background work changed a module (a failed run opens its panel): show it now.
            self.host.registry().try_republish();
        }
        for notice in notices {
            match notice {
                Notice::Notify(n) => {
                    self.conversation.push(Entry::Notice {
                        level: n.level,
                        text: n.text.clone(),
                    });
                    // The agent hears about background results on its next turn.
                    if self.agent.has_agent() {
                        self.agent.inbox.push(n);
                    }
                }
                Notice::OpenPanel(id) => self.select(&id),
                Notice::Refresh => {}
            }
        }
        self.maybe_wake();
    }

    /// Lets modules pick up background results, and saves the TUI state now and then so even a
    /// killed host loses little. Returns whether anything visible changed.
    pub fn tick(&mut self) -> bool {
        if self.life.autosave.due() {
            self.save_state();
        }
        // Never waits: a module a tool holds gets the next tick.
        let mut changed = self.host.registry().try_tick(self.host.env());
        changed |= self.ui.nav.retry_closes(self.host.registry());
        changed |= self
            .conversation
            .set_activity(self.host.registry().views().activity());
        if let Some(notice) = self.life.config_watch.check(self.host.project()) {
            self.conversation.push(notice);
            self.life.autosave.mark();
            changed = true;
        }
        // Background results the agent CLI's hooks left while it is idle.
        if let Some(cli) = &self.agent.cli
            && !self.agent.running()
            && self.workflow_turn().is_none()
        {
            cli.poll_waiting(&self.host, &self.tx);
        }
        self.refresh_changes();
        // Running calls show a spinner and their elapsed seconds: redraw each tick.
        changed |= self.jobs.running() > 0 || self.agent.running();
        changed
    }
}
