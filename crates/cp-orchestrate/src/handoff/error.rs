//! What can go wrong saving, listing or reading handoffs.

use std::path::PathBuf;

/// A handoff that could not be written or read, with the file involved.
#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    /// Reading or writing a file failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What we were doing, e.g. "writing".
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file exists but does not hold a handoff; it is left untouched.
    #[error("{path} is not a valid {what}: {source}; fix or move the file, it was not changed")]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What the file should contain ("handoff").
        what: &'static str,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// The project store (atomic writes) failed; the error names the file.
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    /// Serializing a handoff to JSON failed (only possible with non-string map keys).
    #[error("serializing {what} to JSON: {source}")]
    Serialize {
        /// What was being serialized.
        what: &'static str,
        /// The serde error.
        source: serde_json::Error,
    },
}

impl HandoffError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
