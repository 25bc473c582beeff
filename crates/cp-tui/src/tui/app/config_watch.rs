//! Tells the person when the callbacks config is broken, so callbacks never go off silently.
//!
//! Each tick compares the config file's stamp with the one last checked; on a change it
//! validates the callbacks section ([`cp_mod_callback::config_problems`]) and, when the
//! problems differ from those already shown, adds a warning to the conversation (saved with
//! the session, so it stays until the person reads it). A fixed file gets a line saying so.

use cp_base::{Level, Stamp};

use super::super::conversation::Entry;
use super::App;

/// What was last checked and shown.
#[derive(Debug, Default)]
pub(crate) struct ConfigWatch {
    /// Whether the config was checked at all.
    checked: bool,
    /// The stamp last checked (`None`: the file did not exist).
    stamp: Option<Stamp>,
    /// The problems last shown.
    shown: Vec<String>,
}

impl App {
    /// Checks the callbacks config if it changed. Returns whether a message was added.
    pub(crate) fn watch_callbacks_config(&mut self) -> bool {
        let project = self.host.project().clone();
        let stamp = project.config().stamp();
        if self.config_watch.checked && self.config_watch.stamp == stamp {
            return false;
        }
        self.config_watch.checked = true;
        self.config_watch.stamp = stamp;
        let problems = cp_mod_callback::config_problems(&project);
        if problems == self.config_watch.shown {
            return false;
        }
        let (level, text) = if problems.is_empty() {
            (
                Level::Success,
                "The callbacks config is valid again; every callback in it can fire.".to_owned(),
            )
        } else {
            (
                Level::Warning,
                format!("Callbacks config problem: {}", problems.join("\n")),
            )
        };
        self.config_watch.shown = problems;
        self.conversation.push(Entry::Notice { level, text });
        self.unsaved = true;
        true
    }
}
