//! Console benchmarks (`cargo bench -p cp-mod-console --bench consoles`), printed as a
//! markdown table:
//! - spawn → first output byte through the console server, against bare `bash -c` via
//!   `std::process`;
//! - PTY throughput through the server (200 MB, logged byte-exact) against a minimal direct
//!   PTY reader in this process;
//! - console server memory with 50 sessions printing at once.
//!
//! `CP_BENCH_QUICK=1` runs fewer, smaller rounds.

#![allow(
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    reason = "a benchmark fails loudly; its figures are approximate by nature"
)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cp_mod_console::{ClientConfig, ConsoleClient, ConsoleStatus, SpawnSpec};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const SERVER_EXE: &str = env!("CARGO_BIN_EXE_cp-console-server");

fn quick() -> bool {
    std::env::var_os("CP_BENCH_QUICK").is_some()
}

fn client(root: &Path) -> ConsoleClient {
    let mut cfg = ClientConfig::new(root);
    cfg.server_exe = Some(PathBuf::from(SERVER_EXE));
    ConsoleClient::new(cfg).unwrap()
}

struct Row {
    name: String,
    unit: &'static str,
    samples: Vec<f64>,
}

impl Row {
    fn print(&self) {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        let median = s[s.len() / 2];
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {} | {} |",
            self.name,
            median,
            s[0],
            s[s.len() - 1],
            self.unit,
            s.len()
        );
    }
}

fn first_byte_bare() -> f64 {
    let start = Instant::now();
    let mut child = Command::new("bash")
        .args(["-c", "echo x"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut byte = [0u8; 1];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut byte)
        .unwrap();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    child.wait().unwrap();
    ms
}

fn first_byte_server(client: &ConsoleClient, root: &Path) -> f64 {
    let start = Instant::now();
    let s = client.spawn(SpawnSpec::new("echo x", root)).unwrap();
    assert!(s.wait_pattern("x", Duration::from_secs(30)).unwrap().met);
    start.elapsed().as_secs_f64() * 1000.0
}

/// `seq 1 n` through the server; returns MB/s and checks the log length.
fn throughput_server(client: &ConsoleClient, root: &Path, n: u64) -> (f64, u64) {
    let start = Instant::now();
    let s = client
        .spawn(SpawnSpec::new(format!("seq 1 {n}"), root))
        .unwrap();
    let done = s.wait_exit(Duration::from_secs(600)).unwrap();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(done.info.status, ConsoleStatus::Exited { code: 0 });
    let log_len = std::fs::metadata(s.log_path()).unwrap().len();
    assert_eq!(log_len, done.info.output_len);
    (log_len as f64 / 1e6 / secs, log_len)
}

/// `seq 1 n` through a PTY read directly in this process.
fn throughput_direct(n: u64) -> (f64, u64) {
    let start = Instant::now();
    let pair = native_pty_system().openpty(PtySize::default()).unwrap();
    let mut cmd = CommandBuilder::new("bash");
    cmd.args(["-c", &format!("seq 1 {n}")]);
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    while let Ok(got) = reader.read(&mut buf) {
        if got == 0 {
            break;
        }
        total += got as u64;
    }
    child.wait().unwrap();
    (total as f64 / 1e6 / start.elapsed().as_secs_f64(), total)
}

fn rss_kb(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn main() {
    let rounds = if quick() { 5 } else { 30 };
    let bulk_lines: u64 = if quick() { 2_000_000 } else { 25_000_000 };
    let bulk_rounds = if quick() { 1 } else { 3 };
    let sessions = 50;

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let client = client(&root);
    // Start the server outside the measurements.
    client
        .spawn(SpawnSpec::new("true", &root))
        .unwrap()
        .wait_exit(Duration::from_secs(30))
        .unwrap();
    let server = client.server_pid().unwrap();
    let idle_rss = rss_kb(server, "VmRSS");

    let mut rows = vec![
        Row {
            name: "first byte: bare `bash -c` (std::process)".into(),
            unit: "ms",
            samples: (0..rounds).map(|_| first_byte_bare()).collect(),
        },
        Row {
            name: "first byte: console server spawn → output seen".into(),
            unit: "ms",
            samples: (0..rounds)
                .map(|_| first_byte_server(&client, &root))
                .collect(),
        },
    ];

    let mut size = 0;
    let mut server_rates = Vec::new();
    for _ in 0..bulk_rounds {
        let (rate, bytes) = throughput_server(&client, &root, bulk_lines);
        size = bytes;
        server_rates.push(rate);
    }
    let peak_after_bulk = rss_kb(server, "VmHWM");
    let direct_rates: Vec<f64> = (0..bulk_rounds)
        .map(|_| throughput_direct(bulk_lines).0)
        .collect();
    let mb = size as f64 / 1e6;
    rows.push(Row {
        name: format!("throughput: direct PTY reader, {mb:.0} MB"),
        unit: "MB/s",
        samples: direct_rates,
    });
    rows.push(Row {
        name: format!("throughput: through the server + log file, {mb:.0} MB"),
        unit: "MB/s",
        samples: server_rates,
    });

    // 50 sessions printing at once: sample the server's RSS while they run.
    let per_session = if quick() { 100_000 } else { 400_000 };
    let handles: Vec<_> = (0..sessions)
        .map(|_| {
            client
                .spawn(SpawnSpec::new(format!("seq 1 {per_session}"), &root))
                .unwrap()
        })
        .collect();
    let mut samples = Vec::new();
    while handles.iter().any(|h| h.status().unwrap().is_running()) {
        samples.push(rss_kb(server, "VmRSS") / 1024.0);
        std::thread::sleep(Duration::from_millis(20));
    }
    samples.push(rss_kb(server, "VmRSS") / 1024.0);
    rows.push(Row {
        name: format!("server RSS, {sessions} sessions printing at once"),
        unit: "MiB",
        samples,
    });

    println!("| benchmark | median | min | max | unit | samples |");
    println!("|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    println!();
    println!(
        "server RSS idle: {:.1} MiB; peak after {bulk_rounds} × {mb:.0} MB through one PTY: {:.1} MiB",
        idle_rss / 1024.0,
        peak_after_bulk / 1024.0
    );
    client.shutdown_server().unwrap();
}
