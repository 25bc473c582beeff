//! Handing text to the person's own editor: a private temporary copy, `$EDITOR file`
//! (default `vi`) with the terminal, then the text read back. The event loop leaves
//! full-screen mode and pauses its input thread around [`edit_text`].

use std::path::Path;
use std::process::{Command, ExitStatus};

/// Why the editor could not be used; the text being edited is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("cannot make a temporary file to edit: {0}")]
    TempFile(#[source] std::io::Error),
    #[error("cannot start the editor `{editor}`: {source}; set EDITOR to an editor command")]
    Start {
        editor: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the editor `{editor}` ended with {status}; nothing was changed")]
    Failed { editor: String, status: ExitStatus },
    #[error("cannot read the edited file back: {0}")]
    Read(#[source] std::io::Error),
}

/// The editor command: `$EDITOR` (it may carry arguments, e.g. `code -w`), else `vi`.
pub fn editor_command() -> String {
    std::env::var("EDITOR")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Writes `text` to a fresh private temporary file called `file_name`, runs `editor` on it
/// with the terminal, and returns the edited text, or `None` when it did not change.
pub fn edit_text(editor: &str, file_name: &str, text: &str) -> Result<Option<String>, EditorError> {
    let dir = tempfile::Builder::new()
        .prefix("cp-edit-")
        .tempdir()
        .map_err(EditorError::TempFile)?;
    // Only the last component: a name can never place the copy elsewhere.
    let name = Path::new(file_name)
        .file_name()
        .map_or_else(|| "edit.txt".into(), std::borrow::ToOwned::to_owned);
    let path = dir.path().join(name);
    std::fs::write(&path, text).map_err(EditorError::TempFile)?;
    // Through `sh -c`, so an EDITOR with arguments works; the path is passed as `$1`, never
    // spliced into the command line.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("context-pilot-editor")
        .arg(&path)
        .status()
        .map_err(|source| EditorError::Start {
            editor: editor.to_owned(),
            source,
        })?;
    if !status.success() {
        return Err(EditorError::Failed {
            editor: editor.to_owned(),
            status,
        });
    }
    let edited = std::fs::read_to_string(&path).map_err(EditorError::Read)?;
    Ok((edited != text).then_some(edited))
}

#[cfg(test)]
mod tests {
    use super::{EditorError, edit_text};

    #[test]
    fn the_edited_text_comes_back_and_an_unchanged_one_is_none() {
        let edited = edit_text("sed -i 's/old/new/'", "fmt.sh", "echo old\n").unwrap();
        assert_eq!(edited.as_deref(), Some("echo new\n"));
        assert_eq!(edit_text("true", "fmt.sh", "echo old\n").unwrap(), None);
    }

    #[test]
    fn a_failing_editor_changes_nothing_and_says_so() {
        let err = edit_text("false", "fmt.sh", "x").unwrap_err();
        assert!(matches!(err, EditorError::Failed { .. }), "{err}");
        assert!(err.to_string().contains("`false`"), "{err}");
    }

    #[test]
    fn a_file_name_with_directories_stays_in_the_private_copy() {
        // The editor prints the path it got; it must be a temporary `x.sh`, not `/etc/x.sh`.
        let edited = edit_text("sh -c 'printf %s \"$0\" > \"$0\"'", "../../etc/x.sh", "")
            .unwrap()
            .unwrap();
        assert!(
            edited.ends_with("/x.sh") && edited.contains("cp-edit-"),
            "{edited}"
        );
    }
}
