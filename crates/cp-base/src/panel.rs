//! The panel contract: what the sidebar lists, the main area draws, and the model reads.
//!
//! Drawing (`render`, `scroll_extent`, `find`) exists with the `draw` feature only: a front-end
//! that draws nothing (the hook, MCP, a headless run) still lists panels and reads their
//! `llm_context()`, without linking ratatui.

#[cfg(feature = "draw")]
use ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use ratatui::layout::Rect;

/// Fixed panels are always listed first and never close; dynamic ones come and go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PanelKind {
    Fixed,
    Dynamic,
}

/// View state the host owns for each panel, so rendering stays a pure function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PanelView {
    /// Lines scrolled up from the panel's natural position (0 = default view).
    pub scroll: usize,
    /// The panel has keyboard focus.
    pub focused: bool,
    /// Keys typed go to the panel (a console's process) instead of the host.
    pub passthrough: bool,
}

/// Where a panel rests when [`PanelView::scroll`] is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// At its newest (last) line, like a terminal; scrolling goes back in time (consoles,
    /// the conversation, run output).
    Bottom,
    /// At its first line, like a document; scrolling goes down (lists, reports, files).
    Top,
}

/// How far a panel can scroll in a given area, and from which end (see [`Panel::scroll_extent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrollExtent {
    /// The largest useful scroll offset: past it nothing new comes into view.
    pub max: usize,
    pub anchor: Anchor,
}

impl ScrollExtent {
    /// Rests at the bottom; `max` lines of history above.
    pub fn bottom(max: usize) -> Self {
        Self {
            max,
            anchor: Anchor::Bottom,
        }
    }

    /// Rests at the top; `max` lines below the first screen.
    pub fn top(max: usize) -> Self {
        Self {
            max,
            anchor: Anchor::Top,
        }
    }

    #[cfg(feature = "draw")]
    /// Rows `lines` take in a word-wrapping paragraph `width` columns wide. Word wrapping
    /// can need a row more than the characters do, so a wrapped line counts one extra: the
    /// estimate may leave a blank row at the end, never hide the last line.
    pub fn wrapped_rows(lines: &[ratatui::text::Line<'_>], width: u16) -> usize {
        let width = usize::from(width.max(1));
        lines
            .iter()
            .map(|line| {
                let chars = line.width();
                if chars <= width {
                    1
                } else {
                    chars.div_ceil(width) + 1
                }
            })
            .sum()
    }

    /// Search offsets for a panel whose rows `texts` are drawn `height` at a time, anchored
    /// as `anchor`: for each row holding `query` (case-insensitively), the offset that puts
    /// it at the top of the window (clamped to the content), ascending, no repeats.
    pub fn offsets_of_matches<'a>(
        texts: impl Iterator<Item = &'a str>,
        query: &str,
        height: u16,
        anchor: Anchor,
    ) -> Vec<usize> {
        let needle = query.to_lowercase();
        let texts: Vec<&str> = texts.collect();
        let max = Self::overflow(texts.len(), height);
        let mut offsets: Vec<usize> = texts
            .iter()
            .enumerate()
            .filter(|(_, text)| !needle.is_empty() && text.to_lowercase().contains(&needle))
            .map(|(row, _)| match anchor {
                Anchor::Top => row.min(max),
                // Row `row` at the top: the window ends `height` rows below it.
                Anchor::Bottom => max.saturating_sub(row),
            })
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        offsets
    }

    /// The scroll offset that shows `rows` content rows in a window `height` rows tall, top
    /// or bottom anchored alike: the rows that do not fit.
    pub fn overflow(rows: usize, height: u16) -> usize {
        rows.saturating_sub(usize::from(height))
    }
}

/// A view of a module's state, published as an immutable snapshot.
///
/// A module builds its panels in [`crate::Module::panels`]; the registry publishes them
/// after every call into the module, and the UI draws only those snapshots. So a panel must
/// not borrow its module: it owns what it draws (or shares state that background threads of
/// its own, never a tool call, update under a short lock, as a console's screen).
pub trait Panel: Send + Sync {
    /// Stable id, unique across modules, e.g. `callbacks` or `console:<uuid>`.
    fn id(&self) -> String;
    fn title(&self) -> String;
    fn kind(&self) -> PanelKind {
        PanelKind::Dynamic
    }
    /// Short status shown next to the title in the sidebar, e.g. `2/3`.
    fn badge(&self) -> Option<String> {
        None
    }
    /// What runs now that the agent's turn waits for, by name (e.g. `callback pytest`), for
    /// the progress line of the tool call that waits.
    fn activity(&self) -> Vec<String> {
        Vec::new()
    }
    #[cfg(feature = "draw")]
    /// Draws into `buf` within `area`. Must not do I/O or change state.
    ///
    /// `view.scroll` is at most [`Panel::scroll_extent`]'s `max` for the same area: the host
    /// clamps it.
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView);
    #[cfg(feature = "draw")]
    /// How far the panel scrolls when drawn in `area`, and from which end. The host clamps
    /// [`PanelView::scroll`] to it, so an offset never grows past the content (Page Down then
    /// moves back at once), and Home/End jump to the first and last line. The default is
    /// "bottom-anchored, bound unknown": such a panel must clamp while drawing.
    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let _ = area;
        ScrollExtent::bottom(usize::MAX)
    }
    #[cfg(feature = "draw")]
    /// The scroll offsets (as in [`PanelView::scroll`], ascending, no repeats) that bring
    /// each line holding `query` into view when drawn in `area`: `/` search in the panel.
    /// Empty when nothing matches, or the panel cannot be searched (the default).
    fn find(&self, area: Rect, query: &str) -> Vec<usize> {
        let _ = (area, query);
        Vec::new()
    }
    /// What the model sees of this panel, as markdown. Keep it bounded.
    fn llm_context(&self) -> String;
    /// Whether the panel accepts keyboard pass-through (consoles do).
    fn accepts_input(&self) -> bool {
        false
    }
    /// Text the person may edit in `$EDITOR` from this panel (the TUI's `e` key), with the
    /// tool call that applies the result; `None` when there is nothing to edit.
    fn external_edit(&self) -> Option<crate::ExternalEdit> {
        None
    }
}
