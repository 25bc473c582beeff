//! Why a callback run could not be started or followed, worded for the agent's report.

use std::path::PathBuf;

use cp_base::StoreError;
use cp_mod_console::ConsoleError;

use crate::error::CallbackError;

/// A run that could not start, or whose console was lost. Its text becomes the
/// run's outcome in the report; the cause stays attached as the error's source.
#[derive(Debug, thiserror::Error)]
pub(super) enum RunError {
    #[error("cannot reach the console server: {0}")]
    ConsoleUnreachable(#[source] ConsoleError),
    #[error("{0}; fix 'cwd' with Callback_upsert")]
    Cwd(#[source] CallbackError),
    #[error(
        "its script {} cannot be read ({source}); recreate it with Callback_upsert script_content",
        path.display()
    )]
    ScriptUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write its list of changed files: {0}")]
    FileList(#[source] StoreError),
    #[error("the console server could not start it: {0}")]
    Spawn(#[source] ConsoleError),
    /// Re-attaching to the console of a run started before a reload failed.
    #[error("{0}")]
    Attach(#[source] ConsoleError),
    #[error(
        "Context Pilot cannot start a thread for it ({0}); too many runs at once. It did not run: retry when fewer callbacks run"
    )]
    NoThread(#[source] std::io::Error),
}
