//! Where the last frame drew what, so a mouse click finds what it landed on.
//!
//! The view records the regions while it draws (`view::draw_and_map`), from the very
//! rectangles it draws into, so hit-testing cannot drift from the picture. Regions drawn
//! later lie on top: a modal overlay first covers the whole screen with
//! [`Target::Overlay`], then records its own clickable rows above that cover.

use ratatui::layout::{Position, Rect};

/// What a click can land on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A sidebar row: the panel with this id.
    Panel(String),
    /// The main area showing the selected panel.
    PanelArea,
    /// The message input box.
    Input,
    /// An option of the approval dialog (0-based).
    DialogChoice(usize),
    /// A file to review in the approval dialog (0-based).
    DialogFile(usize),
    /// A file of the Changes panel's list (its index in the snapshot).
    ChangesFile(usize),
    /// A row of the Changes panel's diff (an index into its rows).
    DiffRow(usize),
    /// Part of a modal overlay with nothing clickable: the click does nothing.
    Overlay,
}

/// The clickable regions of one frame, in drawing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HitMap {
    regions: Vec<(Rect, Target)>,
}

impl HitMap {
    /// Records that `target` was drawn in `area` (on top of everything recorded before).
    pub fn push(&mut self, area: Rect, target: Target) {
        if !area.is_empty() {
            self.regions.push((area, target));
        }
    }

    /// Records a modal overlay over `area`: clicks there reach nothing recorded before.
    pub fn cover(&mut self, area: Rect) {
        self.push(area, Target::Overlay);
    }

    /// The topmost target at a cell, if any.
    pub fn at(&self, column: u16, row: u16) -> Option<&Target> {
        let cell = Position::new(column, row);
        self.regions
            .iter()
            .rev()
            .find(|(area, _)| area.contains(cell))
            .map(|(_, target)| target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_topmost_region_wins_and_an_overlay_hides_what_is_under_it() {
        let mut map = HitMap::default();
        map.push(Rect::new(0, 0, 10, 1), Target::Panel("conversation".into()));
        map.push(Rect::new(0, 1, 10, 1), Target::Panel("callbacks".into()));
        map.push(Rect::new(10, 0, 30, 10), Target::PanelArea);
        assert_eq!(map.at(3, 1), Some(&Target::Panel("callbacks".into())));
        assert_eq!(map.at(9, 0), Some(&Target::Panel("conversation".into())));
        assert_eq!(map.at(10, 0), Some(&Target::PanelArea));
        assert_eq!(map.at(3, 5), None);
        map.cover(Rect::new(0, 0, 40, 10));
        map.push(Rect::new(5, 4, 20, 1), Target::DialogChoice(1));
        assert_eq!(map.at(3, 1), Some(&Target::Overlay));
        assert_eq!(map.at(5, 4), Some(&Target::DialogChoice(1)));
        assert_eq!(map.at(25, 4), Some(&Target::Overlay));
    }

    #[test]
    fn empty_regions_are_never_hit() {
        let mut map = HitMap::default();
        map.push(Rect::new(2, 2, 0, 5), Target::Input);
        assert_eq!(map.at(2, 2), None);
    }
}
