//! Raw key codes become [`Action`]s here, and only here, through one table, [`BINDINGS`].
//! The help overlay lists the same table, so help can never drift from the keys.
//!
//! No key that edits text (Ctrl-W, Ctrl-K, Ctrl-U, …) does anything else while a text field
//! has the keys: closing a panel is `x` or Delete in the sidebar, and a hidden workflow
//! checkpoint comes back with F2.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::line_edit::EditOp;

/// What the user asked for, independent of the key that asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A left click at a cell (column, row); what it lands on comes from the last frame's
    /// hit map.
    Click {
        column: u16,
        row: u16,
    },
    Quit,
    OpenPalette,
    /// F1 (anywhere), `?` (empty input, sidebar): the key help for the current focus.
    Help,
    /// Esc: close what is open, or return focus to the input line.
    Back,
    FocusNext,
    FocusPrev,
    /// Select the n-th sidebar entry (0-based).
    SelectPanel(usize),
    SelectNext,
    SelectPrev,
    ScrollUp(usize),
    ScrollDown(usize),
    /// Home, `g` (sidebar): the selected panel's first retained line.
    ScrollToStart,
    /// End, `G` (sidebar): the selected panel's last line.
    ScrollToEnd,
    /// `/` (sidebar): search in the selected panel.
    Search,
    /// `n` (sidebar): the next match of the search, further from the panel's resting end.
    SearchNext,
    /// `N` (sidebar): the previous match.
    SearchPrev,
    /// Enter: submit the input or the palette, or confirm a selection.
    Submit,
    Newline,
    Char(char),
    Backspace,
    Delete,
    Left,
    Right,
    Home,
    End,
    /// A readline editing key in a text field (Ctrl-W, Ctrl-U, Alt-B, …).
    Edit(EditOp),
    /// Up/Down inside a text field (history, palette selection).
    Up,
    Down,
    Paste(String),
    /// Ctrl-O: expand or collapse the last tool call in the conversation.
    ToggleExpand,
    /// `x` or Delete in the sidebar: close the selected dynamic panel.
    ClosePanel,
    /// F2: show a workflow checkpoint that was hidden to look at files.
    ShowDialog,
    /// `e` in the sidebar: edit what the selected panel offers (the script of the callback
    /// open in the Callbacks panel's editor) in `$EDITOR`.
    EditExternally,
    /// Answer to a yes/no question.
    Yes,
    No,
}

/// Where keys go right now; the same key means different things in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    /// Typing in the input line, the palette or a dialog's feedback.
    Text,
    /// Moving in the sidebar.
    Sidebar,
    /// A yes/no question is open.
    Confirm,
}

/// Where a binding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// In text fields and in the sidebar.
    Everywhere,
    Text,
    Sidebar,
}

impl Scope {
    fn holds_in(self, context: KeyContext) -> bool {
        matches!(
            (self, context),
            (Self::Everywhere, KeyContext::Text | KeyContext::Sidebar)
                | (Self::Text, KeyContext::Text)
                | (Self::Sidebar, KeyContext::Sidebar)
        )
    }
}

/// One key: a code and the modifiers it needs. Ctrl and Alt must match exactly; Shift only
/// when the key asks for it (terminals disagree on reporting it with letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    code: KeyCode,
    mods: KeyModifiers,
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

/// A row of the key table: the keys, where they hold, what they do, and the help text.
#[derive(Debug)]
pub struct Binding {
    pub keys: &'static [Key],
    /// How help shows the keys, e.g. `Alt-B, Ctrl-←`.
    pub label: &'static str,
    pub scope: Scope,
    pub command: Command,
    pub help: &'static str,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

const fn key(code: KeyCode) -> Key {
    Key { code, mods: NONE }
}
const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: CTRL,
    }
}
const fn alt(code: KeyCode) -> Key {
    Key { code, mods: ALT }
}
const fn ch(c: char) -> Key {
    key(KeyCode::Char(c))
}
/// Stands for the digits 1–9 in [`Command::SelectDigit`] and any char in [`Command::Type`].
const ANY_CHAR: Key = ch('\0');

const fn bind(
    keys: &'static [Key],
    label: &'static str,
    scope: Scope,
    command: Command,
    help: &'static str,
) -> Binding {
    Binding {
        keys,
        label,
        scope,
        command,
        help,
    }
}

use Scope::{Everywhere, Sidebar, Text};

/// Every key the TUI knows, first match wins. Help lists this table.
pub static BINDINGS: [Binding; 41] = [
    bind(
        &[ctrl('c')],
        "Ctrl-C",
        Everywhere,
        Command::Do(Action::Quit),
        "quit (asks first while work runs)",
    ),
    bind(
        &[key(KeyCode::F(1))],
        "F1",
        Everywhere,
        Command::Do(Action::Help),
        "this help (also ? on an empty input)",
    ),
    bind(
        &[ctrl('p')],
        "Ctrl-P",
        Everywhere,
        Command::Do(Action::OpenPalette),
        "command palette: run any tool (also : on an empty input)",
    ),
    bind(
        &[ctrl('o')],
        "Ctrl-O",
        Everywhere,
        Command::Do(Action::ToggleExpand),
        "expand or collapse the last tool result",
    ),
    bind(
        &[key(KeyCode::F(2))],
        "F2",
        Everywhere,
        Command::Do(Action::ShowDialog),
        "show the waiting workflow checkpoint",
    ),
    bind(
        &[alt(ANY_CHAR.code)],
        "Alt-1…9",
        Everywhere,
        Command::SelectDigit,
        "show panel 1…9 of the sidebar",
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
        "new line in the text",
    ),
    bind(
        &[key(KeyCode::Enter)],
        "Enter",
        Everywhere,
        Command::Do(Action::Submit),
        "send the message, run the palette's tool, confirm",
    ),
    bind(
        &[key(KeyCode::Tab)],
        "Tab",
        Everywhere,
        Command::Do(Action::FocusNext),
        "input ⇄ sidebar; in the palette: complete the tool name",
    ),
    bind(
        &[key(KeyCode::BackTab)],
        "Shift-Tab",
        Everywhere,
        Command::Do(Action::FocusPrev),
        "input ⇄ sidebar",
    ),
    bind(
        &[key(KeyCode::Esc)],
        "Esc",
        Everywhere,
        Command::Do(Action::Back),
        "close what is open; cancel the agent's turn",
    ),
    bind(
        &[key(KeyCode::PageUp)],
        "PgUp",
        Everywhere,
        Command::Do(Action::ScrollUp(10)),
        "scroll the panel up",
    ),
    bind(
        &[key(KeyCode::PageDown)],
        "PgDn",
        Everywhere,
        Command::Do(Action::ScrollDown(10)),
        "scroll the panel down",
    ),
    // Text fields: the message, the palette, a dialog's feedback.
    bind(
        &[ctrl('a'), key(KeyCode::Home)],
        "Ctrl-A, Home",
        Text,
        Command::Do(Action::Home),
        "start of the line",
    ),
    bind(
        &[ctrl('e'), key(KeyCode::End)],
        "Ctrl-E, End",
        Text,
        Command::Do(Action::End),
        "end of the line",
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
        "back a word",
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
        "forward a word",
    ),
    bind(
        &[ctrl('w')],
        "Ctrl-W",
        Text,
        Command::Do(Action::Edit(EditOp::KillWordBack)),
        "delete the word before the cursor",
    ),
    bind(
        &[alt(KeyCode::Backspace)],
        "Alt-Backspace",
        Text,
        Command::Do(Action::Edit(EditOp::KillAlnumWordBack)),
        "delete back to a word boundary",
    ),
    bind(
        &[alt(KeyCode::Char('d'))],
        "Alt-D",
        Text,
        Command::Do(Action::Edit(EditOp::KillWordForward)),
        "delete the next word",
    ),
    bind(
        &[ctrl('u')],
        "Ctrl-U",
        Text,
        Command::Do(Action::Edit(EditOp::KillToLineStart)),
        "delete to the start of the line",
    ),
    bind(
        &[ctrl('k')],
        "Ctrl-K",
        Text,
        Command::Do(Action::Edit(EditOp::KillToLineEnd)),
        "delete to the end of the line",
    ),
    bind(
        &[ctrl('y')],
        "Ctrl-Y",
        Text,
        Command::Do(Action::Edit(EditOp::Yank)),
        "paste what the last delete removed",
    ),
    bind(
        &[key(KeyCode::Left)],
        "←",
        Text,
        Command::Do(Action::Left),
        "back a character",
    ),
    bind(
        &[key(KeyCode::Right)],
        "→",
        Text,
        Command::Do(Action::Right),
        "forward a character",
    ),
    bind(
        &[key(KeyCode::Up)],
        "↑",
        Text,
        Command::Do(Action::Up),
        "line up; older message; palette: previous tool",
    ),
    bind(
        &[key(KeyCode::Down)],
        "↓",
        Text,
        Command::Do(Action::Down),
        "line down; newer message; palette: next tool",
    ),
    bind(
        &[key(KeyCode::Backspace)],
        "Backspace",
        Text,
        Command::Do(Action::Backspace),
        "delete the character before the cursor",
    ),
    bind(
        &[key(KeyCode::Delete)],
        "Delete",
        Text,
        Command::Do(Action::Delete),
        "delete the character under the cursor",
    ),
    bind(&[ANY_CHAR], "any character", Text, Command::Type, "type it"),
    // The sidebar.
    bind(
        &[key(KeyCode::Up), ch('k')],
        "↑, k",
        Sidebar,
        Command::Do(Action::SelectPrev),
        "previous panel",
    ),
    bind(
        &[key(KeyCode::Down), ch('j')],
        "↓, j",
        Sidebar,
        Command::Do(Action::SelectNext),
        "next panel",
    ),
    bind(
        &[ANY_CHAR],
        "1…9",
        Sidebar,
        Command::SelectDigit,
        "show panel 1…9",
    ),
    bind(
        &[ch('g'), key(KeyCode::Home)],
        "g, Home",
        Sidebar,
        Command::Do(Action::ScrollToStart),
        "jump to the panel's first retained line",
    ),
    bind(
        &[ch('G'), key(KeyCode::End)],
        "G, End",
        Sidebar,
        Command::Do(Action::ScrollToEnd),
        "jump to the panel's last line (follows new output)",
    ),
    bind(
        &[ch(':')],
        ":",
        Sidebar,
        Command::Do(Action::OpenPalette),
        "command palette",
    ),
    bind(
        &[ch('x'), key(KeyCode::Delete)],
        "x, Delete",
        Sidebar,
        Command::Do(Action::ClosePanel),
        "close the selected panel (consoles, viewers)",
    ),
    bind(
        &[ch('e')],
        "e",
        Sidebar,
        Command::Do(Action::EditExternally),
        "edit the open callback's script in $EDITOR",
    ),
    bind(
        &[ch('/')],
        "/",
        Sidebar,
        Command::Do(Action::Search),
        "search the panel (Enter finds, Esc forgets)",
    ),
    bind(
        &[ch('n')],
        "n",
        Sidebar,
        Command::Do(Action::SearchNext),
        "next match (up in a console)",
    ),
    bind(
        &[ch('N')],
        "N",
        Sidebar,
        Command::Do(Action::SearchPrev),
        "previous match",
    ),
];

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
    if context == KeyContext::Sidebar && key.code == KeyCode::Char('?') {
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

/// The rows of help for `context`: keys and what they do, in table order.
pub fn help_rows(context: KeyContext) -> Vec<(&'static str, &'static str)> {
    let mut rows: Vec<(&str, &str)> = BINDINGS
        .iter()
        .filter(|b| b.scope.holds_in(context))
        .map(|b| (b.label, b.help))
        .collect();
    if context == KeyContext::Sidebar {
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
    use super::*;

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

    #[test]
    fn help_lists_every_binding_of_the_context() {
        let text = help_rows(KeyContext::Text);
        for b in BINDINGS.iter().filter(|b| b.scope != Scope::Sidebar) {
            assert!(text.contains(&(b.label, b.help)), "{} missing", b.label);
        }
        let sidebar = help_rows(KeyContext::Sidebar);
        assert!(sidebar.iter().any(|(keys, _)| *keys == "x, Delete"));
        assert!(!sidebar.iter().any(|(keys, _)| *keys == "Ctrl-W"));
    }
}
