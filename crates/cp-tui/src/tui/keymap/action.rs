//! [`Action`]: what the person asked for, whatever key asked; and [`KeyContext`]: where keys
//! go right now.

use super::super::line_edit::EditOp;

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
