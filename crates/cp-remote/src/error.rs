//! What can go wrong between the run and a place that runs its work.

use cp_base::StoreError;

/// Errors of the `hosts` configuration, of sending work to a place, and of its answer.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Config(#[from] StoreError),
    #[error("config.json: host '{host}': {message}")]
    InvalidHost { host: String, message: String },
    #[error("host {host} does not answer over ssh: {detail}")]
    NoAnswer { host: String, detail: String },
    #[error(
        "host {host} refused the login over ssh ({detail}); a run logs in without a prompt: let \
         your key in there (your ssh agent, or `IdentityFile` in ~/.ssh/config), and check with \
         `ssh -o BatchMode=yes {host} true`"
    )]
    LoginRefused { host: String, detail: String },
    #[error(
        "host {host} was not let in because its key is not one this machine knows for it \
         ({detail}); connect once with `ssh {host}` to check and accept its key, or correct \
         ~/.ssh/known_hosts"
    )]
    HostKeyUnknown { host: String, detail: String },
    #[error(
        "host {host} lacks context-pilot on its PATH (for non-interactive ssh logins); install it there, e.g. `cargo install context-pilot`"
    )]
    NoContextPilot { host: String },
    #[error(
        "host {host} lacks git on its PATH (for non-interactive ssh logins): {detail}; install git there"
    )]
    NoGit { host: String, detail: String },
    #[error("host {host} refused the project: {reason}")]
    Refused { host: String, reason: String },
    #[error("host {host} could not take the commit: {detail}")]
    Send { host: String, detail: String },
    #[error("the link to host {host} dropped: {detail}")]
    LinkLost { host: String, detail: String },
    #[error("host {host} ended without a result: {detail}")]
    NoResult { host: String, detail: String },
    #[error("cannot start {what}: {source}")]
    Start {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Serve(String),
}

impl RemoteError {
    /// Whether the host may answer again: its link dropped, or it does not answer now.
    pub fn is_link_loss(&self) -> bool {
        matches!(self, Self::LinkLost { .. } | Self::NoAnswer { .. })
    }
}
