//! Tells the person when the callbacks config is broken, so callbacks never go off silently.
//!
//! Each tick compares the config file's stamp with the one last checked; on a change it
//! validates the callbacks section ([`cp_mod_callback::config_problems`]) and, when the
//! problems differ from those already shown, adds a warning to the conversation (saved with
//! the TUI state, so it stays until the person reads it). A fixed file gets a line saying so.

use cp_base::{Level, Project, Stamp};

use crate::conversation::Entry;

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

impl ConfigWatch {
    /// Checks the callbacks config if it changed. Returns the notice to add to the
    /// conversation, if there is something new to say.
    pub(crate) fn check(&mut self, project: &Project) -> Option<Entry> {
        let stamp = project.config().stamp();
        if self.checked && self.stamp == stamp {
            return None;
        }
        self.checked = true;
        self.stamp = stamp;
        let problems = cp_mod_callback::config_problems(project);
        if problems == self.shown {
            return None;
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
        self.shown = problems;
        Some(Entry::Notice { level, text })
    }
}
