//! Raw key codes become [`Action`]s here, and only here, through one table, [`BINDINGS`].
//! Each action runs a command of the app's command table (`app::commands`); the help overlay
//! lists the key table with those commands' docs, so help can never drift from the keys.
//!
//! No key that edits text (Ctrl-W, Ctrl-K, Ctrl-U, …) does anything else while a text field
//! has the keys: closing a panel is `x` or Delete in the sidebar, and a hidden workflow
//! approval gate comes back with F2.

mod action;
mod binding;
mod key_table;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};

pub use action::{Action, KeyContext, ReviewKey};
use binding::{ALT, CTRL, SHIFT};
pub use binding::{Binding, Command, Key, Scope};
pub use key_table::BINDINGS;

/// Maps a key press to an action in `context`.
pub fn map_key(key: KeyEvent, context: KeyContext) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if context == KeyContext::Confirm {
        return Some(confirm_key(key));
    }
    // `?` in the sidebar opens help; in a text field it is typed (the app opens help when
    // the input is empty).
    if matches!(context, KeyContext::Sidebar | KeyContext::Changes)
        && key.code == KeyCode::Char('?')
    {
        return Some(Action::Help);
    }
    BINDINGS
        .iter()
        .filter(|b| b.scope.holds_in(context))
        .find_map(|b| b.keys.iter().find_map(|k| matches(b, *k, key)))
}

/// The action of binding `b` if `event` is its key `k`.
fn matches(b: &Binding, k: Key, event: KeyEvent) -> Option<Action> {
    let mods = event.modifiers;
    let ctrl_alt = CTRL | ALT;
    match (&b.command, event.code) {
        (Command::SelectDigit, KeyCode::Char(c @ '1'..='9'))
            if mods & ctrl_alt == k.mods & ctrl_alt =>
        {
            Some(Action::SelectPanel(digit(c)))
        }
        (Command::Type, KeyCode::Char(c)) if !mods.contains(CTRL) => Some(Action::Char(c)),
        (Command::SelectDigit | Command::Type, _) => None,
        (Command::Do(action), code) => (code == k.code
            && mods & ctrl_alt == k.mods & ctrl_alt
            && mods.contains(k.mods & SHIFT))
        .then(|| action.clone()),
    }
}

fn confirm_key(key: KeyEvent) -> Action {
    match key.code {
        KeyCode::Char('y' | 'Y') => Action::Yes,
        // Ctrl-C means quit: it confirms a quit, but never answers another question yes.
        KeyCode::Char('c') if key.modifiers.contains(CTRL) => Action::Quit,
        _ => Action::No,
    }
}

fn digit(c: char) -> usize {
    (c as usize).saturating_sub('1' as usize)
}

/// The rows of help for `context`: keys and what they do (a row's note, or `doc` of the
/// command it runs). The focus's own keys come first, then those that hold everywhere, each
/// group in table order: F1 in the sidebar shows the sidebar's keys without scrolling.
pub fn help_rows(
    context: KeyContext,
    doc: impl Fn(&str) -> Option<&'static str>,
) -> Vec<(&'static str, &'static str)> {
    let mut bindings: Vec<_> = BINDINGS
        .iter()
        .filter(|b| b.scope.holds_in(context))
        .collect();
    bindings.sort_by_key(|b| b.scope == Scope::Everywhere);
    let mut rows: Vec<(&str, &str)> = bindings
        .into_iter()
        .map(|b| (b.label, b.help(&doc)))
        .collect();
    if matches!(context, KeyContext::Sidebar | KeyContext::Changes) {
        rows.push(("?", "this help"));
    }
    rows
}

/// The wheel scrolls the main area; a left click becomes a [`Action::Click`]; other mouse
/// events are ignored.
pub fn map_mouse(mouse: MouseEvent) -> Option<Action> {
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => Some(Action::Click {
            column: mouse.column,
            row: mouse.row,
        }),
        MouseEventKind::ScrollUp => Some(Action::ScrollUp(3)),
        MouseEventKind::ScrollDown => Some(Action::ScrollDown(3)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;

    use super::binding::NONE;
    use super::*;
    use crate::input::line_edit::EditOp;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn the_same_key_means_different_things_by_context() {
        let one = key(KeyCode::Char('1'), KeyModifiers::NONE);
        assert_eq!(map_key(one, KeyContext::Text), Some(Action::Char('1')));
        assert_eq!(
            map_key(one, KeyContext::Sidebar),
            Some(Action::SelectPanel(0))
        );
        let y = key(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(map_key(y, KeyContext::Confirm), Some(Action::Yes));
        assert_eq!(
            map_key(
                key(KeyCode::Char('n'), KeyModifiers::NONE),
                KeyContext::Confirm
            ),
            Some(Action::No)
        );
        let ctrl_c = key(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(map_key(ctrl_c, KeyContext::Text), Some(Action::Quit));
        let alt3 = key(KeyCode::Char('3'), KeyModifiers::ALT);
        assert_eq!(
            map_key(alt3, KeyContext::Text),
            Some(Action::SelectPanel(2))
        );
    }

    #[test]
    fn no_key_that_edits_text_closes_a_panel_or_does_anything_else() {
        let edits = [
            (KeyCode::Char('w'), CTRL, EditOp::KillWordBack),
            (KeyCode::Char('k'), CTRL, EditOp::KillToLineEnd),
            (KeyCode::Char('u'), CTRL, EditOp::KillToLineStart),
            (KeyCode::Char('y'), CTRL, EditOp::Yank),
            (KeyCode::Char('b'), ALT, EditOp::WordLeft),
            (KeyCode::Char('f'), ALT, EditOp::WordRight),
            (KeyCode::Left, CTRL, EditOp::WordLeft),
            (KeyCode::Right, CTRL, EditOp::WordRight),
            (KeyCode::Backspace, ALT, EditOp::KillAlnumWordBack),
        ];
        for (code, mods, op) in edits {
            assert_eq!(
                map_key(key(code, mods), KeyContext::Text),
                Some(Action::Edit(op)),
                "{mods:?} {code:?}"
            );
        }
        assert_eq!(
            map_key(key(KeyCode::Char('a'), CTRL), KeyContext::Text),
            Some(Action::Home)
        );
        // Closing a panel is bound only where nothing is typed.
        for b in &BINDINGS {
            if b.command == Command::Do(Action::ClosePanel) {
                assert_eq!(b.scope, Scope::Sidebar, "{}", b.label);
            }
        }
        assert_eq!(
            map_key(key(KeyCode::Char('x'), NONE), KeyContext::Sidebar),
            Some(Action::ClosePanel)
        );
        assert_eq!(
            map_key(key(KeyCode::Char('x'), NONE), KeyContext::Text),
            Some(Action::Char('x'))
        );
        assert_eq!(
            map_key(key(KeyCode::Char('w'), CTRL), KeyContext::Sidebar),
            None
        );
    }

    #[test]
    fn newline_keys_win_over_enter_and_help_opens_from_f1() {
        assert_eq!(
            map_key(key(KeyCode::Enter, SHIFT), KeyContext::Text),
            Some(Action::Newline)
        );
        assert_eq!(
            map_key(key(KeyCode::Enter, ALT), KeyContext::Text),
            Some(Action::Newline)
        );
        assert_eq!(
            map_key(key(KeyCode::Enter, NONE), KeyContext::Text),
            Some(Action::Submit)
        );
        assert_eq!(
            map_key(key(KeyCode::Char('G'), SHIFT), KeyContext::Sidebar),
            Some(Action::ScrollToEnd)
        );
        for context in [KeyContext::Text, KeyContext::Sidebar] {
            assert_eq!(
                map_key(key(KeyCode::F(1), NONE), context),
                Some(Action::Help)
            );
        }
        assert_eq!(
            map_key(key(KeyCode::Char('?'), NONE), KeyContext::Sidebar),
            Some(Action::Help)
        );
    }
}
