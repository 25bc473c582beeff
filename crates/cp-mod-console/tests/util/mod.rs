//! Shared helpers for the console integration tests: a temp project with its own server,
//! and process-group inspection through /proc.

#![allow(dead_code, reason = "each test file uses a different subset")]

use std::path::{Path, PathBuf};

use cp_mod_console::{ClientConfig, ConsoleClient, ConsoleHandle, SpawnSpec};

/// The test build of the server binary.
pub const SERVER_EXE: &str = env!("CARGO_BIN_EXE_cp-console-server");

/// A temporary project with a client whose server is this crate's test binary. Dropping it
/// shuts the server down.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub client: ConsoleClient,
}

pub fn config(root: &Path) -> ClientConfig {
    let mut cfg = ClientConfig::new(root);
    cfg.server_exe = Some(PathBuf::from(SERVER_EXE));
    cfg.server_env
        .insert("CP_CONSOLE_IDLE_TIMEOUT_MS".into(), "20000".into());
    cfg.server_env
        .insert("CP_CONSOLE_KILL_GRACE_MS".into(), "500".into());
    cfg
}

impl Project {
    pub fn new() -> Self {
        Self::with_config(|_| {})
    }

    pub fn with_config(tweak: impl FnOnce(&mut ClientConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut cfg = config(&root);
        tweak(&mut cfg);
        let client = ConsoleClient::new(cfg).unwrap();
        Self { dir, root, client }
    }

    /// A second, independent client of the same project.
    pub fn new_client(&self) -> ConsoleClient {
        ConsoleClient::new(config(&self.root)).unwrap()
    }

    pub fn spawn(&self, command: &str) -> ConsoleHandle {
        self.client
            .spawn(SpawnSpec::new(command, &self.root))
            .unwrap()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self.client.shutdown_server();
    }
}

/// Pids (with their state letter) of every process whose process group is `pgid`, zombies
/// included.
pub fn group_members(pgid: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(member) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name is in parentheses and may hold spaces: parse after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields.first().and_then(|s| s.chars().next()).unwrap_or('?');
        let pgrp: u32 = fields.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
        if pgrp == pgid {
            out.push((member, state));
        }
    }
    out
}

/// Checks that a console which says it ended left nothing of its process group: no live
/// member now (the kill, or the end, is complete once the status says so), and no zombie a
/// moment later. The server's reaper reaps the group's orphans, one after another, and may
/// report the console's end before it reaches the last of them.
pub fn assert_group_ended(pgid: u32) {
    let live: Vec<(u32, char)> = group_members(pgid)
        .into_iter()
        .filter(|(_, state)| *state != 'Z')
        .collect();
    assert_eq!(live, vec![], "processes of the group still run");
    cp_e2e::eventually_with(
        "the group's zombies to be reaped by the console server",
        std::time::Duration::from_secs(10),
        || group_members(pgid).is_empty(),
        || format!("left: {:?}", group_members(pgid)),
    );
}

/// Whether a process with this pid exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// A kilobyte figure from /proc/<pid>/status (`VmRSS`, `VmHWM`).
pub fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A daemon a test command starts with `setsid` (so it leaves the session's process group),
/// found by a unique argument in its command line. Dropping it kills whatever is left, so a
/// failing test leaves no process behind.
pub struct Stray {
    /// Unique to this test: `sleep 200.<tag>` is the daemon, `sleep 300.<tag>` the foreground.
    pub tag: String,
}

impl Stray {
    pub fn new() -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let tag = format!(
            "{}{}{:09}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            nanos
        );
        Self { tag }
    }

    /// Starts the daemon in a new session from a subshell that exits at once (a double
    /// fork: the daemon is orphaned, out of the group and with no parent in the session),
    /// then sleeps in the foreground.
    pub fn script(&self) -> String {
        format!(
            "(setsid bash -c 'sleep 200.{t}' &); sleep 300.{t}",
            t = self.tag
        )
    }

    /// Live (non-zombie) processes whose command line carries the tag.
    pub fn pids(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            if String::from_utf8_lossy(&cmdline).contains(&self.tag) && process_alive(pid) {
                out.push(pid);
            }
        }
        out
    }

    /// Whether the daemon (`sleep 200.<tag>`) runs.
    pub fn daemon_running(&self) -> bool {
        let want = format!("sleep\0200.{}\0", self.tag);
        self.pids().into_iter().any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
        })
    }
}

impl Drop for Stray {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    }
}
