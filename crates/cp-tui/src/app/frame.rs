//! What the next frame draws: the app's state and the modules' published panel snapshots, as
//! a [`ViewModel`].

use super::App;
use super::commands;
use super::scroll;
use crate::keymap::help_rows;
use crate::panels::sidebar;
use crate::view_model::ViewModel;

impl App {
    /// What the next frame draws: this state and the modules' published panel snapshots.
    pub fn view_model(&self) -> ViewModel<'_> {
        let views = self.host.registry().views();
        let selected = self.ui.nav.selected();
        let mut model = ViewModel {
            project: self.host.project().root().display().to_string(),
            worker: self.host.worker().to_string(),
            conversation: &self.conversation,
            input: &self.input,
            palette: self
                .modal
                .palette
                .as_ref()
                .map(|p| (p, self.host.registry().tool_defs())),
            focus: self.ui.focus,
            selected,
            sidebar: sidebar(
                &self.conversation,
                &self.changes,
                self.workflow.as_ref().map(|w| &w.phases),
                &views,
            ),
            changes: &self.changes,
            review_queued: self.changes.send_queued,
            panel: views.panel(selected),
            panel_view: self.view(selected),
            confirm: self.modal.confirm.as_ref(),
            dialog: self.modal.dialog.as_ref(),
            agent: &self.agent,
            workflow: self.workflow.as_ref(),
            flash: self.ui.flash.as_deref(),
            reload_pending: self.life.reload.is_some(),
            running_jobs: self.jobs.running(),
            help: self.modal.help.as_ref(),
            help_rows: self
                .modal
                .help
                .map(|h| help_rows(h.context, commands::doc))
                .unwrap_or_default(),
            search: self.modal.search.as_ref(),
        };
        // A module panel's content can shrink under a kept offset; never draw past it. (The
        // conversation clamps while drawing, and its extent costs a full wrap.)
        if model.panel.is_some() && model.panel_view.scroll > 0 {
            let max = scroll::extent_in(&model, self.ui.size).max;
            model.panel_view.scroll = model.panel_view.scroll.min(max);
        }
        model
    }
}
