//! Ending every process a run started, including the ones that left its process group.
//!
//! A process group is not enough: a command can call `setsid` (or double-fork into a new
//! session), and the daemon it leaves behind would outlive a timeout or a kill. Each run is
//! therefore tagged with a unique marker in its environment ([`RUN_MARKER_ENV`]), which every
//! descendant inherits whatever group or session it moves to. Ending a run signals, in one
//! scan of `/proc`: the run's process group, every process carrying the run's marker, and
//! every descendant (by parent pid) of those — the last catches a child that cleared its
//! environment while its parent still lives. The scan repeats until nothing is left, so a
//! process forked during the kill is found on the next pass.
//!
//! One process is spared: a shared server a run happened to start (the console server, which
//! a hook or the MCP server of an agent may launch and which serves every client of the
//! project) says so with [`SHARED_ENV`] in its environment, and neither it nor what it started
//! belongs to the run. The console server keeps the variable out of its consoles.
//!
//! The console server is a child subreaper (cp-mod-console's `sys::become_subreaper`), so
//! orphans of a console are re-parented to it and reaped by its reaper; a run outside the
//! server (the stop gate's fallback runner, an agent CLI) leaves its orphans to init, which
//! reaps them.
//!
//! When the host itself must end at once (a second Ctrl-C), [`end_at_once`] ends everything
//! it started without a grace period: its descendants (frozen first, so none forks away),
//! the runs it [`track`]s, and the trees of the shared servers it names.
//!
//! Why not a cgroup: the machines this runs on (developer containers, CI) mostly offer no
//! writable cgroup v2 hierarchy to an unprivileged process, and the marker scan works on any
//! Linux with `/proc`. The one process it cannot find is one that both cleared its
//! environment and lost its parent before the kill (documented in docs/guide/state.md).

mod abrupt;

pub use abrupt::{Tracked, end_at_once, track};

use std::collections::{HashMap, HashSet};
use std::fs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The environment variable that tags every process of one run.
pub const RUN_MARKER_ENV: &str = "CP_RUN_MARKER";

/// The environment variable (set to `1`) of a shared server that outlives the run that
/// started it: [`kill_tree`] spares it and its descendants.
pub const SHARED_ENV: &str = "CP_SHARED_SERVER";

/// After SIGKILL, how long to keep re-scanning for survivors before giving up.
const AFTER_KILL: Duration = Duration::from_secs(5);
/// Pause between scans.
const POLL: Duration = Duration::from_millis(10);

/// A marker no other run on this machine uses (pid, clock and a counter).
pub fn new_marker() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// What ending a run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeEnd {
    /// Nothing of the run was running (any more).
    Gone,
    /// Some process still ran after SIGKILL and the wait (e.g. stuck in the kernel).
    Survivors(usize),
}

/// Ends every live process of the run: the process group `pgid` (ignored when ≤ 1), every
/// process whose environment holds `RUN_MARKER_ENV=marker`, and their descendants.
///
/// SIGTERM first, up to `grace` for them to exit, then SIGKILL until none is left (up to
/// a few seconds). Zombies count as gone: their parent (the console server's reaper, or
/// init) reaps them.
pub fn kill_tree(pgid: i32, marker: &str, grace: Duration) -> TreeEnd {
    let first = run_processes(pgid, marker);
    if first.is_empty() {
        return TreeEnd::Gone;
    }
    signal_all(&first, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    loop {
        let left = run_processes(pgid, marker);
        if left.is_empty() {
            return TreeEnd::Gone;
        }
        if Instant::now() >= deadline {
            break;
        }
        // Processes born since the TERM get it too.
        signal_all(&left, libc::SIGTERM);
        std::thread::sleep(POLL);
    }
    let deadline = Instant::now() + AFTER_KILL;
    loop {
        let left = run_processes(pgid, marker);
        if left.is_empty() {
            return TreeEnd::Gone;
        }
        signal_all(&left, libc::SIGKILL);
        if Instant::now() >= deadline {
            return TreeEnd::Survivors(left.len());
        }
        std::thread::sleep(POLL);
    }
}

/// Whether `pid` is a live process (a zombie, waiting to be reaped, is not).
pub fn is_alive(pid: i32) -> bool {
    stat(pid).is_some_and(|s| !s.zombie)
}

/// The live (not zombie) processes of the run: its group, its marked processes and their
/// descendants, except a shared server ([`SHARED_ENV`]) and what it started. Never this
/// process nor init.
pub fn run_processes(group: i32, marker: &str) -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let needle = format!("{RUN_MARKER_ENV}={marker}");
    let shared_needle = format!("{SHARED_ENV}=1");
    let mut procs: Vec<ProcInfo> = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 1 || pid == me {
            continue;
        }
        if let Some(info) = proc_info(pid, &needle, &shared_needle) {
            procs.push(info);
        }
    }
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in &procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found: HashSet<i32> = HashSet::new();
    let mut stack: Vec<i32> = procs
        .iter()
        .filter(|p| !p.shared && (p.marked || (group > 1 && p.pgrp == group)))
        .map(|p| p.pid)
        .collect();
    let spared: HashSet<i32> = procs.iter().filter(|p| p.shared).map(|p| p.pid).collect();
    while let Some(pid) = stack.pop() {
        if found.insert(pid)
            && let Some(kids) = children.get(&pid)
        {
            stack.extend(kids.iter().filter(|kid| !spared.contains(kid)));
        }
    }
    let live: HashSet<i32> = procs.iter().filter(|p| !p.zombie).map(|p| p.pid).collect();
    let mut out: Vec<i32> = found.into_iter().filter(|p| live.contains(p)).collect();
    out.sort_unstable();
    out
}

struct ProcInfo {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    zombie: bool,
    marked: bool,
    /// A shared server ([`SHARED_ENV`]).
    shared: bool,
}

/// Parent, group, state and markers of `pid` (`needle` is the run's marker, `shared` the
/// shared server's); `None` when it vanished meanwhile.
fn proc_info(pid: i32, needle: &str, shared: &str) -> Option<ProcInfo> {
    let Stat {
        parent,
        pgrp,
        zombie,
    } = stat(pid)?;
    // Unreadable environ (another user's process, or gone): not ours to match.
    let environ = if zombie {
        Vec::new()
    } else {
        fs::read(format!("/proc/{pid}/environ")).unwrap_or_default()
    };
    let has = |var: &str| environ.split(|&b| b == 0).any(|v| v == var.as_bytes());
    Some(ProcInfo {
        pid,
        ppid: parent,
        pgrp,
        zombie,
        marked: has(needle),
        shared: has(shared),
    })
}

/// The fields of `/proc/<pid>/stat` this module needs.
struct Stat {
    parent: i32,
    pgrp: i32,
    /// A zombie (or dead) process: gone but for its parent's wait.
    zombie: bool,
}

/// `pid`'s parent, group and whether it is a zombie; `None` when it vanished meanwhile.
fn stat(pid: i32) -> Option<Stat> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so split after
    // the last ')'.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat {
        parent,
        pgrp,
        zombie: state == "Z" || state == "X",
    })
}

/// Every pid in `/proc`.
fn all_pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// Sends `signal` to each of `pids`; one already gone is not an error. Pids that would
/// address more than one process (`≤ 1`) are skipped.
fn signal_all(pids: &[i32], signal: i32) {
    for &pid in pids.iter().filter(|&&pid| pid > 1) {
        // SAFETY: `kill` has no memory-safety preconditions; a positive pid names one process.
        let _ = unsafe { libc::kill(pid, signal) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_unique() {
        assert_ne!(new_marker(), new_marker());
    }

    #[test]
    fn a_marker_nobody_carries_finds_nothing() {
        assert_eq!(run_processes(0, &new_marker()), Vec::<i32>::new());
        assert_eq!(kill_tree(0, &new_marker(), Duration::ZERO), TreeEnd::Gone);
    }

    #[test]
    fn a_shared_server_the_run_started_is_spared() {
        let marker = new_marker();
        let mut run = std::process::Command::new("sh")
            .args(["-c", &format!("{SHARED_ENV}=1 sleep 300 & sleep 300")])
            .env(RUN_MARKER_ENV, &marker)
            .spawn()
            .unwrap();
        let run_pid = i32::try_from(run.id()).unwrap();
        let shared = format!("{SHARED_ENV}=1");
        let server = cp_e2e::eventually_some("the shared server", Duration::from_secs(30), || {
            let found: Vec<i32> = fs::read_dir("/proc")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&pid| {
                    proc_info(pid, "-", &shared).is_some_and(|p| p.shared && p.ppid == run_pid)
                })
                .collect();
            match found[..] {
                [server] => Some(server),
                _ => None,
            }
        });
        assert!(!run_processes(0, &marker).contains(&server));
        assert_eq!(kill_tree(0, &marker, Duration::ZERO), TreeEnd::Gone);
        run.wait().unwrap();
        let alive = proc_info(server, "-", &shared).is_some_and(|p| !p.zombie);
        signal_all(&[server], libc::SIGKILL);
        assert!(alive, "the shared server was killed with the run");
    }
}
