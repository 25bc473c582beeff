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
//! make Context Pilot run a command of its own choosing here.

use std::io::Write as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cp_base::{JsonFile, find_program, user_config_dir};
use cp_orchestrate::{Alert, Alerter};

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

impl TerminalAlerts {
    /// Reads `notify.command` from the user's config (a missing or unreadable file: none).
    pub(crate) fn from_user_config() -> Self {
        let command = user_config_dir()
            .and_then(|dir| JsonFile::new(dir.join("config.json")).read().ok())
            .and_then(|mut config| config.remove("notify"))
            .and_then(|notify| notify.get("command")?.as_str().map(str::to_owned))
            .filter(|c| !c.trim().is_empty());
        Self {
            command,
            tui: None,
            reapers: Mutex::new(Vec::new()),
        }
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
}
