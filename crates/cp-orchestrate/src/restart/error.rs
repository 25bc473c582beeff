//! Why a phase could not be run to completion by the restart loop, and why a driver's
//! session turn failed.

use std::path::PathBuf;

/// Errors of the restart loop; each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum RestartError {
    /// The `"restart"` config (or a flag) holds a value that means nothing.
    #[error("restart config: {0}")]
    InvalidConfig(String),
    /// `config.json` could not be read (the error names the file).
    #[error(transparent)]
    Store(#[from] cp_base::StoreError),
    /// The phase used every restart it was allowed and hit the limit again.
    #[error(
        "phase {phase} hit the context limit {hits} times; split it into smaller phases or raise \
         --max-restarts (now {max}){}",
        handoff.as_ref().map(|p| format!("; its last handoff is in {}", p.display())).unwrap_or_default()
    )]
    MaxRestartsExceeded {
        /// The phase.
        phase: String,
        /// How often it reached a threshold.
        hits: u32,
        /// The configured maximum.
        max: u32,
        /// The handoff saved at the last stop, to continue by hand.
        handoff: Option<PathBuf>,
    },
    /// The agent session failed.
    #[error("phase {phase}: the agent session failed: {message}")]
    SessionFailed {
        /// The phase.
        phase: String,
        /// What the driver reported.
        message: String,
    },
    /// Auto-commit needs git, which could not be started.
    #[error(
        "auto-commit needs git, which could not be started ({0}); install git or pass \
         --no-auto-commit"
    )]
    GitMissing(String),
    /// Auto-commit needs a repository.
    #[error(
        "{0} is not inside a git repository, so auto-commit cannot work; run `git init` there or \
         pass --no-auto-commit"
    )]
    NotARepository(PathBuf),
    /// The work tree had changes of someone else's before the run started.
    #[error(
        "the work tree has uncommitted changes ({count} files: {sample}); auto-commit would sweep \
         them into its commits. Commit or stash them first, or pass --allow-dirty"
    )]
    DirtyTree {
        /// How many files are changed.
        count: usize,
        /// The first few paths.
        sample: String,
    },
    /// Auto-commit needs an identity to commit as, and git has none.
    #[error(
        "auto-commit needs a git identity and git has none ({detail}); set one with `git config \
         --global user.name \"Your Name\"` and `git config --global user.email you@example.com`, \
         or allow commits as Context Pilot <context-pilot@localhost> with \"restart\": \
         {{\"commit_as_context_pilot\": true}} in .context-pilot/config.json, or pass \
         --no-auto-commit"
    )]
    NoGitIdentity {
        /// What git said, one line.
        detail: String,
    },
    /// A git command failed.
    #[error("`git {args}` failed: {stderr}")]
    Git {
        /// The arguments.
        args: String,
        /// What git said.
        stderr: String,
    },
    /// A handoff could not be saved or read.
    #[error(transparent)]
    Handoff(#[from] crate::HandoffError),
}

/// A [`SessionDriver`](crate::SessionDriver) turn that failed, e.g. the handoff turn: what
/// went wrong, with the underlying error kept as the source when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct DriverError {
    /// What went wrong, for the log.
    message: String,
    /// The error that caused it.
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl DriverError {
    /// A failure described by `message` alone.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A failure that is `source` itself: its words are the message, and it stays the source.
    pub fn from_source(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::with_source(source.to_string(), source)
    }

    /// A failure described by `message`, caused by `source`.
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn a_runner_error_keeps_its_cause() {
        let cause = std::io::Error::other("connection reset");
        let e = DriverError::with_source("the handoff turn failed", cause);
        assert_eq!(e.to_string(), "the handoff turn failed");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("connection reset")
        );
        assert!(DriverError::new("no model").source().is_none());
    }
}
