//! The crate's error type.

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
    /// The project store (atomic writes, `config.json`) failed; the error names the file.
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
}
