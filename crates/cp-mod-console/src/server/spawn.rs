//! Starting a console's command on its PTY: the program found on `PATH`, the environment
//! the spec asks for, and the spawn itself ([`sys::spawn_on_tty`]).

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use portable_pty::MasterPty;
use uuid::Uuid;

use super::reaper::{AtOnce, Reaper};
use crate::ConsoleError;
use crate::console_info::SpawnSpec;
use crate::proctree::{RUN_MARKER_ENV, SHARED_ENV};
use crate::sys::{self, RawExit, TtySpawn};

/// `PATH` for a command whose environment has none (glibc's `execvp` default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Starts the spec's command (`bash -c COMMAND`, or its argv) on the slave side of
/// `master`'s PTY: stdin, stdout and stderr, in a new session with the PTY as its
/// controlling terminal. Returns the pid, the channel its exit arrives on, and where to set
/// what hears of it at once on the reaper's thread.
pub(super) fn spawn_child(
    spec: &SpawnSpec,
    id: Uuid,
    master: &dyn MasterPty,
    reaper: &Reaper,
) -> Result<(u32, Receiver<RawExit>, AtOnce), ConsoleError> {
    let spawn_err = |reason: String| ConsoleError::Spawn {
        command: spec.command.clone(),
        reason,
    };
    let argv: Vec<String> = match spec.argv.as_deref() {
        Some(argv) if !argv.is_empty() => argv.to_vec(),
        _ => vec!["bash".into(), "-c".into(), spec.command.clone()],
    };
    let env = environment(spec, id);
    let path_var = env
        .iter()
        .find_map(|(k, v)| (k == "PATH").then_some(v.as_os_str()));
    let program = resolve_program(&argv[0], path_var)
        .ok_or_else(|| spawn_err(format!("`{}` not found on PATH", argv[0])))?;
    let tty = master
        .tty_name()
        .ok_or_else(|| spawn_err("the PTY has no slave path".to_owned()))?;
    let c = |bytes: Vec<u8>, what: &str| {
        CString::new(bytes).map_err(|_| spawn_err(format!("{what} holds a NUL byte")))
    };
    let program = c(program.into_os_string().into_vec(), "the program")?;
    let argv = argv
        .into_iter()
        .map(|a| c(a.into_bytes(), "an argument"))
        .collect::<Result<Vec<_>, _>>()?;
    let envp = env
        .into_iter()
        .map(|(k, v)| {
            let mut entry = k.into_vec();
            entry.push(b'=');
            entry.extend_from_slice(v.as_bytes());
            c(entry, "an environment variable")
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cwd = c(spec.cwd.as_os_str().as_bytes().to_vec(), "the directory")?;
    let tty = c(tty.into_os_string().into_vec(), "the PTY path")?;
    let spawn = TtySpawn {
        program: &program,
        argv: &argv,
        envp: &envp,
        cwd: &cwd,
        tty: &tty,
    };
    let ((), pid, exit_rx, at_once) = reaper.spawn_tracked(|| {
        let pid = sys::spawn_on_tty(&spawn).map_err(|e| spawn_err(e.to_string()))?;
        Ok::<_, ConsoleError>(((), pid))
    })?;
    if let Some(nice) = spec.nice {
        // The child has only just exec'd: its group (it leads a new session) is niced before
        // it can start much, and the session's autogroup with it.
        sys::lower_priority(pid, nice);
    }
    Ok((pid, exit_rx, at_once))
}

/// The command's environment: the server's, `TERM` when it has none, the spec's variables,
/// and last the run marker, so a spec cannot override it (the kill finds the console's
/// processes by it). The server's own [`SHARED_ENV`] is not passed on: a console belongs to
/// its run.
fn environment(spec: &SpawnSpec, id: Uuid) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            !spec.env.contains_key(&*k.to_string_lossy()) && k != RUN_MARKER_ENV && k != SHARED_ENV
        })
        .collect();
    if !env.iter().any(|(k, _)| k == "TERM") && !spec.env.contains_key("TERM") {
        env.push(("TERM".into(), "xterm-256color".into()));
    }
    env.extend(
        spec.env
            .iter()
            .filter(|(k, _)| *k != RUN_MARKER_ENV && *k != SHARED_ENV)
            .map(|(k, v)| (k.into(), v.into())),
    );
    env.push((RUN_MARKER_ENV.into(), id.to_string().into()));
    env
}

/// Where `program` is, as `execvp` would find it with `path_var` (an empty entry is the
/// current directory, which for a console is its `cwd`, so it is kept relative).
fn resolve_program(program: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    cp_base::find_program(program, Some(path_var.unwrap_or(OsStr::new(DEFAULT_PATH))))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn programs_are_found_as_execvp_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // Not executable in `a`, executable in `b`: `b`'s wins.
        std::fs::write(a.join("tool"), "").unwrap();
        std::fs::write(b.join("tool"), "").unwrap();
        std::fs::set_permissions(b.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(resolve_program("tool", Some(&path)), Some(b.join("tool")));
        assert_eq!(resolve_program("missing", Some(&path)), None);
        assert_eq!(
            resolve_program("./x/y", Some(&path)),
            Some(PathBuf::from("./x/y"))
        );
        assert!(resolve_program("sh", None).is_some(), "the default PATH");
    }

    #[test]
    fn the_spec_cannot_override_the_run_marker() {
        let mut spec = SpawnSpec::new("true", "/");
        spec.env.insert(RUN_MARKER_ENV.into(), "forged".into());
        spec.env.insert("TERM".into(), "dumb".into());
        let id = Uuid::new_v4();
        let env = environment(&spec, id);
        let get = |k: &str| {
            env.iter()
                .filter(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(get(RUN_MARKER_ENV), [OsString::from(id.to_string())]);
        assert_eq!(get("TERM"), [OsString::from("dumb")]);
    }
}
