//! What is drawn over the screen: the yes/no questions ([`Confirm`]), and where a popup of a
//! given size goes ([`centered`]).

use ratatui::layout::Rect;

/// A yes/no question shown over the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    QuitWhileBusy,
    /// First start in an untrusted project: what trusting it allows (trust / not now).
    Trust(String),
    /// Revert a hunk or a file of the Changes panel: what will be lost.
    Revert(String),
}

/// A rectangle of `width`×`height` centred in `area` (clamped to it).
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}
