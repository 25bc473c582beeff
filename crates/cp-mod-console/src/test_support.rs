//! For other crates' tests and benchmarks that need a real console server (feature
//! `test-support`).

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// The variable naming a `cp-console-server` the tests use as it is.
pub const TEST_SERVER_EXE_ENV: &str = "CP_TEST_CONSOLE_SERVER";

/// The `cp-console-server` binary of the calling test's or bench's build profile, built once
/// per process with `cargo build -p cp-mod-console --bin cp-console-server` (`--release` for
/// a release-profile caller).
///
/// Test and bench executables live in `target/<profile>/deps/`; the server is put in
/// `target/<profile>/`.
///
/// ```no_run
/// let mut config = cp_mod_console::ClientConfig::new("/path/to/project");
/// config.server_exe = Some(cp_mod_console::server_exe_for_tests()?);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// With [`TEST_SERVER_EXE_ENV`] set to an existing file, that file is the server and nothing is
/// built: `scripts/test.sh` sets it for a whole `cargo test --workspace`, which builds the
/// server with the tests, with the features the whole workspace turns on. (`cargo build -p
/// cp-mod-console` builds it with the crate's own features instead: `cp-base` and this crate
/// a second time.)
pub fn server_exe_for_tests() -> io::Result<PathBuf> {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(exe) = built.as_ref() {
        return Ok(exe.clone());
    }
    if let Some(exe) = std::env::var_os(TEST_SERVER_EXE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|exe| exe.is_file())
    {
        *built = Some(exe.clone());
        return Ok(exe);
    }
    let caller = std::env::current_exe()?;
    let profile_dir = caller
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or_else(|| {
            io::Error::other(format!(
                "{} is not in target/<profile>/deps/",
                caller.display()
            ))
        })?
        .to_path_buf();
    let mut args = vec![
        "build",
        "-q",
        "-p",
        "cp-mod-console",
        "--bin",
        "cp-console-server",
    ];
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        args.push("--release");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo).args(&args).status()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "`{cargo} {}` failed ({status})",
            args.join(" ")
        )));
    }
    let exe = profile_dir.join("cp-console-server");
    if !exe.exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} missing after the build", exe.display()),
        ));
    }
    *built = Some(exe.clone());
    Ok(exe)
}
