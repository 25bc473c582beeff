//! Panel navigation: where keys go (input or sidebar), the sidebar's rows, which panel is selected, each panel's scroll, and
//! closing panels without waiting for a module a tool holds.

pub(crate) mod sidebar_view;

use std::collections::{BTreeMap, HashMap, VecDeque};

use cp_base::{Anchor, Busy, Panel as _, PanelKind, PanelView, Registry, ScrollExtent, Views};

use crate::changes::Changes;
use crate::conversation::Conversation;
use crate::phases::Phases;

/// Where typed keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The conversation input line (the default).
    Input,
    /// The sidebar: arrows and digits pick a panel.
    Sidebar,
}

/// One row of the sidebar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidebarEntry {
    pub id: String,
    pub title: String,
    pub badge: Option<String>,
    pub kind: PanelKind,
}

/// Sidebar rows: the conversation, fixed module panels, the Changes panel, the Phases panel
/// (during a workflow run), then dynamic ones (so the fixed panels keep their numbers and a
/// console is still the last row).
pub fn sidebar(
    conversation: &Conversation,
    changes: &Changes,
    phases: Option<&Phases>,
    views: &Views,
) -> Vec<SidebarEntry> {
    let mut entries = vec![SidebarEntry {
        id: conversation.id(),
        title: conversation.title(),
        badge: conversation.badge(),
        kind: PanelKind::Fixed,
    }];
    let panels = views.panels();
    let fixed = panels
        .iter()
        .take_while(|p| p.kind() == PanelKind::Fixed)
        .count();
    let entry = |panel: &std::sync::Arc<dyn cp_base::Panel>| SidebarEntry {
        id: panel.id(),
        title: panel.title(),
        badge: panel.badge(),
        kind: panel.kind(),
    };
    entries.extend(panels[..fixed].iter().map(entry));
    entries.push(SidebarEntry {
        id: crate::changes::ID.to_owned(),
        title: "Changes".to_owned(),
        badge: changes.badge(),
        kind: PanelKind::Fixed,
    });
    if let Some(phases) = phases.filter(|p| !p.is_empty()) {
        entries.push(SidebarEntry {
            id: crate::phases::ID.to_owned(),
            title: "Phases".to_owned(),
            badge: phases.badge(),
            kind: PanelKind::Fixed,
        });
    }
    entries.extend(panels[fixed..].iter().map(entry));
    entries
}

/// What became of a request to close the selected panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    Closed,
    /// Its module is busy; the close happens on a later tick.
    Queued,
    /// Fixed panels and the conversation never close.
    Refused,
}

/// The selected panel and the host-owned view state of every panel.
#[derive(Debug, Clone)]
pub struct Navigation {
    selected: String,
    views: HashMap<String, PanelView>,
    /// Panels to close whose module was busy, oldest first.
    pending_close: VecDeque<String>,
}

/// The panel selected at start and after its panel closes.
pub const HOME: &str = "conversation";

impl Default for Navigation {
    fn default() -> Self {
        Self {
            selected: HOME.into(),
            views: HashMap::new(),
            pending_close: VecDeque::new(),
        }
    }
}

impl Navigation {
    pub fn selected(&self) -> &str {
        &self.selected
    }

    pub fn select(&mut self, id: &str) {
        id.clone_into(&mut self.selected);
    }

    /// Selects the row at `index`, if there is one.
    pub fn select_index(&mut self, entries: &[SidebarEntry], index: usize) {
        if let Some(entry) = entries.get(index) {
            self.selected.clone_from(&entry.id);
        }
    }

    /// Moves the selection `delta` rows, stopping at the ends.
    pub fn select_offset(&mut self, entries: &[SidebarEntry], delta: isize) {
        let current = entries
            .iter()
            .position(|e| e.id == self.selected)
            .unwrap_or(0);
        let next = current
            .saturating_add_signed(delta)
            .min(entries.len().saturating_sub(1));
        self.select_index(entries, next);
    }

    /// Scrolls the selected panel `lines` towards its first line (`up`) or its last, never
    /// past either end of `extent`.
    pub fn scroll_by(&mut self, lines: usize, up: bool, extent: ScrollExtent) {
        let view = self.views.entry(self.selected.clone()).or_default();
        // A bottom-anchored panel counts lines up from its end; a top-anchored one down from
        // its start.
        let grow = up == (extent.anchor == Anchor::Bottom);
        let current = view.scroll.min(extent.max);
        view.scroll = if grow {
            current.saturating_add(lines).min(extent.max)
        } else {
            current.saturating_sub(lines)
        };
    }

    /// Shows the selected panel's first retained line (Home, `g`).
    pub fn scroll_to_start(&mut self, extent: ScrollExtent) {
        self.views.entry(self.selected.clone()).or_default().scroll = match extent.anchor {
            Anchor::Bottom => extent.max,
            Anchor::Top => 0,
        };
    }

    /// Shows the selected panel's last line (End, `G`); a console follows its output again.
    pub fn scroll_to_end(&mut self, extent: ScrollExtent) {
        self.views.entry(self.selected.clone()).or_default().scroll = match extent.anchor {
            Anchor::Bottom => 0,
            Anchor::Top => extent.max,
        };
    }

    /// Scrolls the selected panel to `offset` (a search match), within `extent`.
    pub fn scroll_to(&mut self, offset: usize, extent: ScrollExtent) {
        self.views.entry(self.selected.clone()).or_default().scroll = offset.min(extent.max);
    }

    /// Keeps panel `id`'s offset within `max` (its content can shrink: a resize rewraps).
    pub fn clamp(&mut self, id: &str, max: usize) {
        if let Some(view) = self.views.get_mut(id) {
            view.scroll = view.scroll.min(max);
        }
    }

    /// The view state of panel `id`; it has focus when the sidebar has and it is selected.
    pub fn view(&self, id: &str, sidebar_focused: bool) -> PanelView {
        let mut view = self.views.get(id).copied().unwrap_or_default();
        view.focused = sidebar_focused && self.selected == id;
        view
    }

    /// Scroll offsets to save, by panel id.
    pub fn scrolls(&self) -> BTreeMap<String, usize> {
        self.views
            .iter()
            .map(|(id, v)| (id.clone(), v.scroll))
            .collect()
    }

    /// Restores a saved selection and scroll offsets.
    pub fn restore(&mut self, selected: String, scrolls: BTreeMap<String, usize>) {
        if !selected.is_empty() {
            self.selected = selected;
        }
        for (id, scroll) in scrolls {
            self.views.entry(id).or_default().scroll = scroll;
        }
    }

    /// Closes the selected panel, or queues the close when its module is busy.
    pub fn close_selected(&mut self, registry: &Registry) -> Close {
        let id = self.selected.clone();
        if self.pending_close.contains(&id) {
            return Close::Queued;
        }
        match registry.try_close_panel(&id) {
            Ok(true) => {
                self.closed(&id);
                Close::Closed
            }
            Ok(false) => Close::Refused,
            Err(Busy) => {
                self.pending_close.push_back(id);
                Close::Queued
            }
        }
    }

    /// Retries queued closes, in order, stopping at the first still-busy module. Returns
    /// whether a panel closed.
    pub fn retry_closes(&mut self, registry: &Registry) -> bool {
        let mut changed = false;
        while let Some(id) = self.pending_close.front().cloned() {
            match registry.try_close_panel(&id) {
                Err(Busy) => break,
                Ok(closed) => {
                    self.pending_close.pop_front();
                    if closed {
                        self.closed(&id);
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    fn closed(&mut self, id: &str) {
        if self.selected == id {
            self.selected = HOME.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scroll(nav: &Navigation) -> usize {
        nav.view(nav.selected(), false).scroll
    }

    #[test]
    fn scrolling_up_stops_at_the_first_line_and_down_moves_back_at_once() {
        let mut nav = Navigation::default();
        let extent = ScrollExtent::bottom(25);
        for _ in 0..1000 {
            nav.scroll_by(10, true, extent);
        }
        assert_eq!(scroll(&nav), 25, "never past the content");
        nav.scroll_by(10, false, extent);
        assert_eq!(scroll(&nav), 15, "one PgDn moves at once");
        nav.scroll_to_start(extent);
        assert_eq!(scroll(&nav), 25);
        nav.scroll_to_end(extent);
        assert_eq!(scroll(&nav), 0);
        nav.scroll_by(10, false, extent);
        assert_eq!(scroll(&nav), 0);
    }

    #[test]
    fn a_top_anchored_panel_scrolls_down_on_pgdn_and_home_is_its_top() {
        let mut nav = Navigation::default();
        let extent = ScrollExtent::top(7);
        nav.scroll_by(10, false, extent);
        assert_eq!(scroll(&nav), 7);
        nav.scroll_by(3, true, extent);
        assert_eq!(scroll(&nav), 4);
        nav.scroll_to_start(extent);
        assert_eq!(scroll(&nav), 0);
        nav.scroll_to_end(extent);
        assert_eq!(scroll(&nav), 7);
    }

    #[test]
    fn a_saved_offset_beyond_shrunk_content_is_clamped() {
        let mut nav = Navigation::default();
        nav.restore(String::new(), BTreeMap::from([(HOME.to_owned(), 61_000)]));
        assert_eq!(scroll(&nav), 61_000);
        nav.clamp(HOME, 40);
        assert_eq!(scroll(&nav), 40);
        // An offset past the end counts from the end when scrolling, not from 61,000.
        nav.restore(String::new(), BTreeMap::from([(HOME.to_owned(), 61_000)]));
        nav.scroll_by(10, false, ScrollExtent::bottom(40));
        assert_eq!(scroll(&nav), 30);
    }
}
