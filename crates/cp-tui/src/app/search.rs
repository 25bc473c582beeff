//! `/` search in the selected panel: opening the prompt, and jumping between matches.

use cp_base::Panel as _;

use super::App;
use crate::keymap::Action;
use crate::search::{PromptStep, Search, pick};
use crate::view::panel_inner_area;

impl App {
    /// `/`: opens the search prompt for the selected panel.
    pub(super) fn open_search(&mut self) {
        self.modal.search = Some(Search::open());
    }

    /// A key while the search prompt has the keys.
    pub(super) fn apply_search_prompt(&mut self, action: Action) {
        if action == Action::Quit {
            // Ctrl-C quits from the prompt too, as from any text field.
            self.modal.search = None;
            self.request_quit();
            return;
        }
        let Some(search) = self.modal.search.as_mut() else {
            return;
        };
        match search.apply(action) {
            PromptStep::Stay => {}
            PromptStep::Cancel => self.modal.search = None,
            PromptStep::Find => self.search_jump(true, true),
        }
    }

    /// Moves the selected panel to the next (`next`) or previous match of the search.
    pub(super) fn search_jump(&mut self, next: bool, from_here: bool) {
        let Some(query) = self
            .modal
            .search
            .as_ref()
            .and_then(Search::text)
            .map(str::to_owned)
        else {
            self.ui.flash = Some("Nothing to find: / starts a search.".into());
            return;
        };
        let offsets = self.match_offsets(&query);
        let selected = self.ui.nav.selected().to_owned();
        let current = self.ui.nav.view(&selected, false).scroll;
        match pick(&offsets, current, next, from_here) {
            Some(offset) => {
                let extent = self.scroll_extent();
                self.ui.nav.scroll_to(offset, extent);
                self.life.autosave.mark();
            }
            None if offsets.is_empty() => {
                self.ui.flash = Some(format!("No match for “{query}” in this panel."));
            }
            None => self.ui.flash = Some(format!("No more matches for “{query}”.")),
        }
    }

    /// Where the selected panel holds `query`, as scroll offsets, ascending.
    fn match_offsets(&self, query: &str) -> Vec<usize> {
        let model = self.view_model();
        let area = panel_inner_area(&model, self.ui.size);
        if model.selected == model.conversation.id() {
            return model.conversation.find(area, query);
        }
        model
            .panel
            .as_ref()
            .map(|panel| panel.find(area, query))
            .unwrap_or_default()
    }
}
