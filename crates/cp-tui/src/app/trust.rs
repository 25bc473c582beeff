//! The trust prompt: asked once at start in an untrusted project with something to trust,
//! and what each answer does.

use super::App;
use crate::conversation::Entry;
use crate::keymap::Action;
use crate::popup::Confirm;

impl App {
    /// Asks whether to trust the project when it is not trusted and has something to trust
    /// (callbacks, a configured test command, an `llm.base_url`). Called once at start.
    pub fn ask_trust_if_needed(&mut self) {
        let project = self.host.project();
        if project.is_trusted() {
            return;
        }
        let what = match cp_base::Grant::of(project) {
            Ok(grant) => grant.describe(),
            Err(e) => format!("(cannot read what it allows: {e})\n"),
        };
        self.modal.confirm = Some(Confirm::Trust(format!(
            "{}\n\nTrusting {} allows:\n\n{what}",
            project.trust_state().advice(project.root()),
            project.root().display()
        )));
    }

    fn trust_project(&mut self) {
        let text = match self.host.project().grant_trust() {
            Ok(_) => "Trusted this project: its callbacks, configured test command and \
                      llm.base_url are on (a change made outside Context Pilot turns them off \
                      again). A provider from llm.base_url starts at the next start."
                .to_owned(),
            Err(e) => format!("Could not trust this project: {e}"),
        };
        self.ui.flash = Some(text.clone());
        self.conversation.push(Entry::System(text));
    }

    fn decline_trust(&mut self) {
        let text = format!(
            "Not trusted: this project's callbacks and configured test command stay off and its \
             llm.base_url is ignored. Trust it later with `context-pilot trust --project {}`.",
            self.host.project().root().display()
        );
        self.ui.flash = Some(text.clone());
        self.conversation.push(Entry::System(text));
    }

    /// Applies the answer to the open yes/no question.
    pub(super) fn answer_confirm(&mut self, confirm: Confirm, action: Action) {
        match (confirm, action) {
            (Confirm::QuitWhileBusy, Action::Yes | Action::Quit) => self.life.quit = true,
            (Confirm::QuitWhileBusy, _) => self.ui.flash = Some("Quit cancelled.".into()),
            (Confirm::Trust(_), Action::Yes) => self.trust_project(),
            (Confirm::Trust(_), Action::Quit) => {
                self.decline_trust();
                self.request_quit();
            }
            (Confirm::Trust(_), _) => self.decline_trust(),
            (Confirm::Revert(_), action) => self.answer_revert(action == Action::Yes),
        }
    }
}
