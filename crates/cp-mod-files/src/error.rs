//! What a file tool reports when it does nothing: [`FileError`], whose text is the error
//! result the model reads.

use std::io;
use std::path::PathBuf;

/// Why a `File_*` tool (or [`crate::open_regular`]) refused or failed. Nothing was changed.
/// The `Display` text names the tool, the path or parameter at fault, and what to do instead;
/// failures keep their cause as [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The call was refused: a bad argument, a path outside the project root, a directory or
    /// device where a file was expected, an `old_string` that is not there.
    #[error("{0}")]
    Refused(String),
    /// The project root could not be opened.
    #[error("{tool}: cannot open the project root {}: {source}", root.display())]
    Root {
        tool: String,
        root: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The filesystem failed while the tool was doing `action` (`read`, `open the directory
    /// of`, …) on `path`; `outcome` says what was left behind when that matters.
    #[error("{tool}: cannot {action} '{path}': {source}{outcome}")]
    Io {
        tool: String,
        action: &'static str,
        path: String,
        outcome: &'static str,
        #[source]
        source: io::Error,
    },
    /// The lock that serializes changes to one file across processes could not be taken.
    #[error("{tool}: cannot lock '{path}': {source}")]
    Lock {
        tool: String,
        path: String,
        #[source]
        source: cp_base::StoreError,
    },
    /// A `glob` or `pattern` parameter is not a valid glob.
    #[error(
        "{tool}: '{param}' `{pattern}` is not a valid glob: {}; example: `src/**/*.rs`",
        source.kind()
    )]
    Glob {
        tool: String,
        param: String,
        pattern: String,
        #[source]
        source: globset::Error,
    },
    /// `File_grep`'s `pattern` is not a valid regular expression.
    #[error(
        "{tool}: 'pattern' `{pattern}` is not a valid regular expression: {source}; example: \
         `fn\\s+main`"
    )]
    Regex {
        tool: String,
        pattern: String,
        #[source]
        source: grep_regex::Error,
    },
}

impl FileError {
    /// A filesystem failure while doing `action` on `path` (project-relative).
    pub(crate) fn io(tool: &str, action: &'static str, path: &str, source: io::Error) -> Self {
        Self::Io {
            tool: tool.to_owned(),
            action,
            path: path.to_owned(),
            outcome: "",
            source,
        }
    }
}

impl From<cp_base::ToolResult> for FileError {
    /// An argument error from [`cp_base::Args`]: its text already names the parameter.
    fn from(result: cp_base::ToolResult) -> Self {
        Self::Refused(result.text)
    }
}

/// `refused!("{tool}: …", …)`: a [`FileError::Refused`] with a formatted message.
macro_rules! refused {
    ($($arg:tt)*) => {
        $crate::error::FileError::Refused(format!($($arg)*))
    };
}
pub(crate) use refused;
