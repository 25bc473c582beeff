//! A row of the key table ([`Binding`]): its keys, where it holds, what it does, its help; and
//! the small builders the table is written with.

use crossterm::event::{KeyCode, KeyModifiers};

use super::action::{Action, KeyContext};

/// Where a binding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In text fields and in the sidebar.
    Everywhere,
    Text,
    Sidebar,
    /// The Changes panel (listed before the others, so its keys win there).
    Changes,
}

impl Scope {
    /// Whether a binding of this scope holds in `context`.
    pub(crate) fn holds_in(self, context: KeyContext) -> bool {
        matches!(
            (self, context),
            (
                Self::Everywhere,
                KeyContext::Text | KeyContext::Sidebar | KeyContext::Changes
            ) | (Self::Text, KeyContext::Text)
                | (Self::Sidebar, KeyContext::Sidebar)
                | (Self::Changes, KeyContext::Changes)
        )
    }
}

/// One key: a code and the modifiers it needs. Ctrl and Alt must match exactly; Shift only
/// when the key asks for it (terminals disagree on reporting it with letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub(super) code: KeyCode,
    pub(super) mods: KeyModifiers,
}

/// What a binding does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Do(Action),
    /// A digit key selects that sidebar entry.
    SelectDigit,
    /// Any printable key is typed.
    Type,
}

impl Command {
    /// The name of the command the keys run (in the app's command table, `app::commands`).
    pub fn command_name(&self) -> Option<&'static str> {
        match self {
            Self::Do(action) => action.command_name(),
            Self::SelectDigit => Some("select_panel"),
            Self::Type => Some("insert_char"),
        }
    }
}

/// A row of the key table: the keys, where they hold, what they do, and how help says it.
#[derive(Debug)]
pub struct Binding {
    pub keys: &'static [Key],
    /// How help shows the keys, e.g. `Alt-B, Ctrl-←`.
    pub label: &'static str,
    pub scope: Scope,
    pub command: Command,
    /// Help's words for these keys when the command's doc does not fit them (`:` in the
    /// sidebar is the palette without the note on where else it opens).
    pub note: Option<&'static str>,
}

impl Binding {
    /// What help says the keys do: the row's note, or the doc `doc` gives for the command
    /// they run.
    pub fn help(&self, doc: impl Fn(&str) -> Option<&'static str>) -> &'static str {
        self.note
            .or_else(|| doc(self.command.command_name()?))
            .unwrap_or("")
    }
}

pub(super) const NONE: KeyModifiers = KeyModifiers::NONE;
pub(super) const CTRL: KeyModifiers = KeyModifiers::CONTROL;
pub(super) const ALT: KeyModifiers = KeyModifiers::ALT;
pub(super) const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

pub(super) const fn key(code: KeyCode) -> Key {
    Key { code, mods: NONE }
}
pub(super) const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: CTRL,
    }
}
pub(super) const fn alt(code: KeyCode) -> Key {
    Key { code, mods: ALT }
}
pub(super) const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}
/// Stands for the digits 1–9 in [`Command::SelectDigit`] and any char in [`Command::Type`].
pub(super) const ANY_CHAR: Key = ch('\0');

pub(super) const fn bind(
    keys: &'static [Key],
    label: &'static str,
    scope: Scope,
    command: Command,
    note: Option<&'static str>,
) -> Binding {
    Binding {
        keys,
        label,
        scope,
        command,
        note,
    }
}
