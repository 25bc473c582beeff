//! Ending at once everything this process started, for a host that must exit now (a second
//! Ctrl-C): no grace period, and nothing orphaned.
//!
//! The processes are found by parent links from the roots the caller names (this process
//! itself, whose descendants end, and e.g. the console servers of a workflow's worktrees,
//! which an agent's MCP server may have started), and by the group and marker of every run that is [`track`]ed (an agent CLI,
//! with whatever left its group with `setsid`). They are stopped (SIGSTOP) first, scan after
//! scan until no new one appears, so none can fork a child the kill would miss, and none is
//! re-parented away from the tree while its parent dies; then each gets SIGKILL.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::{AFTER_KILL, POLL, TreeEnd, all_pids, run_processes, signal_all, stat};

/// The runs [`track`]ed now: `(id, group, marker)`.
static TRACKED: Mutex<Vec<(u64, i32, String)>> = Mutex::new(Vec::new());

/// A run of this process (an agent CLI's group and marker) that [`end_at_once`] ends too,
/// until this is dropped.
#[derive(Debug)]
pub struct Tracked {
    id: u64,
}

/// Tracks the run in process group `pgid` whose processes carry `marker`
/// ([`RUN_MARKER_ENV`](super::RUN_MARKER_ENV)), until the returned guard is dropped.
pub fn track(pgid: i32, marker: &str) -> Tracked {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    TRACKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((id, pgid, marker.to_owned()));
    Tracked { id }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        TRACKED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, ..)| *id != self.id);
    }
}

/// Ends at once `roots` with their descendants (a root that is this process: its
/// descendants), every tracked run, and every process carrying one of `markers` (e.g. the
/// consoles of a console server, which may have lost their parent already) with its
/// descendants. No grace period: they are frozen (SIGSTOP) until a scan
/// finds nothing new, then killed (SIGKILL), and scanned again until none is left (up to a
/// few seconds). This process is spared; zombies count as gone.
pub fn end_at_once(roots: &[i32], markers: &[String]) -> TreeEnd {
    let deadline = Instant::now() + AFTER_KILL;
    let mut frozen: HashSet<i32> = HashSet::new();
    loop {
        let new: Vec<i32> = everything(roots, markers)
            .into_iter()
            .filter(|pid| !frozen.contains(pid))
            .collect();
        if new.is_empty() || Instant::now() >= deadline {
            break;
        }
        signal_all(&new, libc::SIGSTOP);
        frozen.extend(new);
    }
    let frozen: Vec<i32> = frozen.into_iter().collect();
    signal_all(&frozen, libc::SIGKILL);
    loop {
        // A killed process may take a moment to die, and meanwhile, its parent dead, belong
        // to init: the frozen ones are checked by pid until they are gone.
        let mut left = everything(roots, markers);
        left.extend(
            frozen
                .iter()
                .filter(|&&pid| stat(pid).is_some_and(|s| !s.zombie)),
        );
        left.sort_unstable();
        left.dedup();
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

/// The live processes [`end_at_once`] ends, sorted; never this process nor init.
fn everything(roots: &[i32], markers: &[String]) -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut live: HashSet<i32> = HashSet::new();
    for pid in all_pids() {
        if let Some(stat) = stat(pid) {
            children.entry(stat.parent).or_default().push(pid);
            if !stat.zombie {
                live.insert(pid);
            }
        }
    }
    let mut stack: Vec<i32> = Vec::new();
    for &root in roots {
        if root == me {
            stack.extend(children.get(&me).into_iter().flatten());
        } else {
            stack.push(root);
        }
    }
    let tracked = TRACKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for (_, pgid, marker) in &tracked {
        stack.extend(run_processes(*pgid, marker));
    }
    for marker in markers {
        stack.extend(run_processes(0, marker));
    }
    let mut found: HashSet<i32> = HashSet::new();
    while let Some(pid) = stack.pop() {
        if pid > 1 && pid != me && found.insert(pid) {
            stack.extend(children.get(&pid).into_iter().flatten());
        }
    }
    let mut out: Vec<i32> = found.into_iter().filter(|p| live.contains(p)).collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::*;

    fn alive(pid: i32) -> bool {
        super::super::is_alive(pid)
    }

    fn wait_for_pid(path: &std::path::Path) -> i32 {
        cp_e2e::eventually_some(&path.display().to_string(), Duration::from_secs(60), || {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.trim().parse().ok())
        })
    }

    /// A process that ignores SIGTERM, its child, and a grandchild in a session of its own:
    /// all end at once. (Not this test process's descendants: other tests run beside it.)
    #[test]
    fn a_root_its_descendants_and_setsid_ones_end_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = dir.path().join("daemon.pid");
        let mut root = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "trap '' TERM; setsid sh -c 'echo $$ > {}; exec sleep 300' & sleep 300; wait",
                    daemon.display()
                ),
            ])
            .spawn()
            .unwrap();
        let daemon = wait_for_pid(&daemon);
        let root_pid = i32::try_from(root.id()).unwrap();
        assert_eq!(end_at_once(&[root_pid], &[]), TreeEnd::Gone);
        root.wait().unwrap();
        assert!(!alive(daemon), "the setsid grandchild survived");
    }

    /// Starts a process in a session of its own whose parent exits at once, so only `marker`
    /// (in its environment) links it to a run; returns its pid.
    fn orphan_with_marker(marker: &str) -> i32 {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("orphan.pid");
        let mut parent = Command::new("sh")
            .args([
                "-c",
                &format!(
                    "setsid sh -c 'echo $$ > {}; exec sleep 300' &",
                    pidfile.display()
                ),
            ])
            .env(super::super::RUN_MARKER_ENV, marker)
            .spawn()
            .unwrap();
        parent.wait().unwrap();
        wait_for_pid(&pidfile)
    }

    #[test]
    fn a_tracked_run_that_left_this_process_ends_too() {
        let marker = super::super::new_marker();
        let orphan = orphan_with_marker(&marker);
        let tracked = track(0, &marker);
        assert_eq!(end_at_once(&[], &[]), TreeEnd::Gone);
        assert!(!alive(orphan));
        drop(tracked);
        assert!(TRACKED.lock().unwrap().iter().all(|(_, _, m)| *m != marker));
    }

    #[test]
    fn a_process_carrying_a_named_marker_ends_too() {
        let marker = super::super::new_marker();
        let orphan = orphan_with_marker(&marker);
        assert_eq!(
            end_at_once(&[], std::slice::from_ref(&marker)),
            TreeEnd::Gone
        );
        assert!(!alive(orphan));
    }
}
