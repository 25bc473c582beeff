//! [`Action`]: what the person asked for, whatever key asked; and [`KeyContext`]: where keys
//! go right now.

use crate::input::line_edit::EditOp;

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
    /// F2: show a workflow's approval gate that was hidden to look at files.
    ShowDialog,
    /// `e` in the sidebar: edit what the selected panel offers (the script of the callback
    /// open in the Callbacks panel's editor) in `$EDITOR`.
    EditExternally,
    /// F5 with no provider: the TUI's turns run with the agent CLI the conversation offers.
    UseOfferedAgent,
    /// F6: as F5, and remembered in the user's config for the next start.
    RememberOfferedAgent,
    /// A key of the Changes panel.
    Review(ReviewKey),
    /// F3: the Changes panel; at a workflow's approval gate, scoped to the phase, with the
    /// comments sent as the feedback of its `repeat_phase` option.
    ReviewChanges,
    /// Alt-↑/Alt-↓ with no provider: the agent F5 and F6 start becomes the previous (`false`)
    /// or next (`true`) one the conversation offers.
    PickOfferedAgent(bool),
    /// `[` / `]`: the Phases panel shows the previous (`false`) or next (`true`) phase.
    SelectPhase(bool),
    /// Answer to a yes/no question.
    Yes,
    No,
}

/// A key of the Changes panel (selected, with the sidebar focused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKey {
    Up,
    Down,
    NextHunk,
    PrevHunk,
    /// Tab: file list ⇄ diff.
    SwitchPane,
    ToList,
    ToDiff,
    /// Enter: fold or unfold the selected file.
    Fold,
    /// `l`: show a summarised diff anyway.
    Load,
    Search,
    Comment,
    /// `x`: drop the comment under the cursor.
    Clear,
    /// `S`: send the open comments to the agent.
    Send,
    Revert,
    Commit,
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
    /// The Changes panel has the keys.
    Changes,
}

impl ReviewKey {
    /// The name of the command the key runs.
    pub fn command_name(self) -> &'static str {
        match self {
            Self::Up => "changes_up",
            Self::Down => "changes_down",
            Self::NextHunk => "changes_next_hunk",
            Self::PrevHunk => "changes_prev_hunk",
            Self::SwitchPane => "changes_switch_pane",
            Self::ToList => "changes_to_list",
            Self::ToDiff => "changes_to_diff",
            Self::Fold => "changes_fold",
            Self::Load => "changes_load",
            Self::Search => "changes_search",
            Self::Comment => "changes_comment",
            Self::Clear => "changes_clear_comment",
            Self::Send => "changes_send",
            Self::Revert => "changes_revert",
            Self::Commit => "changes_commit",
        }
    }
}

impl Action {
    /// The name of the command this action runs on the main screen (the app's command table,
    /// `app::commands`, holds its doc and function); `None` for a click (the
    /// hit map resolves it) and for a yes/no answer (only a question takes one).
    pub fn command_name(&self) -> Option<&'static str> {
        Some(match self {
            Self::Quit => "quit",
            Self::Help => "help",
            Self::OpenPalette => "open_palette",
            Self::ToggleExpand => "toggle_expand",
            Self::ShowDialog => "show_dialog",
            Self::SelectPanel(_) => "select_panel",
            Self::Newline => "newline",
            Self::Submit => "submit",
            Self::FocusNext => "focus_next",
            Self::FocusPrev => "focus_prev",
            Self::Back => "back",
            Self::ScrollUp(_) => "scroll_up",
            Self::ScrollDown(_) => "scroll_down",
            Self::Home => "line_start",
            Self::End => "line_end",
            Self::Edit(EditOp::WordLeft) => "word_left",
            Self::Edit(EditOp::WordRight) => "word_right",
            Self::Edit(EditOp::KillWordBack) => "kill_word_back",
            Self::Edit(EditOp::KillAlnumWordBack) => "kill_alnum_word_back",
            Self::Edit(EditOp::KillWordForward) => "kill_word_forward",
            Self::Edit(EditOp::KillToLineStart) => "kill_to_line_start",
            Self::Edit(EditOp::KillToLineEnd) => "kill_to_line_end",
            Self::Edit(EditOp::Yank) => "yank",
            Self::Edit(_) => "edit_text",
            Self::Left => "move_left",
            Self::Right => "move_right",
            Self::Up => "move_up",
            Self::Down => "move_down",
            Self::Backspace => "delete_back",
            Self::Delete => "delete_forward",
            Self::Char(_) => "insert_char",
            Self::Paste(_) => "paste",
            Self::SelectPrev => "select_prev",
            Self::SelectNext => "select_next",
            Self::ScrollToStart => "scroll_to_start",
            Self::ScrollToEnd => "scroll_to_end",
            Self::ClosePanel => "close_panel",
            Self::EditExternally => "edit_externally",
            Self::Search => "search",
            Self::SearchNext => "search_next",
            Self::SearchPrev => "search_prev",
            Self::UseOfferedAgent => "use_offered_agent",
            Self::RememberOfferedAgent => "remember_offered_agent",
            Self::Review(key) => key.command_name(),
            Self::ReviewChanges => "review_changes",
            Self::PickOfferedAgent(false) => "pick_previous_offered_agent",
            Self::PickOfferedAgent(true) => "pick_next_offered_agent",
            Self::SelectPhase(false) => "previous_phase",
            Self::SelectPhase(true) => "next_phase",
            Self::Click { .. } | Self::Yes | Self::No => return None,
        })
    }
}
