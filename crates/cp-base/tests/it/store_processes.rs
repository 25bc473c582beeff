//! The store under real processes: writers killed mid-write, and concurrent writers.
//!
//! The test binary re-runs itself as the writer process (selected by an environment variable),
//! so the writer is real code in a real, separately killed process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cp_base::ConfigFile;
use serde::{Deserialize, Serialize};

const CHILD_ENV: &str = "CP_BASE_TEST_WRITER";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Counter {
    n: u64,
    /// Padding so each write takes long enough to be interrupted sometimes.
    blob: Vec<String>,
}

/// Writer mode: increment the counter `count` times (forever if 0), printing each acknowledged n.
#[test]
#[ignore = "helper process, started by name by the store tests"]
fn writer_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (path, count) = spec.split_once('|').unwrap();
    let count: u64 = count.parse().unwrap();
    let cfg = ConfigFile::new(path);
    let mut i = 0;
    while count == 0 || i < count {
        let n = cfg
            .update_section("counter", |c: &mut Counter| {
                c.n += 1;
                c.blob = vec!["x".repeat(64); 200];
                Ok::<_, ()>(c.n)
            })
            .unwrap()
            .unwrap();
        println!("ack {n}");
        i += 1;
    }
}

fn spawn_writer(path: &Path, count: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store_processes::writer_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{}|{count}", path.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn read_n(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("file does not parse after a kill: {e}\n{text}"));
    value["counter"]["n"].as_u64().unwrap()
}

#[test]
fn a_writer_killed_mid_write_always_leaves_a_file_that_parses() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.json");
    let mut last_ack = 0;
    for round in 0..40u64 {
        let mut child = spawn_writer(&path, 0);
        // Vary the kill point across rounds: somewhere in the middle of a stream of writes.
        std::thread::sleep(Duration::from_millis(20 + (round * 7) % 40));
        child.kill().unwrap(); // SIGKILL
        let out = child.wait_with_output().unwrap();
        let acked = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("ack ")?.parse::<u64>().ok())
            .max()
            .unwrap_or(last_ack);
        if path.exists() {
            let n = read_n(&path);
            // Every acknowledged write is on disk; at most the one in flight is extra.
            assert!(
                n >= acked,
                "round {round}: file has {n}, writer acknowledged {acked}"
            );
            last_ack = n;
        }
    }
    // The next locked update sweeps what killed writers left behind.
    ConfigFile::new(&path)
        .update_section("counter", |c: &mut Counter| {
            c.n += 1;
            Ok::<_, ()>(())
        })
        .unwrap()
        .unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn two_concurrent_writers_lose_no_update() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config.json");
    let started = Instant::now();
    let a = spawn_writer(&path, 150);
    let b = spawn_writer(&path, 150);
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
    }
    assert_eq!(
        read_n(&path),
        300,
        "lost updates after {:?}",
        started.elapsed()
    );
}
