//! How a headless `context-pilot run` tells the person it needs them (an approval gate or a
//! merge conflict waits, a phase failed): the terminal bell at once, a desktop notification
//! where `notify-send` is installed (nothing, and no error, where it is not), and the
//! person's own command from their user config, run with the alert as JSON on stdin:
//!
//! ```json
//! {"notify": {"command": "curl -s -d \"$(jq -r .message)\" ntfy.sh/my-topic"}}
//! ```
//!
//! in `~/.config/context-pilot/config.json`. Only the user's config is read: a project cannot
//! make Context Pilot run a command of its own choosing here. The section is checked as
//! strictly as the project's config: an unknown key or a command that is not a string stops
//! the run before it starts, with the file and the key named, rather than leaving the person
//! waiting for alerts that never come.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cp_base::{JsonFile, StoreError, find_program, user_config_dir};
use cp_orchestrate::{Alert, Alerter};
use serde::Deserialize;

/// How long a notification command may run before it is killed.
const COMMAND_LIMIT: Duration = Duration::from_secs(10);

/// Tells the TUI about an alert.
type TellTui = dyn Fn(&Alert) + Send + Sync;

/// The bell, `notify-send` and the user's `notify.command`.
pub(crate) struct TerminalAlerts {
    command: Option<String>,
    /// The TUI, told at once (it sets the terminal's title); `None` headless.
    tui: Option<Box<TellTui>>,
    /// Threads reaping the commands started; joined on drop so none outlives the run.
    reapers: Mutex<Vec<JoinHandle<()>>>,
}

/// The `notify` section of the user's config.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotifySection {
    /// A shell command, run with the alert as JSON on stdin.
    command: Option<String>,
}

/// Why the user's `notify` section cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotifyConfigError {
    /// The file cannot be read, or is not a JSON object.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{}: notify: {reason}; it takes {{\"command\": \"<shell command>\"}}, or remove the key",
        path.display()
    )]
    Shape {
        path: PathBuf,
        reason: serde_json::Error,
    },
}

impl TerminalAlerts {
    /// Reads `notify.command` from the user's config; a missing file or section: none.
    pub(crate) fn from_user_config() -> Result<Self, NotifyConfigError> {
        let command = match user_config_dir() {
            Some(dir) => Self::command_in(&JsonFile::new(dir.join("config.json")))?,
            None => None,
        };
        Ok(Self {
            command,
            tui: None,
            reapers: Mutex::new(Vec::new()),
        })
    }

    /// The command of the `notify` section of `file`.
    fn command_in(file: &JsonFile) -> Result<Option<String>, NotifyConfigError> {
        let Some(section) = file.read()?.remove("notify") else {
            return Ok(None);
        };
        let section: NotifySection =
            serde_json::from_value(section).map_err(|reason| NotifyConfigError::Shape {
                path: file.path().to_path_buf(),
                reason,
            })?;
        Ok(section.command.filter(|c| !c.trim().is_empty()))
    }

    /// Also tells the TUI, through `tell`, whenever an alert goes out.
    pub(crate) fn with_tui(mut self, tell: impl Fn(&Alert) + Send + Sync + 'static) -> Self {
        self.tui = Some(Box::new(tell));
        self
    }

    fn reap(&self, child: Child) {
        let reaper = std::thread::Builder::new()
            .name("cp-alert".into())
            .spawn(move || wait_or_kill(child));
        if let Ok(reaper) = reaper {
            self.reapers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(reaper);
        }
    }
}

fn wait_or_kill(mut child: Child) {
    let deadline = Instant::now() + COMMAND_LIMIT;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Alerter for TerminalAlerts {
    fn alert(&self, alert: &Alert) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\x07");
        let _ = err.flush();
        drop(err);
        if let Some(tell) = &self.tui {
            tell(alert);
        }
        if let Some(program) = find_program("notify-send", None) {
            let title = format!("Context Pilot: {}", alert.workflow);
            let started = Command::new(program)
                .args(["--app-name=Context Pilot", &title, &alert.message])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(child) = started {
                self.reap(child);
            }
        }
        if let Some(command) = &self.command {
            let started = Command::new("sh")
                .args(["-c", command])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn();
            match started {
                Ok(mut child) => {
                    if let Some(mut stdin) = child.stdin.take() {
                        let json = serde_json::to_string(alert).unwrap_or_default();
                        let _ = writeln!(stdin, "{json}");
                    }
                    self.reap(child);
                }
                Err(e) => eprintln!("context-pilot: notify.command could not start: {e}"),
            }
        }
    }
}

impl Drop for TerminalAlerts {
    fn drop(&mut self) {
        let reapers = std::mem::take(
            self.reapers
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for reaper in reapers {
            let _ = reaper.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_tui_is_told_of_every_alert() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&told);
        let alerts = TerminalAlerts {
            command: None,
            tui: None,
            reapers: Mutex::new(Vec::new()),
        }
        .with_tui(move |alert| seen.lock().unwrap().push(alert.message.clone()));
        alerts.alert(&Alert {
            event: "approval",
            run_id: "r1".into(),
            workflow: "feature".into(),
            phase: "api".into(),
            message: "approval gate after phase 'api': Good?".into(),
        });
        assert_eq!(
            *told.lock().unwrap(),
            vec!["approval gate after phase 'api': Good?".to_owned()]
        );
    }

    fn config(text: &str) -> (tempfile::TempDir, JsonFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, text).unwrap();
        (dir, JsonFile::new(path))
    }

    #[test]
    fn the_command_is_read_and_a_missing_or_empty_one_is_none() {
        let (_dir, file) = config(r#"{"notify": {"command": "ntfy publish x"}, "llm": {}}"#);
        assert_eq!(
            TerminalAlerts::command_in(&file).unwrap().as_deref(),
            Some("ntfy publish x")
        );
        for text in [
            r#"{"llm": {}}"#,
            r#"{"notify": {}}"#,
            r#"{"notify": {"command": " "}}"#,
        ] {
            let (_dir, file) = config(text);
            assert_eq!(TerminalAlerts::command_in(&file).unwrap(), None, "{text}");
        }
    }

    #[test]
    fn a_malformed_section_is_an_error_naming_the_file_and_the_key() {
        for (text, said) in [
            (r#"{"notify": {"command": ["ntfy"]}}"#, "invalid type"),
            (
                r#"{"notify": {"comand": "ntfy"}}"#,
                "unknown field `comand`",
            ),
            (r#"{"notify": "ntfy publish x"}"#, "invalid type"),
        ] {
            let (_dir, file) = config(text);
            let error = TerminalAlerts::command_in(&file).unwrap_err().to_string();
            assert!(error.contains("config.json: notify: "), "{error}");
            assert!(error.contains(said), "{text}: {error}");
        }
        let (_dir, file) = config("{not json");
        assert!(matches!(
            TerminalAlerts::command_in(&file),
            Err(NotifyConfigError::Store(_))
        ));
    }
}
