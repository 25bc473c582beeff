//! Editing a panel's text in `$EDITOR` (the `e` key): the app asks, the event loop hands the
//! terminal over (it owns it), and the edited text is applied by the panel's own tool, so it
//! gets exactly the checks a model's call would. A refused change leaves the old text.

use cp_base::{ExternalEdit, Level};

use super::App;
use crate::conversation::Entry;
use crate::editor::EditorError;

impl App {
    /// Asks the event loop to open the selected panel's editable text in `$EDITOR`.
    pub(super) fn request_external_edit(&mut self) {
        let views = self.host.registry().views();
        match views
            .panel(self.ui.nav.selected())
            .and_then(|p| p.external_edit())
        {
            Some(edit) => self.life.external_edit = Some(edit),
            None => {
                self.ui.flash = Some(
                    "Nothing to edit here: open a callback with Callback_open_editor, then press \
                     e on the Callbacks panel."
                        .into(),
                );
            }
        }
    }

    /// The edit the event loop should hand to `$EDITOR` now, if one was asked for.
    pub fn take_external_edit(&mut self) -> Option<ExternalEdit> {
        self.life.external_edit.take()
    }

    /// Applies what came back from the editor: a changed text goes through the panel's tool
    /// (its result, accepted or refused, shows in the conversation); an unchanged text or
    /// an editor that failed changes nothing.
    pub fn finish_external_edit(
        &mut self,
        edit: &ExternalEdit,
        edited: Result<Option<String>, EditorError>,
    ) {
        match edited {
            Ok(Some(text)) => {
                self.conversation.push(Entry::System(format!(
                    "Edited {} in the editor; {} checks it as it would any update (if it \
                     refuses, the old text stays).",
                    edit.what, edit.tool
                )));
                self.run_tools(vec![edit.apply_call("editor", &text)]);
            }
            Ok(None) => self.ui.flash = Some(format!("{} is unchanged.", edit.what)),
            Err(e) => {
                let text = format!("Could not edit {}: {e}", edit.what);
                self.ui.flash = Some(text.clone());
                self.conversation.push(Entry::Notice {
                    level: Level::Error,
                    text,
                });
            }
        }
    }
}
