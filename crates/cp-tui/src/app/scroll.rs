//! Scrolling the selected panel, bounded by what that panel can show in the area it is drawn
//! in: Page Up stops at the first retained line, Page Down moves back at once, Home/End jump.

use cp_base::{Panel as _, ScrollExtent};
use ratatui::layout::Rect;

use super::App;
use crate::view::panel_inner_area;
use crate::view_model::ViewModel;

impl App {
    /// Records the terminal's size after a frame, and keeps the selected panel's offset
    /// within what it can show at that size (a resize or new output changes it).
    pub fn set_screen(&mut self, area: Rect) {
        self.ui.size = area;
        let selected = self.ui.nav.selected().to_owned();
        // At its resting position a panel has nothing to clamp: skip measuring it (the
        // conversation's extent costs a full rewrap, once per frame otherwise).
        if self.ui.nav.view(&selected, false).scroll == 0 {
            return;
        }
        let extent = self.scroll_extent();
        self.ui.nav.clamp(&selected, extent.max);
    }

    /// How far the selected panel scrolls on the current screen.
    pub(super) fn scroll_extent(&self) -> ScrollExtent {
        let model = self.view_model();
        extent_in(&model, self.ui.size)
    }

    /// Scrolls the selected panel; scrolling the conversation ends Ctrl-O's reveal.
    pub(super) fn scroll_by(&mut self, lines: usize, up: bool) {
        if self.ui.nav.selected() == "conversation" {
            self.conversation.clear_reveal();
        }
        let extent = self.scroll_extent();
        self.ui.nav.scroll_by(lines, up, extent);
        // Where each panel is scrolled is part of the session a reload restores.
        self.life.autosave.mark();
    }

    /// Home / `g`: the selected panel's first retained line.
    pub(super) fn scroll_to_start(&mut self) {
        if self.ui.nav.selected() == "conversation" {
            self.conversation.clear_reveal();
        }
        let extent = self.scroll_extent();
        self.ui.nav.scroll_to_start(extent);
        self.life.autosave.mark();
    }

    /// End / `G`: the selected panel's last line.
    pub(super) fn scroll_to_end(&mut self) {
        let extent = self.scroll_extent();
        self.ui.nav.scroll_to_end(extent);
        self.life.autosave.mark();
    }
}

/// The scroll extent of `model`'s selected panel on a screen of `screen`.
pub(super) fn extent_in(model: &ViewModel<'_>, screen: Rect) -> ScrollExtent {
    let area = panel_inner_area(model, screen);
    if model.selected == model.conversation.id() {
        return model.conversation.scroll_extent(area);
    }
    if model.selected == crate::phases::ID {
        return model.workflow.map_or(ScrollExtent::bottom(0), |run| {
            run.phases.scroll_extent(area)
        });
    }
    model
        .panel
        .as_ref()
        .map_or(ScrollExtent::bottom(0), |panel| panel.scroll_extent(area))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use cp_base::{Notifier, Project, ToolEnv, WorkerId};

    use super::*;
    use crate::agent::AgentState;
    use crate::conversation::Entry;
    use crate::keymap::Action;
    use cp_host::Host;

    fn app_with_lines(lines: usize) -> App {
        let env = ToolEnv::new(
            Project::at("/tmp/demo"),
            WorkerId::default(),
            Notifier::new(),
        );
        let (tx, _rx) = mpsc::channel();
        let mut app = App::new(Host::builder(env).build(), tx, AgentState::default());
        app.conversation.set_entries(Vec::new());
        for i in 0..lines {
            app.conversation.push(Entry::System(format!("note {i}")));
        }
        app.set_screen(Rect::new(0, 0, 100, 30));
        app
    }

    fn scroll(app: &App) -> usize {
        app.view("conversation").scroll
    }

    #[test]
    fn the_conversation_never_scrolls_past_its_first_line() {
        let mut app = app_with_lines(60);
        let max = app.scroll_extent().max;
        assert!(max > 0 && max < 200, "{max}");
        for _ in 0..500 {
            app.apply(Action::ScrollUp(10));
        }
        assert_eq!(scroll(&app), max);
        app.apply(Action::ScrollDown(10));
        assert_eq!(scroll(&app), max - 10, "PgDn moves back at once");
        app.apply(Action::ScrollToEnd);
        assert_eq!(scroll(&app), 0);
        app.apply(Action::ScrollToStart);
        assert_eq!(scroll(&app), max);
    }

    #[test]
    fn page_up_scrolls_the_selected_phases_conversation_within_its_extent() {
        use crate::phases::{self, PhaseRow, Phases};
        use crate::workflow::WorkflowRun;
        use cp_run::PhaseNews;
        let mut app = app_with_lines(3);
        let mut phases = Phases {
            rows: vec![PhaseRow::new("api", "builtin")],
            ..Phases::default()
        };
        for i in 0..60 {
            phases.news(
                "api",
                PhaseNews::Notice {
                    level: cp_base::Level::Info,
                    text: format!("note {i}"),
                },
                std::time::Instant::now(),
            );
        }
        app.workflow = Some(WorkflowRun {
            phases,
            ..WorkflowRun::default()
        });
        app.select(phases::ID);
        let max = app.scroll_extent().max;
        assert!(max > 60, "{max}");
        app.apply(Action::ScrollUp(10));
        assert_eq!(app.view(phases::ID).scroll, 10);
        for _ in 0..50 {
            app.apply(Action::ScrollUp(10));
        }
        assert_eq!(app.view(phases::ID).scroll, max);
        app.apply(Action::ScrollToEnd);
        assert_eq!(app.view(phases::ID).scroll, 0);
    }

    #[test]
    fn a_short_conversation_does_not_scroll_and_a_resize_clamps_the_offset() {
        let mut app = app_with_lines(3);
        app.apply(Action::ScrollUp(10));
        assert_eq!(scroll(&app), 0, "everything fits");
        let mut app = app_with_lines(60);
        app.apply(Action::ScrollToStart);
        let small_screen_max = scroll(&app);
        // A taller screen shows more at once: less to scroll, and the kept offset shrinks.
        app.set_screen(Rect::new(0, 0, 100, 60));
        assert!(scroll(&app) < small_screen_max);
        assert_eq!(scroll(&app), app.scroll_extent().max);
    }
}
