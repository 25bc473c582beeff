//! Raw key codes become [`Action`]s here, and only here.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

/// What the user asked for, independent of the key that asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    OpenPalette,
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
    ScrollToEnd,
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
    /// Up/Down inside a text field (history, palette selection).
    Up,
    Down,
    Paste(String),
    /// Ctrl-O: expand or collapse the last tool call in the conversation.
    ToggleExpand,
    /// Ctrl-T: toggle key pass-through to the focused console panel.
    TogglePassthrough,
    /// Ctrl-W: close the selected dynamic panel.
    ClosePanel,
    /// Ctrl-K: show a workflow checkpoint that was hidden to look at files.
    ShowDialog,
    /// Answer to a yes/no question.
    Yes,
    No,
}

/// Where keys go right now; the same key means different things in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    /// Typing in the input line or the palette.
    Text,
    /// Moving in the sidebar.
    Sidebar,
    /// A yes/no question is open.
    Confirm,
}

/// Maps a key press to an action in `context`.
pub fn map_key(key: KeyEvent, context: KeyContext) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    if context == KeyContext::Confirm {
        return match key.code {
            KeyCode::Char('y' | 'Y') => Some(Action::Yes),
            // Ctrl-C means quit: it confirms a quit, but never answers another question yes.
            KeyCode::Char('c') if ctrl => Some(Action::Quit),
            _ => Some(Action::No),
        };
    }
    match key.code {
        KeyCode::Char('c') if ctrl => Some(Action::Quit),
        KeyCode::Char('p') if ctrl => Some(Action::OpenPalette),
        KeyCode::Char('o') if ctrl => Some(Action::ToggleExpand),
        KeyCode::Char('t') if ctrl => Some(Action::TogglePassthrough),
        KeyCode::Char('w') if ctrl => Some(Action::ClosePanel),
        KeyCode::Char('k') if ctrl => Some(Action::ShowDialog),
        KeyCode::Char('j') if ctrl => Some(Action::Newline),
        KeyCode::Char(c @ '1'..='9') if alt => Some(Action::SelectPanel(digit(c))),
        KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
            Some(Action::Newline)
        }
        KeyCode::Tab => Some(Action::FocusNext),
        KeyCode::BackTab => Some(Action::FocusPrev),
        KeyCode::Esc => Some(Action::Back),
        KeyCode::PageUp => Some(Action::ScrollUp(10)),
        KeyCode::PageDown => Some(Action::ScrollDown(10)),
        KeyCode::Enter => Some(Action::Submit),
        _ => match context {
            KeyContext::Sidebar => sidebar_key(key.code),
            _ => text_key(key.code, ctrl),
        },
    }
}

fn digit(c: char) -> usize {
    (c as usize).saturating_sub('1' as usize)
}

fn sidebar_key(code: KeyCode) -> Option<Action> {
    match code {
        KeyCode::Up | KeyCode::Char('k') => Some(Action::SelectPrev),
        KeyCode::Down | KeyCode::Char('j') => Some(Action::SelectNext),
        KeyCode::Char(c @ '1'..='9') => Some(Action::SelectPanel(digit(c))),
        KeyCode::Char('G') | KeyCode::End => Some(Action::ScrollToEnd),
        KeyCode::Char(':') => Some(Action::OpenPalette),
        _ => None,
    }
}

fn text_key(code: KeyCode, ctrl: bool) -> Option<Action> {
    match code {
        KeyCode::Char('a') if ctrl => Some(Action::Home),
        KeyCode::Char('e') if ctrl => Some(Action::End),
        KeyCode::Char(c) if !ctrl => Some(Action::Char(c)),
        KeyCode::Backspace => Some(Action::Backspace),
        KeyCode::Delete => Some(Action::Delete),
        KeyCode::Left => Some(Action::Left),
        KeyCode::Right => Some(Action::Right),
        KeyCode::Home => Some(Action::Home),
        KeyCode::End => Some(Action::End),
        KeyCode::Up => Some(Action::Up),
        KeyCode::Down => Some(Action::Down),
        _ => None,
    }
}

/// Mouse wheel scrolls the main area; other mouse events are ignored.
pub fn map_mouse(mouse: MouseEvent) -> Option<Action> {
    match mouse.kind {
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
}
