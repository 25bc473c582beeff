//! Logs go to `.context-pilot/logs/context-pilot.log`, never to the screen.

use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber writing to `logs_dir`. Level from `CP_LOG` (default `info`).
/// Failing to open the log file is not fatal: the host runs without logs.
pub fn init(logs_dir: &Path) {
    // Private to this user, like everything under logs/, whatever the umask (see
    // cp_base::private).
    if cp_base::private::create_dir_all(logs_dir).is_err() {
        return;
    }
    let path = logs_dir.join("context-pilot.log");
    let Ok(file) = cp_base::private::open_options(&path)
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let filter = EnvFilter::try_from_env("CP_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init();
}
