//! How a headless `context-pilot run` tells the person it needs them (an approval gate or a
//! merge conflict waits, a phase failed): the terminal bell at once, a desktop notification
//! where `notify-send` is installed (nothing, and no error, where it is not), and the
//! person's own command from their user config, run with the alert as JSON on stdin:
//!
//! ```json
//! {"notify": {"command": "curl -s -d \"$(jq -r .message)\" ntfy.sh/my-topic"}}
//! ```
//!
//! in `~/.config/context-pilot/config.json`. The command runs in a process group of its own,
//! its processes tagged ([`cp_base::proctree`]); whatever it leaves running (a process it
//! backgrounded, one that called `setsid`) is ended with it once [`COMMAND_LIMIT`] has
//! passed. Only the user's config is read: a project cannot
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

use cp_base::proctree::{self, RUN_MARKER_ENV};
use cp_base::{JsonFile, StoreError, find_program, user_config_dir};
use cp_orchestrate::{Alert, Alerter};
use serde::Deserialize;

/// How long a notification command (and what it started) may run before it is ended.
const COMMAND_LIMIT: Duration = Duration::from_secs(10);

/// How long the processes of a command past its limit get to exit after SIGTERM.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// Tells the TUI about an alert.
type TellTui = dyn Fn(&Alert) + Send + Sync;

/// The bell, `notify-send` and the user's `notify.command`.
pub struct TerminalAlerts {
    command: Option<String>,
    /// How long the command may run ([`COMMAND_LIMIT`]; shorter in tests).
    limit: Duration,
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
pub enum NotifyConfigError {
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
    pub fn from_user_config() -> Result<Self, NotifyConfigError> {
        let command = match user_config_dir() {
            Some(dir) => Self::command_in(&JsonFile::new(dir.join("config.json")))?,
            None => None,
        };
        Ok(Self {
            command,
            limit: COMMAND_LIMIT,
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
    #[must_use]
    pub fn with_tui(mut self, tell: impl Fn(&Alert) + Send + Sync + 'static) -> Self {
        self.tui = Some(Box::new(tell));
        self
    }

    fn reap(&self, child: Child, marker: Option<String>) {
        let limit = self.limit;
        let reaper = std::thread::Builder::new()
            .name("cp-alert".into())
            .spawn(move || wait_or_kill(child, marker.as_deref(), limit));
        if let Ok(reaper) = reaper {
            self.reapers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(reaper);
        }
    }
}

/// Waits for `child` and, when it was started with `marker`, for every process it started;
/// past `limit`, ends them all (its group, and the processes carrying the marker).
fn wait_or_kill(mut child: Child, marker: Option<&str>, limit: Duration) {
    let deadline = Instant::now() + limit;
    let group = i32::try_from(child.id()).unwrap_or(0);
    let mut exited = false;
    while Instant::now() < deadline {
        if !exited {
            exited = !matches!(child.try_wait(), Ok(None));
        }
        let left =
            exited && marker.is_none_or(|marker| proctree::run_processes(group, marker).is_empty());
        if left {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match marker {
        Some(marker) => {
            proctree::kill_tree(group, marker, KILL_GRACE);
        }
        None => {
            let _ = child.kill();
        }
    }
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
                self.reap(child, None);
            }
        }
        if let Some(command) = &self.command {
            let marker = proctree::new_marker();
            let mut sh = Command::new("sh");
            sh.args(["-c", command])
                .env(RUN_MARKER_ENV, &marker)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit());
            std::os::unix::process::CommandExt::process_group(&mut sh, 0);
            let started = sh.spawn();
            match started {
                Ok(mut child) => {
                    if let Some(mut stdin) = child.stdin.take() {
                        let json = serde_json::to_string(alert).unwrap_or_default();
                        let _ = writeln!(stdin, "{json}");
                    }
                    self.reap(child, Some(marker));
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
            limit: COMMAND_LIMIT,
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

    fn alert() -> Alert {
        Alert {
            event: "phase_failed",
            run_id: "r1".into(),
            workflow: "feature".into(),
            phase: "api".into(),
            message: "phase 'api' failed".into(),
        }
    }

    #[test]
    fn the_command_gets_the_alert_and_nothing_it_started_outlives_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let got = dir.path().join("alert.json");
        let pid = dir.path().join("daemon.pid");
        // Reads the alert, then leaves a daemon in a session of its own.
        let command = format!(
            "cat > '{}'; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > '{}'",
            got.display(),
            pid.display()
        );
        let alerts = TerminalAlerts {
            command: Some(command),
            limit: Duration::from_millis(300),
            tui: None,
            reapers: Mutex::new(Vec::new()),
        };
        alerts.alert(&alert());
        drop(alerts);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&got).unwrap()).unwrap();
        assert_eq!(json["event"], "phase_failed");
        let pid: i32 = std::fs::read_to_string(&pid)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie_or_gone = state
            .rsplit_once(')')
            .is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'));
        assert!(zombie_or_gone, "the daemon {pid} still runs: {state}");
    }

    #[test]
    fn a_quick_command_is_reaped_at_once() {
        let alerts = TerminalAlerts {
            command: Some("cat >/dev/null".into()),
            limit: Duration::from_secs(60),
            tui: None,
            reapers: Mutex::new(Vec::new()),
        };
        let started = Instant::now();
        alerts.alert(&alert());
        drop(alerts);
        assert!(started.elapsed() < Duration::from_secs(30));
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
