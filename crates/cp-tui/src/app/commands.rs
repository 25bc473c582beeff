//! The command table, [`COMMANDS`]: every command the main screen knows, as a name, a doc
//! and a function (the shape of helix's `commands.rs`). An [`Action`] names its command
//! ([`Action::command_name`]); [`App::apply`] gives the action first to whatever is open
//! (a question, help, the palette, the search prompt, a workflow's dialog) and otherwise runs
//! its command from this table. The help overlay shows the commands' docs.

use super::App;
use crate::help::Help;
use crate::keymap::Action;
use crate::palette::Palette;
use crate::panels::{Close, Focus};

/// One command: its name, what it does (for help), and how the app does it. The function
/// gets the action, which carries the command's argument (a count, a character, an edit).
pub struct Command {
    pub name: &'static str,
    pub doc: &'static str,
    pub fun: fn(&mut App, Action),
}

/// Every command of the main screen.
pub static COMMANDS: &[Command] = &[
    Command {
        name: "quit",
        doc: "quit (asks first while work runs)",
        fun: |app, _| app.request_quit(),
    },
    Command {
        name: "help",
        doc: "this help (also ? on an empty input)",
        fun: |app, _| app.modal.help = Some(Help::new(app.key_context())),
    },
    Command {
        name: "open_palette",
        doc: "command palette: run any tool (also : on an empty input)",
        fun: |app, _| app.modal.palette = Some(Palette::default()),
    },
    Command {
        name: "toggle_expand",
        doc: "expand or collapse the last tool result",
        fun: |app, _| app.toggle_expand(),
    },
    Command {
        name: "show_dialog",
        doc: "show the waiting approval gate",
        fun: |app, _| app.show_dialog(),
    },
    Command {
        name: "select_panel",
        doc: "show panel 1…9 of the sidebar",
        fun: select_panel,
    },
    Command {
        name: "newline",
        doc: "new line in the text",
        fun: App::edit_input,
    },
    Command {
        name: "submit",
        doc: "send the message, run the palette's tool, confirm",
        fun: |app, _| app.submit(),
    },
    Command {
        name: "focus_next",
        doc: "input ⇄ sidebar; in the palette: complete the tool name",
        fun: |app, _| app.switch_focus(),
    },
    Command {
        name: "focus_prev",
        doc: "input ⇄ sidebar",
        fun: |app, _| app.switch_focus(),
    },
    Command {
        name: "back",
        doc: "close what is open; cancel the agent's turn",
        fun: |app, _| app.back(),
    },
    Command {
        name: "scroll_up",
        doc: "scroll the panel up",
        fun: scroll,
    },
    Command {
        name: "scroll_down",
        doc: "scroll the panel down",
        fun: scroll,
    },
    Command {
        name: "line_start",
        doc: "start of the line",
        fun: App::edit_input,
    },
    Command {
        name: "line_end",
        doc: "end of the line",
        fun: App::edit_input,
    },
    Command {
        name: "word_left",
        doc: "back a word",
        fun: App::edit_input,
    },
    Command {
        name: "word_right",
        doc: "forward a word",
        fun: App::edit_input,
    },
    Command {
        name: "kill_word_back",
        doc: "delete the word before the cursor",
        fun: App::edit_input,
    },
    Command {
        name: "kill_alnum_word_back",
        doc: "delete back to a word boundary",
        fun: App::edit_input,
    },
    Command {
        name: "kill_word_forward",
        doc: "delete the next word",
        fun: App::edit_input,
    },
    Command {
        name: "kill_to_line_start",
        doc: "delete to the start of the line",
        fun: App::edit_input,
    },
    Command {
        name: "kill_to_line_end",
        doc: "delete to the end of the line",
        fun: App::edit_input,
    },
    Command {
        name: "yank",
        doc: "paste what the last delete removed",
        fun: App::edit_input,
    },
    Command {
        name: "edit_text",
        doc: "edit the text at the cursor",
        fun: App::edit_input,
    },
    Command {
        name: "move_left",
        doc: "back a character",
        fun: App::edit_input,
    },
    Command {
        name: "move_right",
        doc: "forward a character",
        fun: App::edit_input,
    },
    Command {
        name: "move_up",
        doc: "line up; older message; palette: previous tool",
        fun: App::edit_input,
    },
    Command {
        name: "move_down",
        doc: "line down; newer message; palette: next tool",
        fun: App::edit_input,
    },
    Command {
        name: "delete_back",
        doc: "delete the character before the cursor",
        fun: App::edit_input,
    },
    Command {
        name: "delete_forward",
        doc: "delete the character under the cursor",
        fun: App::edit_input,
    },
    Command {
        name: "insert_char",
        doc: "type a character",
        fun: App::edit_input,
    },
    Command {
        name: "paste",
        doc: "insert pasted text",
        fun: App::edit_input,
    },
    Command {
        name: "select_prev",
        doc: "previous panel",
        fun: |app, _| app.select_by(-1),
    },
    Command {
        name: "select_next",
        doc: "next panel",
        fun: |app, _| app.select_by(1),
    },
    Command {
        name: "scroll_to_start",
        doc: "jump to the panel's first retained line",
        fun: |app, _| app.scroll_to_start(),
    },
    Command {
        name: "scroll_to_end",
        doc: "jump to the panel's last line (follows new output)",
        fun: |app, _| app.scroll_to_end(),
    },
    Command {
        name: "close_panel",
        doc: "close the selected panel (consoles, viewers)",
        fun: |app, _| app.close_selected(),
    },
    Command {
        name: "edit_externally",
        doc: "edit the open callback's script in $EDITOR",
        fun: |app, _| app.request_external_edit(),
    },
    Command {
        name: "search",
        doc: "search the panel (Enter finds, Esc forgets)",
        fun: |app, _| app.open_search(),
    },
    Command {
        name: "search_next",
        doc: "next match (up in a console)",
        fun: |app, _| app.search_jump(true, false),
    },
    Command {
        name: "use_offered_agent",
        doc: "no model: run your messages with the picked agent CLI",
        fun: |app, _| app.use_offered_agent(false),
    },
    Command {
        name: "remember_offered_agent",
        doc: "the same, and remember it in your own config",
        fun: |app, _| app.use_offered_agent(true),
    },
    Command {
        name: "pick_previous_offered_agent",
        doc: "no model: F5/F6 start the agent CLI listed above",
        fun: |app, _| app.pick_offered_agent(false),
    },
    Command {
        name: "pick_next_offered_agent",
        doc: "no model: F5/F6 start the agent CLI listed below",
        fun: |app, _| app.pick_offered_agent(true),
    },
    Command {
        name: "search_prev",
        doc: "previous match",
        fun: |app, _| app.search_jump(false, false),
    },
    Command {
        name: "previous_phase",
        doc: "Phases panel: the previous phase and its conversation",
        fun: |app, _| app.select_phase(false),
    },
    Command {
        name: "next_phase",
        doc: "Phases panel: the next phase and its conversation",
        fun: |app, _| app.select_phase(true),
    },
    Command {
        name: "review_changes",
        doc: "Changes panel (approval gate: comments repeat it)",
        fun: |app, _| app.review_changes(),
    },
    Command {
        name: "changes_up",
        doc: "previous file, or diff line",
        fun: review,
    },
    Command {
        name: "changes_down",
        doc: "next file, or diff line",
        fun: review,
    },
    Command {
        name: "changes_next_hunk",
        doc: "next hunk (into the next file)",
        fun: review,
    },
    Command {
        name: "changes_prev_hunk",
        doc: "previous hunk",
        fun: review,
    },
    Command {
        name: "changes_switch_pane",
        doc: "file list ⇄ diff",
        fun: review,
    },
    Command {
        name: "changes_to_list",
        doc: "in the diff: scroll its lines back left, then to the file list",
        fun: review,
    },
    Command {
        name: "changes_to_diff",
        doc: "to the diff; in it: scroll its lines right, to read a long one",
        fun: review,
    },
    Command {
        name: "changes_fold",
        doc: "fold or unfold the selected file",
        fun: review,
    },
    Command {
        name: "changes_load",
        doc: "show a long or large file's diff anyway, a binary file's sizes and changed bytes",
        fun: review,
    },
    Command {
        name: "changes_search",
        doc: "search the changes (Enter finds the next match)",
        fun: review,
    },
    Command {
        name: "changes_comment",
        doc: "comment on the diff line (Enter saves)",
        fun: review,
    },
    Command {
        name: "changes_clear_comment",
        doc: "drop the comment on this line",
        fun: review,
    },
    Command {
        name: "changes_send",
        doc: "send the open comments to the agent",
        fun: review,
    },
    Command {
        name: "changes_revert",
        doc: "revert the hunk, or on the file list the file (asks first)",
        fun: review,
    },
    Command {
        name: "changes_commit",
        doc: "commit everything (git add -A, git commit; asks the message)",
        fun: review,
    },
];

/// The command named `name`.
pub fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// The doc of the command named `name` (what the help overlay says its keys do).
pub fn doc(name: &str) -> Option<&'static str> {
    command(name).map(|c| c.doc)
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "every command's function takes its action by value (`Command::fun`)"
)]
fn select_panel(app: &mut App, action: Action) {
    if let Action::SelectPanel(n) = action {
        app.ui.nav.select_index(&app.sidebar(), n);
        app.changes.engaged = false;
    }
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "every command's function takes its action by value (`Command::fun`)"
)]
fn review(app: &mut App, action: Action) {
    if let Action::Review(key) = action {
        app.review_key(key);
    }
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "every command's function takes its action by value (`Command::fun`)"
)]
fn scroll(app: &mut App, action: Action) {
    if app.changes_focused() {
        match action {
            Action::ScrollUp(n) => app.review_page(n, true),
            Action::ScrollDown(n) => app.review_page(n, false),
            _ => {}
        }
        return;
    }
    match action {
        Action::ScrollUp(n) => app.scroll_by(n, true),
        Action::ScrollDown(n) => app.scroll_by(n, false),
        _ => {}
    }
}

impl App {
    /// Applies one action: to what is open, or else by running its command.
    pub fn apply(&mut self, action: Action) {
        if let Action::Click { column, row } = action {
            self.click(column, row);
            return;
        }
        if let Some(confirm) = self.modal.confirm.take() {
            self.answer_confirm(confirm, action);
            return;
        }
        if let Some(help) = &mut self.modal.help {
            if !help.apply(&action) {
                self.modal.help = None;
            }
            return;
        }
        // Help opens over whatever else is open; other keys go first to the palette, the
        // search prompt or a shown dialog.
        if action != Action::Help {
            if self.modal.palette.is_some() {
                self.apply_palette(action);
                return;
            }
            if self.review_prompt_open() {
                self.apply_review_prompt(action);
                return;
            }
            if self.modal.search.as_ref().is_some_and(|s| s.editing) {
                self.apply_search_prompt(action);
                return;
            }
            if self.dialog_visible() {
                self.apply_dialog(action);
                return;
            }
        }
        if let Some(command) = action.command_name().and_then(command) {
            (command.fun)(self, action);
        }
    }

    pub(super) fn request_quit(&mut self) {
        if self.busy() {
            self.modal.confirm = Some(crate::popup::Confirm::QuitWhileBusy);
        } else {
            self.life.quit = true;
        }
    }

    /// Enter: sends the message from the input line; on the Changes panel, gives it the
    /// keys; elsewhere, goes back to the input line.
    fn submit(&mut self) {
        if self.changes_selected() {
            self.engage_changes();
        } else if self.ui.focus == Focus::Input {
            self.submit_input();
        } else {
            self.ui.focus = Focus::Input;
        }
    }

    /// Esc: cancels the running turn; else forgets a finished search (and its highlight);
    /// else leaves the sidebar.
    fn back(&mut self) {
        if self.changes_focused() {
            self.changes.engaged = false;
        } else if self.agent.running() || self.workflow_turn().is_some() {
            self.cancel_turn();
        } else if self.modal.search.is_some() {
            self.modal.search = None;
        } else {
            self.ui.focus = Focus::Input;
        }
    }

    fn switch_focus(&mut self) {
        self.ui.focus = match self.ui.focus {
            Focus::Input => Focus::Sidebar,
            Focus::Sidebar => Focus::Input,
        };
    }

    fn select_by(&mut self, offset: isize) {
        self.ui.nav.select_offset(&self.sidebar(), offset);
    }

    /// Shows the block that changed: the conversation, at its bottom, where the conversation
    /// keeps the toggled block in view.
    fn toggle_expand(&mut self) {
        self.conversation.toggle_last_tool();
        self.ui.nav.select("conversation");
        self.scroll_to_end();
    }

    fn show_dialog(&mut self) {
        if let Some(dialog) = &mut self.modal.dialog {
            dialog.hidden = false;
        }
    }

    /// Closes the selected panel; when its module is busy, on a later tick.
    pub(super) fn close_selected(&mut self) {
        match self.ui.nav.close_selected(self.host.registry()) {
            Close::Closed => {}
            Close::Queued => {
                self.ui.flash = Some("The panel closes once its tool finishes.".into());
            }
            Close::Refused => self.ui.flash = Some("This panel cannot be closed.".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keymap::{BINDINGS, KeyContext, help_rows};

    #[test]
    fn command_names_are_unique_and_every_key_binding_runs_a_listed_command() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert!(
                COMMANDS[i + 1..].iter().all(|d| d.name != c.name),
                "{} twice",
                c.name
            );
            assert!(!c.doc.is_empty(), "{} has no doc", c.name);
        }
        for binding in &BINDINGS {
            let name = binding.command.command_name();
            assert!(
                name.and_then(command).is_some(),
                "{}: {name:?}",
                binding.label
            );
        }
    }

    #[test]
    fn help_lists_every_binding_of_the_context() {
        let text = help_rows(KeyContext::Text, doc);
        for b in BINDINGS
            .iter()
            .filter(|b| b.scope.holds_in(KeyContext::Text))
        {
            assert!(
                text.contains(&(b.label, b.help(doc))),
                "{} missing",
                b.label
            );
            assert!(!b.help(doc).is_empty(), "{} has no help", b.label);
        }
        let sidebar = help_rows(KeyContext::Sidebar, doc);
        assert!(sidebar.iter().any(|(keys, _)| *keys == "x, Delete"));
        assert!(!sidebar.iter().any(|(keys, _)| *keys == "Ctrl-W"));
    }
}
