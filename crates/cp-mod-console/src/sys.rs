//! The few raw libc calls the console server and client need, each wrapped in a safe function.
//!
//! Keeping every `unsafe` block in this module (this file and `sys/tty_spawn.rs`, the spawn of
//! a console's command) makes the unsafe surface easy to audit.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

mod tty_spawn;
pub(crate) use tty_spawn::{TtySpawn, spawn_on_tty};

/// Takes an exclusive advisory lock on `file` without blocking. `Ok(false)` means another
/// process holds it.
pub(crate) fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    // SAFETY: the fd is valid for the lifetime of `file`.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}

/// The real user id of this process.
pub(crate) fn current_uid() -> u32 {
    // SAFETY: `getuid` cannot fail and has no preconditions.
    unsafe { libc::getuid() }
}

/// Starts a new session with this process as its leader (used in `pre_exec` of the server
/// launch, so the server survives the terminal and process group of the host).
pub(crate) fn start_session() -> io::Result<()> {
    // SAFETY: `setsid` is async-signal-safe and has no memory-safety preconditions.
    if unsafe { libc::setsid() } == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Makes this process adopt orphaned descendants, so the grandchildren of a killed console
/// are reaped by the server instead of lingering as zombies (Linux only; a no-op elsewhere).
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument and touches no memory.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            tracing::warn!(
                "could not become a child subreaper: {}",
                io::Error::last_os_error()
            );
        }
    }
}

/// How long a niced console's autogroup setting is retried: the kernel takes one such
/// change every 100 ms from an unprivileged process and refuses others with `EAGAIN`.
const AUTOGROUP_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// Lowers the priority of the process group `pgid` (a console that leads its own session) to
/// niceness `nice`, and that of its session's autogroup. Where the kernel groups sessions
/// (`/proc/sys/kernel/sched_autogroup_enabled`), it shares the CPU between sessions first and
/// only then by niceness within one, so a niced console in a session of its own would still
/// get a whole session's share: the autogroup's own niceness is what yields to the agent's
/// work. Failures are logged; the console then runs at normal priority.
pub(crate) fn lower_priority(pgid: u32, nice: u8) {
    let who: libc::id_t = pgid;
    // SAFETY: setpriority takes plain integers and touches no memory.
    let rc = unsafe { libc::setpriority(libc::PRIO_PGRP, who, libc::c_int::from(nice)) };
    if rc != 0 {
        tracing::warn!(
            "console group {pgid}: cannot lower its priority to nice {nice}: {}",
            io::Error::last_os_error()
        );
    }
    let path = format!("/proc/{pgid}/autogroup");
    let set = move || {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| io::Write::write_all(&mut f, nice.to_string().as_bytes()))
    };
    // Other failures: no autogroup support in this kernel, or the console is already gone.
    if let Err(e) = set()
        && e.raw_os_error() == Some(libc::EAGAIN)
    {
        let retry = std::thread::Builder::new()
            .name("autogroup-nice".into())
            .spawn(move || {
                let deadline = std::time::Instant::now() + AUTOGROUP_RETRY;
                while std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    match set() {
                        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
                        _ => return,
                    }
                }
            });
        if let Err(e) = retry {
            tracing::warn!("console group {pgid}: cannot retry its autogroup niceness: {e}");
        }
    }
}

/// Puts the process session led by `pgid` back to normal priority (see [`lower_priority`]): its
/// autogroup, which any process of the user may set back to 0 (the kernel takes one change
/// every 100 ms, so a refused one is retried for a moment), and the group's own niceness
/// when this process may raise priority (otherwise that is left as it is).
pub(crate) fn restore_priority(pgid: u32) {
    let path = format!("/proc/{pgid}/autogroup");
    for _ in 0..10 {
        let set = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| io::Write::write_all(&mut f, b"0"));
        match set {
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            _ => break,
        }
    }
    let who: libc::id_t = pgid;
    // SAFETY: setpriority takes plain integers and touches no memory. EACCES (no privilege to
    // raise priority) leaves the niceness as it was, which is all this can do then.
    let _ = unsafe { libc::setpriority(libc::PRIO_PGRP, who, 0) };
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawExit {
    /// Exited normally with this code.
    Code(i32),
    /// Terminated by this signal.
    Signal(i32),
}

/// Blocks until some child of this process has terminated and returns its pid, WITHOUT
/// reaping it (`WNOWAIT`), so the caller can decide who reaps. `Ok(None)` means there are no
/// children at all.
pub(crate) fn peek_exited_child() -> io::Result<Option<u32>> {
    loop {
        // SAFETY: siginfo_t is plain old data; zeroed is a valid initial value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t.
        let rc =
            unsafe { libc::waitid(libc::P_ALL, 0, &raw mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            // SAFETY: waitid filled `info` for an exited child, so si_pid is initialised.
            let pid = unsafe { info.si_pid() };
            return Ok(u32::try_from(pid).ok());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::ECHILD) => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// Reaps the terminated child `pid` if it is still waiting to be reaped.
pub(crate) fn reap(pid: u32) -> Option<RawExit> {
    let pid = i32::try_from(pid).ok()?;
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int.
        let rc = unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) };
        if rc == pid {
            return Some(if libc::WIFEXITED(status) {
                RawExit::Code(libc::WEXITSTATUS(status))
            } else if libc::WIFSIGNALED(status) {
                RawExit::Signal(libc::WTERMSIG(status))
            } else {
                RawExit::Code(-1)
            });
        }
        if rc == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
}

/// Makes the command start in a new session (setsid in the child before exec), detached from
/// the host's terminal and process group, so a Ctrl-C or the host's death does not reach it.
pub(crate) fn detach_on_spawn(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure only calls `setsid`, which is async-signal-safe, as `pre_exec`
    // requires between fork and exec.
    unsafe {
        cmd.pre_exec(start_session);
    }
}

/// Waits up to `timeout` for `fd` to become readable (for a listener: a pending connection).
pub(crate) fn wait_readable(
    fd: std::os::fd::RawFd,
    timeout: std::time::Duration,
) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `pfd` is one valid pollfd and we pass a count of 1.
    let rc = unsafe { libc::poll(&raw mut pfd, 1, ms) };
    if rc < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINTR) {
            return Ok(false);
        }
        return Err(err);
    }
    Ok(rc > 0)
}

/// Sets close-on-exec on every descriptor above stderr that this process inherited, so no
/// console command inherits them (the server's own descriptors are close-on-exec already).
/// Run once at server start, before any thread spawns a command.
pub(crate) fn cloexec_inherited_fds() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: F_GETFD/F_SETFD on a descriptor number only change its flags; a number
        // that was the read_dir handle (now closed) just fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}
