//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in this crate, with the input that caused it.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A rule or test trigger holds a pattern that is not a valid glob.
    #[error(
        "checkpoint config: {owner} pattern `{pattern}` is not a valid glob: {source}; \
         example: `src/**/*.rs`"
    )]
    InvalidGlob {
        /// Which part of the config holds the pattern, e.g. `rule 'daemon code'`.
        owner: String,
        /// The pattern as written.
        pattern: String,
        /// Why globset rejected it.
        source: globset::Error,
    },
    /// The stop gate configuration (`"checkpoint"` section) is inconsistent in a way serde cannot catch.
    #[error("checkpoint config: {0}")]
    InvalidConfig(String),
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
    /// A file exists but does not hold what we expect; it is left untouched.
    #[error("{path} is not a valid {what}: {source}; fix or move the file, it was not changed")]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What the file should contain, e.g. "handoff".
        what: &'static str,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
    /// The project store (atomic writes, `config.json`) failed; the error names the file.
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    /// Serializing a value to JSON failed (only possible with non-string map keys).
    #[error("serializing {what} to JSON: {source}")]
    Serialize {
        /// What was being serialized.
        what: &'static str,
        /// The serde error.
        source: serde_json::Error,
    },
}

impl CheckpointError {
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
