//! Which program the agents and the warm runs start: this very `context-pilot` binary.

use std::path::PathBuf;
use std::sync::OnceLock;

static EXE: OnceLock<PathBuf> = OnceLock::new();

/// Remembers the binary's path at start. After a rebuild the running file is replaced, and
/// `/proc/self/exe` would then name the deleted old file, so the path must be taken early.
pub fn remember_exe() {
    if let Ok(exe) = std::env::current_exe() {
        let _ = EXE.set(exe);
    }
}

/// The `context-pilot` binary's path, when this process is it (its `main` remembered it).
pub fn binary_path() -> Option<PathBuf> {
    EXE.get().cloned()
}

/// The path to exec on reload.
pub fn exe_path() -> Option<PathBuf> {
    EXE.get().cloned().or_else(|| std::env::current_exe().ok())
}

/// How the agents should start Context Pilot: `context-pilot` when that name on `PATH` is
/// this very binary, else this binary's absolute path.
pub fn program() -> String {
    let Ok(exe) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return "context-pilot".to_owned();
    };
    let on_path = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            std::fs::canonicalize(dir.join("context-pilot")).is_ok_and(|found| found == exe)
        })
    });
    if on_path {
        "context-pilot".to_owned()
    } else {
        exe.display().to_string()
    }
}
