//! Mouse clicks: what a click lands on comes from the hit map of the last frame drawn, so a
//! click acts on exactly what the person saw there.

use super::App;
use crate::changes::Pane;
use crate::hit_map::{HitMap, Target};
use crate::keymap::Action;
use crate::panels::Focus;
use crate::workflow::dialog::DialogFocus;

impl App {
    /// Remembers where the frame just drawn put what (called after every draw).
    pub fn set_hit_map(&mut self, hits: HitMap) {
        self.ui.hits = hits;
    }

    /// A left click at a cell: select a sidebar entry, focus the input or the panel, select
    /// a file or a diff line of the Changes panel, or pick an option or a file of the
    /// approval dialog. Clicks elsewhere, and on an overlay with
    /// nothing to click, do nothing.
    pub(super) fn click(&mut self, column: u16, row: u16) {
        let Some(target) = self.ui.hits.at(column, row).cloned() else {
            return;
        };
        match target {
            Target::Panel(id) => {
                self.select(&id);
                self.ui.focus = Focus::Sidebar;
            }
            Target::PanelArea => {
                self.ui.focus = Focus::Sidebar;
                if self.changes_selected() {
                    self.engage_changes();
                }
            }
            Target::ChangesFile(index) => {
                self.click_changes(Pane::List);
                self.changes.select_file(index);
            }
            Target::DiffRow(index) => {
                self.click_changes(Pane::Diff);
                self.changes.cursor = index.min(self.changes.rows.len().saturating_sub(1));
            }
            Target::Input => self.ui.focus = Focus::Input,
            Target::DialogChoice(index) => self.click_dialog(DialogFocus::Options, index),
            Target::DialogFile(index) => self.click_dialog(DialogFocus::Files, index),
            Target::Overlay => {}
        }
    }

    /// A click on a row of the Changes panel gives it the keys, in the pane clicked.
    fn click_changes(&mut self, pane: Pane) {
        self.ui.focus = Focus::Sidebar;
        self.engage_changes();
        self.changes.pane = pane;
        self.changes.done = None;
    }

    /// Points the dialog at the clicked option or file, then acts as Enter does there, so a
    /// click goes through the same steps (feedback, confirmation) as the keys.
    fn click_dialog(&mut self, focus: DialogFocus, index: usize) {
        let Some(dialog) = self.modal.dialog.as_mut().filter(|d| !d.hidden) else {
            return;
        };
        dialog.focus = focus;
        match focus {
            DialogFocus::Files => dialog.file = index,
            DialogFocus::Options | DialogFocus::Feedback => dialog.selected = index,
        }
        self.apply_dialog(Action::Submit);
    }
}
