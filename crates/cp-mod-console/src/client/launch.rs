//! Starting the console server on demand, exactly once even when clients race.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::ClientConfig;
use crate::paths::RunPaths;
use crate::{ConsoleError, proctree, sys};

/// The environment variable that names the server executable, which is run as
/// `EXE console-server --project ROOT`.
pub const SERVER_EXE_ENV: &str = "CP_CONSOLE_SERVER_EXE";

/// The executable that runs the server: the config's, else `$CP_CONSOLE_SERVER_EXE`, else
/// this very program (the `context-pilot` binary has a hidden `console-server` subcommand).
fn server_exe(config: &ClientConfig) -> Result<PathBuf, ConsoleError> {
    if let Some(exe) = &config.server_exe {
        return Ok(exe.clone());
    }
    if let Some(exe) = std::env::var_os(SERVER_EXE_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(exe));
    }
    std::env::current_exe().map_err(|e| ConsoleError::Launch {
        command: "<current executable>".into(),
        reason: format!("cannot find this program's path ({e}); set {SERVER_EXE_ENV}"),
    })
}

/// Whether a server answers on the socket right now.
pub(super) fn socket_answers(paths: &RunPaths) -> bool {
    UnixStream::connect(paths.socket()).is_ok()
}

/// Starts a server for the project unless one answers already. Clients serialise on the
/// launch lock; the server's own lock makes a second server exit even without it.
pub(super) fn ensure_server(paths: &RunPaths, config: &ClientConfig) -> Result<(), ConsoleError> {
    paths.create_dirs()?;
    let lock_path = paths.launch_lock();
    let lock = RunPaths::private_file(&lock_path, false)
        .map_err(ConsoleError::io("opening the launch lock", &lock_path))?;
    let deadline = Instant::now() + config.start_timeout;
    while !sys::try_lock_exclusive(&lock).map_err(ConsoleError::io("locking", &lock_path))? {
        if Instant::now() >= deadline {
            return Err(ConsoleError::Launch {
                command: "<waiting for another client>".into(),
                reason: format!(
                    "another client held {} for {:?}",
                    lock_path.display(),
                    config.start_timeout
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if socket_answers(paths) {
        return Ok(());
    }
    let exe = server_exe(config)?;
    let shown = format!(
        "{} console-server --project {}",
        exe.display(),
        paths.root().display()
    );
    let log_path = paths.server_log();
    let log = RunPaths::private_file(&log_path, true)
        .map_err(ConsoleError::io("opening the server log", &log_path))?;
    let log_start = log.metadata().map_or(0, |m| m.len());
    let mut cmd = Command::new(&exe);
    cmd.arg("console-server")
        .arg("--project")
        .arg(paths.root())
        .current_dir(paths.root())
        .envs(&config.server_env)
        // The server serves every client of the project: no run's kill may end it.
        .env(proctree::SHARED_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    sys::detach_on_spawn(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| ConsoleError::Launch {
        command: shown.clone(),
        reason: e.to_string(),
    })?;
    // Reap the server when it ends, in case this client outlives it.
    let exited = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&exited);
    let _ = std::thread::Builder::new()
        .name("console-server-reaper".into())
        .spawn(move || {
            let _ = child.wait();
            flag.store(true, Ordering::SeqCst);
        });
    loop {
        if socket_answers(paths) {
            return Ok(());
        }
        if exited.load(Ordering::SeqCst) && !socket_answers(paths) {
            return Err(ConsoleError::Launch {
                command: shown,
                reason: format!(
                    "it exited at once; its log says: {}",
                    log_since(&log_path, log_start)
                ),
            });
        }
        if Instant::now() >= deadline {
            return Err(ConsoleError::Launch {
                command: shown,
                reason: format!(
                    "no answer on {} within {:?}; see {}",
                    paths.socket().display(),
                    config.start_timeout,
                    log_path.display()
                ),
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What the server wrote to its log since `start` (bounded), for error messages.
fn log_since(path: &std::path::Path, start: u64) -> String {
    let mut text = String::new();
    if let Ok(mut f) = fs::File::open(path)
        && f.seek(SeekFrom::Start(start)).is_ok()
    {
        let _ = f.take(2000).read_to_string(&mut text);
    }
    let text = text.trim();
    if text.is_empty() {
        "(nothing)".into()
    } else {
        text.to_owned()
    }
}
