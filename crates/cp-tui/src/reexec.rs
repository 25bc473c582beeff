//! The process side of a live reload: check that the new binary runs, then `exec` it with
//! `--resume`. (Deciding when to reload is the app's: `app/reload.rs`.)
//!
//! The process keeps its pid; consoles keep running in the console server and are reattached
//! from the saved TUI state. If the new binary is missing or broken, nothing happens to the
//! running host except a message saying why.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Carries the moment the reload was requested into the new process, for the reload timing.
pub const SIGNAL_AT_ENV: &str = "CP_RELOAD_REQUESTED_AT_US";

/// Why a reload did not happen; the running host stays up and says so.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    #[error("the path of the running binary is unknown")]
    UnknownExe,
    #[error("{} cannot be started: {source}", exe.display())]
    Start {
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error("{} --version failed ({status})", exe.display())]
    VersionFailed {
        exe: PathBuf,
        status: std::process::ExitStatus,
    },
    #[error("{} --version did not answer within 5 s", exe.display())]
    NoAnswer { exe: PathBuf },
    #[error("waiting for {}: {source}", exe.display())]
    Wait {
        exe: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not context-pilot (its --version said {said:?})", exe.display())]
    NotContextPilot { exe: PathBuf, said: String },
    #[error("cannot exec {}: {source}", exe.display())]
    Exec {
        exe: PathBuf,
        source: std::io::Error,
    },
}

pub use cp_host::program::exe_path;

/// Runs `exe --version` (5 s limit): the new binary must start and say it is context-pilot.
pub fn check_binary(exe: &Path) -> Result<(), ReloadError> {
    let mut child = Command::new(exe)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| ReloadError::Start {
            exe: exe.to_owned(),
            source,
        })?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => {
                return Err(ReloadError::VersionFailed {
                    exe: exe.to_owned(),
                    status,
                });
            }
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ReloadError::NoAnswer {
                    exe: exe.to_owned(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(source) => {
                return Err(ReloadError::Wait {
                    exe: exe.to_owned(),
                    source,
                });
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
    }
    if out.starts_with("context-pilot") {
        Ok(())
    } else {
        Err(ReloadError::NotContextPilot {
            exe: exe.to_owned(),
            said: out.trim().to_owned(),
        })
    }
}

/// The arguments for the new process: this process's, plus `--resume` once, and `--agent
/// NAME` when the agent was picked on the no-model screen (`picked_agent`) rather than given;
/// or, when a workflow run paused for the reload, the command that resumes that run.
pub fn resume_args(
    paused_run: Option<(&Path, &str, &str)>,
    picked_agent: Option<&str>,
) -> Vec<OsString> {
    if let Some((root, worker, run_id)) = paused_run {
        return [
            "--project".into(),
            root.as_os_str().to_owned(),
            "--worker".into(),
            worker.into(),
            "run".into(),
            "--resume".into(),
            run_id.into(),
        ]
        .into_iter()
        .collect();
    }
    let mut args: Vec<OsString> = std::env::args_os()
        .skip(1)
        .filter(|a| a != "--resume")
        .collect();
    if let Some(name) = picked_agent
        && !args
            .iter()
            .any(|a| a == "--agent" || a.to_string_lossy().starts_with("--agent="))
    {
        // Before any subcommand: `--agent` is the top-level flag.
        args.splice(0..0, ["--agent".into(), name.into()]);
    }
    args.push("--resume".into());
    args
}

/// Replaces this process with `exe`. Returns only if exec failed.
pub fn exec(exe: &Path, args: Vec<OsString>, requested_at: SystemTime) -> std::io::Error {
    let micros = requested_at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    Command::new(exe)
        .args(args)
        .env(SIGNAL_AT_ENV, micros.to_string())
        .exec()
}

/// In a process started by a reload: how long from the request to now (the first frame).
pub fn elapsed_since_request() -> Option<Duration> {
    let micros: u64 = std::env::var(SIGNAL_AT_ENV).ok()?.parse().ok()?;
    let requested = UNIX_EPOCH + Duration::from_micros(micros);
    SystemTime::now().duration_since(requested).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_picked_on_the_no_model_screen_is_passed_on_to_the_new_process() {
        let args = resume_args(None, Some("claude"));
        assert_eq!(&args[..2], ["--agent", "claude"]);
        assert_eq!(
            args.last().map(OsString::as_os_str),
            Some("--resume".as_ref())
        );
        assert!(!resume_args(None, None).iter().any(|a| a == "--agent"));
    }
}
