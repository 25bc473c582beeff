//! Figures that go through the console server: the callback overhead, PTY throughput and the
//! server's memory with 50 sessions, each beside its baseline measured in the same run.

use std::io::Read as _;
use std::process::Command;
use std::time::{Duration, Instant};

use cp_base::{
    BatchChanges, CallChanges, ChangeKind, FileChange, Module, Notifier, Project, ToolEnv, WorkerId,
};
use cp_mod_callback::CallbackModule;
use cp_mod_console::{ClientConfig, ConsoleClient, ConsoleStatus, SpawnSpec};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;

use super::Options;
use super::stats::{Row, fmt, ms};

/// A temp project with a console server run by the `context-pilot` binary.
pub struct ConsoleProject {
    _dir: tempfile::TempDir,
    pub root: std::path::PathBuf,
    pub config: ClientConfig,
    pub client: ConsoleClient,
}

impl ConsoleProject {
    pub fn new(opts: &Options) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut config = ClientConfig::new(&root);
        config.server_exe = Some(opts.exe.clone());
        let client = ConsoleClient::new(config.clone()).unwrap();
        // Start the server outside every measurement.
        client
            .spawn(SpawnSpec::new("true", &root))
            .unwrap()
            .wait_exit(Duration::from_secs(30))
            .unwrap();
        Self {
            _dir: dir,
            root,
            config,
            client,
        }
    }
}

impl Drop for ConsoleProject {
    fn drop(&mut self) {
        let _ = self.client.shutdown_server();
    }
}

/// A blocking callback running `true` (through `on_batch`, the console server, the wait and
/// the report) against a bare `bash -c true`.
pub fn callback_overhead(opts: &Options, console: &ConsoleProject) -> Vec<Row> {
    let rounds = if opts.quick { 3 } else { 30 };
    // Trust is recorded in a temp store, never in the user's ~/.config.
    let trust = tempfile::tempdir().unwrap();
    let project = Project::at(&console.root)
        .with_trust_store(cp_base::TrustStore::at(trust.path().join("trust.json")));
    let env = ToolEnv::new(project.clone(), WorkerId::default(), Notifier::new());
    let mut module =
        CallbackModule::with_console(project, WorkerId::default(), console.config.clone());
    let created = module
        .call_tool(
            "Callback_upsert",
            &json!({"action": "create", "name": "noop", "pattern": "*.rs",
                    "script_content": "true", "blocking": true, "timeout": 60}),
            &env,
        )
        .finish();
    assert!(!created.is_error, "{}", created.text);
    std::fs::write(console.root.join("a.rs"), "").unwrap();
    let batch = BatchChanges {
        calls: vec![CallChanges {
            call_index: 0,
            tool: "File_edit".into(),
            label: "File_edit a.rs".into(),
            changes: vec![FileChange::new("a.rs", ChangeKind::Modified)],
        }],
    };
    let fire = |module: &mut CallbackModule| {
        let hold = module.on_batch(&batch, &env).hold.unwrap();
        let notes = hold();
        assert!(notes[0].text.contains("passed"), "{}", notes[0].text);
    };
    for _ in 0..2 {
        fire(&mut module); // warm-up
    }
    let (mut bare, mut callback) = (Vec::new(), Vec::new());
    // Interleaved, so load on the machine hits both alike.
    for _ in 0..rounds {
        let t = Instant::now();
        assert!(
            Command::new("bash")
                .args(["-c", "true"])
                .status()
                .unwrap()
                .success()
        );
        bare.push(ms(t.elapsed()));
        let t = Instant::now();
        fire(&mut module);
        callback.push(ms(t.elapsed()));
    }
    let bare = Row::new("baseline: bare `bash -c true`", "ms", bare);
    let callback = Row::new(
        "callback overhead: blocking no-op (cp-mod-callback + console server)",
        "ms",
        callback,
    );
    let overhead = callback.median() - bare.median();
    let ratio = callback.median() / bare.median();
    vec![
        callback.note(format!(
            "{} ms above the baseline, {}× it (medians); the goal is at most 1 ms and 1.5×",
            fmt(overhead),
            fmt(ratio)
        )),
        bare,
    ]
}

/// `seq 1 LINES` through the server (PTY, bounded log, tail) and through a PTY read
/// directly. The rate counts every byte that went through: the log keeps only its head and
/// tail, so its size says nothing about the throughput; instead the log is checked against
/// the exact stream (`seq`'s lines with the PTY's `\r\n`), head and tail byte for byte, and the
/// server's own count of the bytes it dropped between them must make up the rest.
pub fn pty_throughput(opts: &Options, console: &ConsoleProject) -> Vec<Row> {
    let (lines, rounds) = if opts.quick {
        (200_000, 1)
    } else {
        (5_000_000, 3)
    };
    let expected = seq_through_pty(lines);
    let (mut server, mut direct) = (Vec::new(), Vec::new());
    let mut kept = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let s = console
            .client
            .spawn(SpawnSpec::new(format!("seq 1 {lines}"), &console.root))
            .unwrap();
        let done = s.wait_exit(Duration::from_secs(600)).unwrap();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(done.info.status, ConsoleStatus::Exited { code: 0 });
        let log = std::fs::read(s.log_path()).unwrap();
        assert_log_is_the_stream(&log, &expected);
        kept = log.len();
        server.push(expected.len() as f64 / 1e6 / secs);
        let (rate, read) = direct_pty(lines);
        assert_eq!(
            read,
            expected.len() as u64,
            "the direct reader got every byte"
        );
        direct.push(rate);
    }
    let mb = expected.len() as f64 / 1e6;
    let server = Row::new("PTY throughput through the console server", "MB/s", server);
    let direct = Row::new("baseline: minimal direct PTY reader", "MB/s", direct);
    let ratio = server.median() / direct.median() * 100.0;
    vec![
        server.note(format!(
            "`seq 1 {lines}`: {mb:.1} MB went through (the bounded log kept {:.1} MB, checked byte for byte against the stream); {ratio:.0} % of the baseline",
            kept as f64 / 1e6
        )),
        direct,
    ]
}

/// What `seq 1 lines` writes through a PTY: each `\n` becomes `\r\n`.
fn seq_through_pty(lines: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 1..=lines {
        out.extend_from_slice(i.to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// The log is the stream, or its head, the server's note of how many bytes it dropped, and
/// its tail, with head + dropped + tail = the whole stream.
fn assert_log_is_the_stream(log: &[u8], expected: &[u8]) {
    if log == expected {
        return;
    }
    let marker = b"\r\n[context-pilot: ";
    let at = log
        .windows(marker.len())
        .position(|w| w == marker)
        .expect("a log shorter than the stream has the dropped-bytes note");
    let rest = &log[at + marker.len()..];
    let end = rest.windows(3).position(|w| w == b"]\r\n").unwrap();
    let note = std::str::from_utf8(&rest[..end]).unwrap();
    let dropped: usize = note.split(' ').next().unwrap().parse().unwrap();
    let (head, tail) = (&log[..at], &rest[end + 3..]);
    assert_eq!(head, &expected[..head.len()], "the log's head");
    assert_eq!(
        tail,
        &expected[expected.len() - tail.len()..],
        "the log's tail"
    );
    assert_eq!(
        head.len() + dropped + tail.len(),
        expected.len(),
        "head + dropped + tail is the whole stream"
    );
}

/// Reads `seq 1 lines` from a PTY directly; returns the rate in MB/s and the bytes read.
fn direct_pty(lines: u64) -> (f64, u64) {
    let start = Instant::now();
    let pair = native_pty_system().openpty(PtySize::default()).unwrap();
    let mut cmd = CommandBuilder::new("bash");
    cmd.args(["-c", &format!("seq 1 {lines}")]);
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

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb / 1024.0
}

/// The server's resident memory with 50 live sessions, each printing a line every 50 ms,
/// sampled while they run; the idle server is the reference.
pub fn server_rss(opts: &Options, console: &ConsoleProject) -> Vec<Row> {
    let sessions = 50;
    let samples = if opts.quick { 3 } else { 20 };
    let pid = console.client.server_pid().unwrap();
    let idle: Vec<f64> = (0..3)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            rss_mib(pid)
        })
        .collect();
    let handles: Vec<_> = (0..sessions)
        .map(|i| {
            console
                .client
                .spawn(SpawnSpec::new(
                    format!("while :; do echo session {i} $RANDOM; sleep 0.05; done"),
                    &console.root,
                ))
                .unwrap()
        })
        .collect();
    for h in &handles {
        assert!(
            h.wait_pattern("session", Duration::from_secs(30))
                .unwrap()
                .met
        );
    }
    let busy: Vec<f64> = (0..samples)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            rss_mib(pid)
        })
        .collect();
    for h in &handles {
        let _ = h.kill();
    }
    let idle = Row::new("baseline: console server RSS, idle", "MiB", idle);
    let busy = Row::new(
        format!("console server RSS with {sessions} sessions"),
        "MiB",
        busy,
    );
    let per = (busy.median() - idle.median()) / f64::from(sessions);
    vec![
        busy.note(format!(
            "each printing a line every 50 ms; {per:.2} MiB per session above idle"
        )),
        idle,
    ]
}
