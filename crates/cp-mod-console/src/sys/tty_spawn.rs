//! Starting a console's command on its PTY: in a new session whose controlling terminal is
//! the PTY, with `posix_spawn` where the C library can change a spawn's directory, else with
//! `fork` and `exec` of the same steps. Part of [`super`], which keeps the unsafe calls.

use std::ffi::{CStr, CString};
use std::io;

use super::start_session;

/// What [`spawn_on_tty`] starts: every string already a C string, so the spawn itself
/// allocates nothing.
pub(crate) struct TtySpawn<'a> {
    /// The program's path (one containing a `/`; no `PATH` search happens here).
    pub program: &'a CStr,
    /// Its arguments, `argv[0]` first.
    pub argv: &'a [CString],
    /// Its whole environment, as `NAME=value`.
    pub envp: &'a [CString],
    /// The directory it starts in.
    pub cwd: &'a CStr,
    /// The PTY slave's path: its stdin, stdout and stderr, and its controlling terminal.
    pub tty: &'a CStr,
}

/// Starts a console's command: in a new session (`setsid`) whose controlling terminal is the
/// PTY, with stdin, stdout and stderr on it, in `cwd`, the signals the server handles back at
/// their defaults and none blocked. Returns its pid.
///
/// With `posix_spawn` where glibc can change a spawn's directory
/// (`posix_spawn_file_actions_addchdir_np`, glibc 2.29 and newer; see [`posix_spawn_on_tty`]),
/// else with a `fork` and `exec` of the same steps ([`fork_on_tty`]): the release binary is
/// linked for glibc 2.17, so the function is looked up when the binary runs, never linked to.
pub(crate) fn spawn_on_tty(spawn: &TtySpawn<'_>) -> io::Result<u32> {
    match addchdir() {
        Some(addchdir) => posix_spawn_on_tty(spawn, addchdir),
        None => fork_on_tty(spawn),
    }
}

/// glibc's `posix_spawn_file_actions_addchdir_np`.
type AddChdir =
    unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const libc::c_char) -> libc::c_int;

/// `posix_spawn_file_actions_addchdir_np` when the C library this process runs with has it
/// (looked up once, by name: a glibc older than 2.29 has none).
fn addchdir() -> Option<AddChdir> {
    static FOUND: std::sync::OnceLock<Option<AddChdir>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        // SAFETY: dlsym only looks a NUL-terminated name up in the loaded objects.
        let symbol = unsafe {
            libc::dlsym(
                libc::RTLD_DEFAULT,
                c"posix_spawn_file_actions_addchdir_np".as_ptr(),
            )
        };
        // SAFETY: a non-null address for this name is glibc's function, whose C signature
        // is exactly `AddChdir`.
        (!symbol.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut libc::c_void, AddChdir>(symbol) })
    })
}

/// [`spawn_on_tty`] with `posix_spawn`.
///
/// `posix_spawn` starts the child without copying the server's memory (glibc uses
/// `CLONE_VFORK`) and reports a failed `exec` as its error, where a `fork` of the
/// multi-threaded server cost a few hundred microseconds on every console. The controlling
/// terminal comes from the order glibc applies a spawn's attributes in: `setsid` first, then
/// the file actions, so opening the slave (without `O_NOCTTY`) as fd 0 makes it the new
/// process session's terminal. Descriptors need no closing: everything the server opens is
/// close-on-exec (see [`cloexec_inherited_fds`]).
fn posix_spawn_on_tty(spawn: &TtySpawn<'_>, addchdir: AddChdir) -> io::Result<u32> {
    let mut plan = SpawnPlan::new()?;
    plan.new_session_with_default_signals()?;
    plan.on_tty(spawn.cwd, spawn.tty, addchdir)?;
    plan.spawn(spawn.program, spawn.argv, spawn.envp)
}

/// [`spawn_on_tty`] where glibc's `posix_spawn` cannot change directory (glibc before 2.29,
/// which also lacks `POSIX_SPAWN_SETSID`): std's `fork` and `exec`, which changes to `cwd`,
/// unblocks every signal and sets `SIGPIPE` back to its default in the child, then, before
/// `exec`, the same steps as the file actions and attributes of [`posix_spawn_on_tty`]. std
/// reports a failed `exec` as the spawn's error and reaps that child itself, as glibc's
/// `posix_spawn` does.
fn fork_on_tty(spawn: &TtySpawn<'_>) -> io::Result<u32> {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;

    let os = |c: &CStr| OsStr::from_bytes(c.to_bytes()).to_owned();
    let mut cmd = std::process::Command::new(os(spawn.program));
    if let Some((arg0, args)) = spawn.argv.split_first() {
        cmd.arg0(os(arg0)).args(args.iter().map(|a| os(a)));
    }
    cmd.env_clear().current_dir(os(spawn.cwd));
    for entry in spawn.envp {
        let bytes = entry.to_bytes();
        let (name, value) = match bytes.iter().position(|&b| b == b'=') {
            Some(at) => (&bytes[..at], &bytes[at + 1..]),
            None => (bytes, &b""[..]),
        };
        cmd.env(OsStr::from_bytes(name), OsStr::from_bytes(value));
    }
    let tty = spawn.tty.to_owned();
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
    // (setsid, open, dup2, close, sigaction) on values made before the fork; it allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || {
            start_session()?;
            // Opened without O_NOCTTY by a session leader with no terminal: the PTY becomes
            // the session's controlling terminal, as in `posix_spawn_on_tty`.
            let fd = libc::open(tty.as_ptr(), libc::O_RDWR);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            for target in 0..=2 {
                if fd != target && libc::dup2(fd, target) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if fd > 2 {
                libc::close(fd);
            }
            for signo in SERVER_SIGNALS {
                libc::signal(signo, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    // The `Child` is dropped without waiting: the server's reaper reaps the pid.
    Ok(cmd.spawn()?.id())
}

/// The signals the server handles itself, which a console's command gets back at their
/// defaults.
const SERVER_SIGNALS: [libc::c_int; 7] = [
    libc::SIGCHLD,
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGALRM,
    libc::SIGPIPE,
];

/// A `posix_spawn`'s attributes and file actions, destroyed on every way out.
struct SpawnPlan {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

/// An `errno`-style return code as a result.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// An empty signal set.
fn empty_sigset() -> libc::sigset_t {
    // SAFETY: `sigset_t` is a plain C struct for which all zeroes is a valid value, and
    // `sigemptyset` only writes the set it is given.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        set
    }
}

impl SpawnPlan {
    /// Attributes and file actions, both initialised and empty.
    fn new() -> io::Result<Self> {
        // SAFETY: plain C structs, zeroed, then initialised by their `_init` functions
        // before any other use; an attribute set whose actions fail to initialise is
        // destroyed here, and from then on `Drop` destroys both exactly once.
        unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            check(libc::posix_spawnattr_init(&raw mut attr))?;
            let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
            if let Err(e) = check(libc::posix_spawn_file_actions_init(&raw mut actions)) {
                libc::posix_spawnattr_destroy(&raw mut attr);
                return Err(e);
            }
            Ok(Self { attr, actions })
        }
    }

    /// The child starts a new session (`setsid`), with no signal blocked and the server's
    /// signals back at their defaults.
    fn new_session_with_default_signals(&mut self) -> io::Result<()> {
        // The libc crate types the flags apart (SETSID as c_short, the others as c_int);
        // all fit a c_short, which is what setflags takes.
        let flags = i32::from(libc::POSIX_SPAWN_SETSID)
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        let flags = libc::c_short::try_from(flags)
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let none = empty_sigset();
        let mut defaults = empty_sigset();
        for signo in SERVER_SIGNALS {
            // SAFETY: adds a valid signal number to an initialised set.
            unsafe { libc::sigaddset(&raw mut defaults, signo) };
        }
        // SAFETY: `self.attr` was initialised in `new`; the sets are initialised and only
        // read during the calls.
        unsafe {
            check(libc::posix_spawnattr_setflags(&raw mut self.attr, flags))?;
            check(libc::posix_spawnattr_setsigmask(
                &raw mut self.attr,
                &raw const none,
            ))?;
            check(libc::posix_spawnattr_setsigdefault(
                &raw mut self.attr,
                &raw const defaults,
            ))
        }
    }

    /// The child starts in `cwd` with the PTY slave `tty` as stdin, stdout and stderr;
    /// opened without `O_NOCTTY` after `setsid`, it becomes the session's terminal.
    fn on_tty(&mut self, cwd: &CStr, tty: &CStr, addchdir: AddChdir) -> io::Result<()> {
        // SAFETY: `self.actions` was initialised in `new`; glibc copies the paths, which
        // are valid C strings for the duration of each call.
        unsafe {
            check(addchdir(&raw mut self.actions, cwd.as_ptr()))?;
            check(libc::posix_spawn_file_actions_addopen(
                &raw mut self.actions,
                0,
                tty.as_ptr(),
                libc::O_RDWR,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &raw mut self.actions,
                0,
                1,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &raw mut self.actions,
                0,
                2,
            ))
        }
    }

    /// Starts `program` with `argv` and `envp` as planned; returns its pid.
    fn spawn(&self, program: &CStr, argv: &[CString], envp: &[CString]) -> io::Result<u32> {
        let pointers = |strings: &[CString]| -> Vec<*mut libc::c_char> {
            strings
                .iter()
                .map(|s| s.as_ptr().cast_mut())
                .chain(std::iter::once(std::ptr::null_mut()))
                .collect()
        };
        let (argv, envp) = (pointers(argv), pointers(envp));
        let mut pid: libc::pid_t = 0;
        // SAFETY: the attributes and actions are initialised; `program` and every pointer
        // of `argv`/`envp` point into C strings that outlive the call, and both arrays are
        // null-terminated; posix_spawn only reads them.
        check(unsafe {
            libc::posix_spawn(
                &raw mut pid,
                program.as_ptr(),
                &raw const self.actions,
                &raw const self.attr,
                argv.as_ptr(),
                envp.as_ptr(),
            )
        })?;
        u32::try_from(pid).map_err(|_| io::Error::other("posix_spawn returned no pid"))
    }
}

impl Drop for SpawnPlan {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` and are destroyed once, here.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&raw mut self.actions);
            libc::posix_spawnattr_destroy(&raw mut self.attr);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use portable_pty::{PtySize, native_pty_system};

    use super::*;

    /// Spawns a shell that reports its state with `spawn`, waits for it, and says what is not
    /// as a console's command must start (nothing when all is).
    fn wrong_when_spawned_by(spawn: fn(&TtySpawn<'_>) -> io::Result<u32>) -> Vec<String> {
        let pair = native_pty_system().openpty(PtySize::default()).unwrap();
        let tty = pair.master.tty_name().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let script = "pwd > seen; cat /proc/$$/stat >> seen; tty >> seen; \
                      exec grep -E '^Sig(Blk|Ign):' /proc/self/status >> seen";
        let c = |s: &str| CString::new(s).unwrap();
        let argv = [c("sh"), c("-c"), c(script)];
        let envp = [c("PATH=/usr/bin:/bin")];
        let (program, cwd_c, tty_c) = (
            c("/bin/sh"),
            c(cwd.to_str().unwrap()),
            c(tty.to_str().unwrap()),
        );
        // The spawning thread blocks SIGALRM and ignores SIGHUP, as a server's threads may:
        // the command must get neither.
        // SAFETY: the signal calls take a valid set and change only this thread's mask and
        // the disposition of SIGHUP, which the test process does not rely on.
        let pid = unsafe {
            let mut block = empty_sigset();
            libc::sigaddset(&raw mut block, libc::SIGALRM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &raw const block, std::ptr::null_mut());
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            let pid = spawn(&TtySpawn {
                program: &program,
                argv: &argv,
                envp: &envp,
                cwd: &cwd_c,
                tty: &tty_c,
            });
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &raw const block, std::ptr::null_mut());
            pid.unwrap()
        };
        let mut status = 0;
        // SAFETY: waits for this test's own child, writing into a valid int.
        let rc = unsafe { libc::waitpid(i32::try_from(pid).unwrap(), &raw mut status, 0) };
        assert_eq!(rc, i32::try_from(pid).unwrap());
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{status}"
        );
        let seen = std::fs::read_to_string(cwd.join("seen")).unwrap();
        let lines: Vec<&str> = seen.lines().collect();
        // /proc/PID/stat: pid (comm) state ppid pgrp session tty_nr ...
        let stat: Vec<&str> = lines[1]
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let field = |name: &str| {
            lines
                .iter()
                .find_map(|l| l.strip_prefix(name))
                .unwrap()
                .trim()
                .to_owned()
        };
        let mut wrong = Vec::new();
        if Path::new(lines[0]) != cwd {
            wrong.push(format!("runs in {}", lines[0]));
        }
        if stat[3] != lines[1].split(' ').next().unwrap() {
            wrong.push(format!("is in session {}, not its own", stat[3]));
        }
        if Path::new(lines[2]) != tty {
            wrong.push(format!("has {} as its terminal", lines[2]));
        }
        let blocked = field("SigBlk:");
        if blocked != "0000000000000000" {
            wrong.push(format!("has signals {blocked} blocked"));
        }
        let ignored = u64::from_str_radix(&field("SigIgn:"), 16).unwrap();
        for signo in SERVER_SIGNALS {
            if ignored & (1 << (signo - 1)) != 0 {
                wrong.push(format!("ignores signal {signo}"));
            }
        }
        wrong
    }

    #[test]
    fn both_ways_of_spawning_start_the_command_alike() {
        assert_eq!(
            wrong_when_spawned_by(fork_on_tty),
            Vec::<String>::new(),
            "fork"
        );
        // The tests' glibc is newer than 2.29: spawn_on_tty takes posix_spawn.
        assert!(addchdir().is_some());
        assert_eq!(
            wrong_when_spawned_by(spawn_on_tty),
            Vec::<String>::new(),
            "posix_spawn"
        );
    }
}
