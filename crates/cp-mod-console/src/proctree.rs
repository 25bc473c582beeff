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
//! The console server is a child subreaper (see `sys::become_subreaper`), so orphans of a
//! console are re-parented to it and reaped by its reaper; a run outside the server (the stop
//! checkpoint's fallback runner) leaves its orphans to init, which reaps them.
//!
//! Why not a cgroup: the machines this runs on (developer containers, CI) mostly offer no
//! writable cgroup v2 hierarchy to an unprivileged process, and the marker scan works on any
//! Linux with `/proc`. The one process it cannot find is one that both cleared its
//! environment and lost its parent before the kill (documented in the README).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The environment variable that tags every process of one run.
pub const RUN_MARKER_ENV: &str = "CP_RUN_MARKER";

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

/// The live (not zombie) processes of the run: its group, its marked processes and their
/// descendants. Never this process nor init.
pub fn run_processes(group: i32, marker: &str) -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let needle = format!("{RUN_MARKER_ENV}={marker}");
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
        if let Some(info) = proc_info(pid, &needle) {
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
        .filter(|p| p.marked || (group > 1 && p.pgrp == group))
        .map(|p| p.pid)
        .collect();
    while let Some(pid) = stack.pop() {
        if found.insert(pid)
            && let Some(kids) = children.get(&pid)
        {
            stack.extend(kids);
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
}

/// Parent, group, state and marker of `pid`; `None` when it vanished meanwhile.
fn proc_info(pid: i32, needle: &str) -> Option<ProcInfo> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so split after
    // the last ')'.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let zombie = state == "Z" || state == "X";
    // Unreadable environ (another user's process, or gone): not ours to match.
    let marked = !zombie
        && fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == needle.as_bytes()));
    Some(ProcInfo {
        pid,
        ppid: parent,
        pgrp,
        zombie,
        marked,
    })
}

fn signal_all(pids: &[i32], signal: i32) {
    for &pid in pids {
        crate::sys::signal_process(pid, signal);
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
}
