//! [`BINDINGS`]: every key the TUI knows, in one table (first match wins). Each row names a
//! command of the app's command table (`app::commands`); its help is the command's doc
//! unless the row says it in its own words.

use crossterm::event::KeyCode;

use super::super::line_edit::EditOp;
use super::action::Action;
use super::binding::{
    ANY_CHAR, Binding, CTRL, Command, Key, SHIFT, Scope, alt, bind, ch, ctrl, key,
};

use Scope::{Everywhere, Sidebar, Text};

/// Every key the TUI knows, first match wins. Help lists this table, with the docs of the
/// commands the keys run.
pub static BINDINGS: [Binding; 45] = [
    bind(
        &[ctrl('c')],
        "Ctrl-C",
        Everywhere,
        Command::Do(Action::Quit),
        None,
    ),
    bind(
        &[key(KeyCode::F(1))],
        "F1",
        Everywhere,
        Command::Do(Action::Help),
        None,
    ),
    bind(
        &[ctrl('p')],
        "Ctrl-P",
        Everywhere,
        Command::Do(Action::OpenPalette),
        None,
    ),
    bind(
        &[ctrl('o')],
        "Ctrl-O",
        Everywhere,
        Command::Do(Action::ToggleExpand),
        None,
    ),
    bind(
        &[key(KeyCode::F(2))],
        "F2",
        Everywhere,
        Command::Do(Action::ShowDialog),
        None,
    ),
    bind(
        &[key(KeyCode::F(5))],
        "F5",
        Everywhere,
        Command::Do(Action::UseOfferedAgent),
        None,
    ),
    bind(
        &[key(KeyCode::F(6))],
        "F6",
        Everywhere,
        Command::Do(Action::RememberOfferedAgent),
        None,
    ),
    bind(
        &[alt(KeyCode::Up)],
        "Alt-↑",
        Everywhere,
        Command::Do(Action::PickOfferedAgent(false)),
        None,
    ),
    bind(
        &[alt(KeyCode::Down)],
        "Alt-↓",
        Everywhere,
        Command::Do(Action::PickOfferedAgent(true)),
        None,
    ),
    bind(
        &[alt(ANY_CHAR.code)],
        "Alt-1…9",
        Everywhere,
        Command::SelectDigit,
        None,
    ),
    bind(
        &[
            alt(KeyCode::Enter),
            Key {
                code: KeyCode::Enter,
                mods: SHIFT,
            },
            ctrl('j'),
        ],
        "Alt-Enter, Shift-Enter, Ctrl-J",
        Everywhere,
        Command::Do(Action::Newline),
        None,
    ),
    bind(
        &[key(KeyCode::Enter)],
        "Enter",
        Everywhere,
        Command::Do(Action::Submit),
        None,
    ),
    bind(
        &[key(KeyCode::Tab)],
        "Tab",
        Everywhere,
        Command::Do(Action::FocusNext),
        None,
    ),
    bind(
        &[key(KeyCode::BackTab)],
        "Shift-Tab",
        Everywhere,
        Command::Do(Action::FocusPrev),
        None,
    ),
    bind(
        &[key(KeyCode::Esc)],
        "Esc",
        Everywhere,
        Command::Do(Action::Back),
        None,
    ),
    bind(
        &[key(KeyCode::PageUp)],
        "PgUp",
        Everywhere,
        Command::Do(Action::ScrollUp(10)),
        None,
    ),
    bind(
        &[key(KeyCode::PageDown)],
        "PgDn",
        Everywhere,
        Command::Do(Action::ScrollDown(10)),
        None,
    ),
    // Text fields: the message, the palette, a dialog's feedback.
    bind(
        &[ctrl('a'), key(KeyCode::Home)],
        "Ctrl-A, Home",
        Text,
        Command::Do(Action::Home),
        None,
    ),
    bind(
        &[ctrl('e'), key(KeyCode::End)],
        "Ctrl-E, End",
        Text,
        Command::Do(Action::End),
        None,
    ),
    bind(
        &[
            alt(KeyCode::Char('b')),
            Key {
                code: KeyCode::Left,
                mods: CTRL,
            },
        ],
        "Alt-B, Ctrl-←",
        Text,
        Command::Do(Action::Edit(EditOp::WordLeft)),
        None,
    ),
    bind(
        &[
            alt(KeyCode::Char('f')),
            Key {
                code: KeyCode::Right,
                mods: CTRL,
            },
        ],
        "Alt-F, Ctrl-→",
        Text,
        Command::Do(Action::Edit(EditOp::WordRight)),
        None,
    ),
    bind(
        &[ctrl('w')],
        "Ctrl-W",
        Text,
        Command::Do(Action::Edit(EditOp::KillWordBack)),
        None,
    ),
    bind(
        &[alt(KeyCode::Backspace)],
        "Alt-Backspace",
        Text,
        Command::Do(Action::Edit(EditOp::KillAlnumWordBack)),
        None,
    ),
    bind(
        &[alt(KeyCode::Char('d'))],
        "Alt-D",
        Text,
        Command::Do(Action::Edit(EditOp::KillWordForward)),
        None,
    ),
    bind(
        &[ctrl('u')],
        "Ctrl-U",
        Text,
        Command::Do(Action::Edit(EditOp::KillToLineStart)),
        None,
    ),
    bind(
        &[ctrl('k')],
        "Ctrl-K",
        Text,
        Command::Do(Action::Edit(EditOp::KillToLineEnd)),
        None,
    ),
    bind(
        &[ctrl('y')],
        "Ctrl-Y",
        Text,
        Command::Do(Action::Edit(EditOp::Yank)),
        None,
    ),
    bind(
        &[key(KeyCode::Left)],
        "←",
        Text,
        Command::Do(Action::Left),
        None,
    ),
    bind(
        &[key(KeyCode::Right)],
        "→",
        Text,
        Command::Do(Action::Right),
        None,
    ),
    bind(
        &[key(KeyCode::Up)],
        "↑",
        Text,
        Command::Do(Action::Up),
        None,
    ),
    bind(
        &[key(KeyCode::Down)],
        "↓",
        Text,
        Command::Do(Action::Down),
        None,
    ),
    bind(
        &[key(KeyCode::Backspace)],
        "Backspace",
        Text,
        Command::Do(Action::Backspace),
        None,
    ),
    bind(
        &[key(KeyCode::Delete)],
        "Delete",
        Text,
        Command::Do(Action::Delete),
        None,
    ),
    bind(
        &[ANY_CHAR],
        "any character",
        Text,
        Command::Type,
        Some("type it"),
    ),
    // The sidebar.
    bind(
        &[key(KeyCode::Up), ch('k')],
        "↑, k",
        Sidebar,
        Command::Do(Action::SelectPrev),
        None,
    ),
    bind(
        &[key(KeyCode::Down), ch('j')],
        "↓, j",
        Sidebar,
        Command::Do(Action::SelectNext),
        None,
    ),
    bind(
        &[ANY_CHAR],
        "1…9",
        Sidebar,
        Command::SelectDigit,
        Some("show panel 1…9"),
    ),
    bind(
        &[ch('g'), key(KeyCode::Home)],
        "g, Home",
        Sidebar,
        Command::Do(Action::ScrollToStart),
        None,
    ),
    bind(
        &[ch('G'), key(KeyCode::End)],
        "G, End",
        Sidebar,
        Command::Do(Action::ScrollToEnd),
        None,
    ),
    bind(
        &[ch(':')],
        ":",
        Sidebar,
        Command::Do(Action::OpenPalette),
        Some("command palette"),
    ),
    bind(
        &[ch('x'), key(KeyCode::Delete)],
        "x, Delete",
        Sidebar,
        Command::Do(Action::ClosePanel),
        None,
    ),
    bind(
        &[ch('e')],
        "e",
        Sidebar,
        Command::Do(Action::EditExternally),
        None,
    ),
    bind(&[ch('/')], "/", Sidebar, Command::Do(Action::Search), None),
    bind(
        &[ch('n')],
        "n",
        Sidebar,
        Command::Do(Action::SearchNext),
        None,
    ),
    bind(
        &[ch('N')],
        "N",
        Sidebar,
        Command::Do(Action::SearchPrev),
        None,
    ),
];
