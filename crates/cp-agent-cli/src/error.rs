//! What can go wrong driving an agent CLI.

use std::path::PathBuf;

/// Why an agent CLI could not be started or driven.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The binary is neither configured nor on `PATH`.
    #[error(
        "{agent} was not found: `{program}` is not on PATH and `agent.command` is not set; {install}"
    )]
    NotFound {
        /// The agent's display name, e.g. "Claude Code".
        agent: &'static str,
        /// The program name looked for.
        program: String,
        /// How to install it.
        install: &'static str,
    },
    /// `--version` failed or printed something unexpected.
    #[error(
        "{agent} at {path} did not report its version ({detail}); check the installation: {install}"
    )]
    Version {
        /// The agent's display name, e.g. "Claude Code".
        agent: &'static str,
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        detail: String,
        /// How to install it.
        install: &'static str,
    },
    /// The agent's version is older than what this driver needs.
    #[error("{agent} {found} at {path} is too old: version {needed} or newer is needed; {install}")]
    TooOld {
        /// The agent's display name, e.g. "Claude Code".
        agent: &'static str,
        /// The binary.
        path: PathBuf,
        /// The version it reported.
        found: String,
        /// The oldest version supported.
        needed: String,
        /// How to install it.
        install: &'static str,
    },
    /// Starting the process failed.
    #[error("cannot start {path}: {source}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Writing the per-invocation settings (temp files) failed.
    #[error("cannot write the agent's settings file {path}: {source}")]
    Wiring {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A project settings file that must be changed for the run is not valid JSON.
    #[error("{path} is not valid JSON ({message}); fix it and run again — nothing was written")]
    Settings {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The person's Codex CLI config (`$CODEX_HOME/config.toml`) cannot be found, read or
    /// parsed, so `init codex --trust-in-codex` cannot record the trust in it.
    #[error("Codex CLI's config {path}: {message}; nothing was written")]
    CodexConfig {
        /// The file (or where it was looked for).
        path: String,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The `"agent"` section of `config.json` is invalid.
    #[error("config.json 'agent': {0}")]
    Config(#[from] cp_base::StoreError),
    /// An unknown agent name.
    #[error("unknown agent {name:?}; expected one of: {known}")]
    UnknownAgent {
        /// The name given.
        name: String,
        /// The known names, e.g. `builtin, claude, gemini`.
        known: String,
    },
    /// A driver was asked of the built-in agent loop, which no agent CLI drives.
    #[error("the built-in agent does not run through an agent CLI")]
    Builtin,
}
