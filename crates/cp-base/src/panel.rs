//! The panel contract: what the sidebar lists, the main area draws, and the model reads.

use ratatui::buffer::Buffer;
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
    /// Draws into `buf` within `area`. Must not do I/O or change state.
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView);
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
