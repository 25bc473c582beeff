//! The key help overlay's state: which focus it describes and how far it is scrolled.
//! Its rows come from the keymap's own table with the command table's docs
//! (`keymap::help_rows`, `app::commands::doc`), drawn by `help_view.rs`.

pub(crate) mod help_view;

use crate::keymap::{Action, KeyContext};

/// The open help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Help {
    /// The focus whose keys are listed (where the keys went when help was opened).
    pub context: KeyContext,
    /// Rows scrolled past at the top; the view clamps it to the rows there are.
    pub scroll: usize,
}

impl Help {
    pub fn new(context: KeyContext) -> Self {
        Self { context, scroll: 0 }
    }

    /// Applies a key's action while help is open. Returns whether help stays open: Esc, F1,
    /// `?`, `q` and Ctrl-C close it; arrows and PgUp/PgDn scroll; everything else is ignored.
    pub fn apply(&mut self, action: &Action) -> bool {
        match action {
            Action::Back | Action::Help | Action::Quit | Action::Char('?' | 'q') => return false,
            Action::Up | Action::SelectPrev => self.scroll = self.scroll.saturating_sub(1),
            Action::Down | Action::SelectNext => self.scroll += 1,
            Action::ScrollUp(n) => self.scroll = self.scroll.saturating_sub(*n),
            Action::ScrollDown(n) => self.scroll += n,
            _ => {}
        }
        true
    }
}
