//! Warm runs of the stop gate's tests (issue 38): how long a stop makes the agent wait for its
//! verdict, as a share of the suite's own time measured in the same round, and what a warm
//! run costs the agent's own work.
//!
//! The project is a git repository whose suite keeps both cores busy for a fixed wall time
//! (two busy Python processes, as a parallel test runner would), with the real
//! `context-pilot` binary as console server and warm-run console. An edit asks for a warm run
//! as every front-end's batch hook does ([`WarmLauncher::request_for_batch`]); the stop is the
//! stop gate as the hooks and the agent loop run it ([`StopGate::for_project`]).
//!
//! Per round, each after a fresh edit of `calc.py`:
//! - the suite run by itself: the baseline;
//! - a stop without warm runs (as before issue 38);
//! - a stop one suite-time after the edit (the agent thought that long);
//! - a stop right after the edit;
//! - a CPU-bound "tool call" (a fixed Python loop) timed alone and while a warm run runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cp_base::{BatchChanges, CallChanges, ChangeKind, FileChange, Project, WorkerId};
use cp_mod_checkpoint::{
    ConsoleTestRunner, StopGate, StopGateConfig, StopOutcome, WarmLauncher, WarmPhase, WarmUse,
    cancel_warm_run, current_warm_run,
};
use cp_mod_console::{ClientConfig, ConsoleClient, SpawnSpec};
use cp_orchestrate::StopInput;
use serde_json::json;

use super::Options;
use super::common::{greet_project, time_with_stdin};
use super::stats::{Row, ms};

/// How long a warm run may take to reach a phase the bench waits for.
const PHASE_LIMIT: Duration = Duration::from_secs(120);

/// The project: repository, trust, console server, launcher.
struct Bench {
    _repo: tempfile::TempDir,
    _config_home: tempfile::TempDir,
    root: PathBuf,
    project: Project,
    client: ConsoleClient,
    launcher: WarmLauncher,
    edits: std::cell::Cell<u32>,
}

impl Bench {
    fn new(opts: &Options, suite_secs: f64, quiet_ms: u64) -> Self {
        let repo = cp_e2e::git_repo();
        let root = repo.path().canonicalize().unwrap();
        std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
        // Both cores busy for `suite_secs` of wall time (and while the ignored file `hold`
        // exists), then the verdict from calc.py.
        std::fs::write(
            root.join("busy.py"),
            format!(
                "import os, time\nend = time.time() + {suite_secs}\n\
                 while time.time() < end or os.path.exists('hold'):\n    pass\n"
            ),
        )
        .unwrap();
        std::fs::write(
            root.join("suite.sh"),
            "python3 busy.py & python3 busy.py; wait\n\
             if grep -q 'return a + b' calc.py; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED test_calc.py::test_add'; echo '1 failed'; exit 1\n",
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), "__pycache__/\nhold\n").unwrap();
        std::fs::create_dir_all(root.join(".context-pilot")).unwrap();
        std::fs::write(
            root.join(".context-pilot/config.json"),
            json!({"checkpoint": {
                "tests": {"command": "sh suite.sh", "include": ["*.py"]},
                "warm": {"quiet_ms": quiet_ms},
            }})
            .to_string(),
        )
        .unwrap();
        cp_e2e::git(&root, &["add", "-A"]);
        cp_e2e::git(&root, &["commit", "-qm", "init"]);
        // Trust in a store of the bench's own, for this process and the warm runs alike.
        let config_home = tempfile::tempdir().unwrap();
        let project = Project::at(&root).with_trust_store(cp_base::TrustStore::at(
            config_home.path().join("context-pilot/trust.json"),
        ));
        project.grant_trust().unwrap();
        let mut config = ClientConfig::new(&root);
        config.server_exe = Some(opts.exe.clone());
        let client = ConsoleClient::new(config).unwrap();
        // The server starts outside every measurement.
        client
            .spawn(SpawnSpec::new("true", &root))
            .unwrap()
            .wait_exit(Duration::from_secs(30))
            .unwrap();
        let launcher = WarmLauncher::new(&opts.exe)
            .with_env("XDG_CONFIG_HOME", config_home.path().display().to_string());
        Self {
            _repo: repo,
            _config_home: config_home,
            root,
            project,
            client,
            launcher,
            edits: std::cell::Cell::new(0),
        }
    }

    /// A green edit of `calc.py` (a new tree each time), and, with `warm`, the warm run it
    /// asks for, as the batch hook asks for it. Returns the worker that made it: a fresh one
    /// each time, so no stop gate memory of an earlier tree plays a part.
    fn edit(&self, warm: bool) -> WorkerId {
        let n = self.edits.get() + 1;
        self.edits.set(n);
        std::fs::write(
            self.root.join("calc.py"),
            format!("def add(a, b):\n    return a + b  # edit {n}\n"),
        )
        .unwrap();
        let worker = WorkerId::new(format!("bench{n}")).unwrap();
        if warm {
            let batch = BatchChanges {
                calls: vec![CallChanges {
                    call_index: 0,
                    tool: "Edit".into(),
                    label: "Edit calc.py".into(),
                    changes: vec![FileChange::new("calc.py", ChangeKind::Modified)],
                }],
            };
            self.launcher
                .request_for_batch(&self.project, &worker, &batch);
        }
        worker
    }

    /// The stop of `worker`, timed; its tests must have passed.
    fn stop(&self, gate: &StopGate, worker: WorkerId) -> (f64, StopOutcome) {
        let started = Instant::now();
        let outcome = gate.evaluate(&StopInput {
            project: self.project.clone(),
            worker,
            session: "bench".into(),
            gate_commits: false,
            base: None,
        });
        let took = ms(started.elapsed());
        let tests = outcome.report.tests.first();
        assert!(tests.is_some_and(|t| t.passed), "{outcome:?}");
        (took, outcome)
    }

    fn gate(&self, warm: bool) -> StopGate {
        let mut config = StopGateConfig::load(&self.project).unwrap();
        config.warm.enabled = warm;
        let runner = ConsoleTestRunner::for_project(&self.root).unwrap();
        StopGate::new(config).unwrap().with_runner(Arc::new(runner))
    }

    /// Waits until the warm run asked for at `since_ms` or later is in a phase `is`.
    fn wait_phase(&self, since_ms: u64, is: impl Fn(&WarmPhase) -> bool) {
        let phase = || {
            current_warm_run(&self.project)
                .filter(|r| r.requested_at_ms >= since_ms)
                .map(|r| r.phase)
        };
        cp_e2e::eventually_with(
            "the warm run's phase",
            PHASE_LIMIT,
            || phase().as_ref().is_some_and(&is),
            || {
                let record =
                    std::fs::read_to_string(cp_mod_checkpoint::warm_record_path(&self.project))
                        .unwrap_or_default();
                let consoles = self.client.list().unwrap_or_default();
                let tails: Vec<String> = consoles
                    .iter()
                    .filter_map(|c| self.client.attach(c.id).ok()?.tail(20).ok())
                    .collect();
                format!(
                    "warm run stuck: {:?}\nrecord: {record}\nconsoles: {consoles:?}\n{tails:#?}",
                    phase()
                )
            },
        );
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        cancel_warm_run(&self.project, "the bench ended");
        let _ = self.client.shutdown_server();
    }
}

/// The suite by itself, in the project, timed.
fn suite_alone(root: &Path) -> f64 {
    let started = Instant::now();
    let out = Command::new("sh")
        .arg("suite.sh")
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    ms(started.elapsed())
}

/// A CPU-bound tool call: a fixed amount of Python work, timed.
fn tool_call() -> f64 {
    let started = Instant::now();
    let out = Command::new("python3")
        .args(["-c", "s = 0\nfor i in range(6_000_000):\n    s += i * i\n"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    ms(started.elapsed())
}

#[expect(
    clippy::too_many_lines,
    reason = "one benchmark: its scenarios and rows read top to bottom"
)]
pub fn warm_runs(opts: &Options) -> Vec<Row> {
    // The quick suite's quiet time is long beside its suite, so that a stop right after an
    // edit always comes before the warm run begins, however busy the machine.
    let (suite_secs, rounds, quiet_ms) = if opts.quick {
        (0.3, 1, 1000)
    } else {
        (6.0, 5, 500)
    };
    let bench = Bench::new(opts, suite_secs, quiet_ms);
    let (cold, warm) = (bench.gate(false), bench.gate(true));
    let mut rows: [Vec<f64>; 13] = Default::default();
    let [
        suite,
        off,
        thought,
        right_after,
        r_off,
        r_thought,
        r_after,
        alone,
        beside,
        warm_start,
        warm_took,
        after_done,
        r_done,
    ] = &mut rows;
    let (mut waited, mut fresh) = (0, 0);
    for _ in 0..rounds {
        let base = suite_alone(&bench.root);

        let worker = bench.edit(false);
        let (t, outcome) = bench.stop(&cold, worker);
        assert_eq!(outcome.report.tests[0].warm, None);
        off.push(t);
        r_off.push(t / base);

        // The agent thinks one suite-time after its edit, then stops.
        let worker = bench.edit(true);
        std::thread::sleep(Duration::from_secs_f64(base / 1000.0));
        let (t, outcome) = bench.stop(&warm, worker);
        match &outcome.report.tests[0].warm {
            Some(WarmUse::Reused { .. }) => {}
            Some(WarmUse::Waited { .. }) => waited += 1,
            // The warm run had not begun (a suite shorter than its start): the stop ran it.
            _ => fresh += 1,
        }
        thought.push(t);
        r_thought.push(t / base);

        // The agent thinks until the warm run is done, then stops. The warm run's own times
        // come from here, where it always finishes (at nice 19 throughout).
        let since = cp_base::now_ms();
        let edited = Instant::now();
        let worker = bench.edit(true);
        bench.wait_phase(since, |p| matches!(p, WarmPhase::Done { .. }));
        if let Some(WarmPhase::Done { elapsed_ms, .. }) =
            current_warm_run(&bench.project).map(|r| r.phase)
        {
            warm_start.push(ms(edited.elapsed()) - elapsed_ms as f64);
            warm_took.push(elapsed_ms as f64);
        }
        let (t, outcome) = bench.stop(&warm, worker);
        assert!(
            matches!(outcome.report.tests[0].warm, Some(WarmUse::Reused { .. })),
            "{outcome:?}"
        );
        after_done.push(t);
        r_done.push(t / base);

        // The stop right after the edit: the warm run has not begun; it is ended and the
        // stop runs the suite itself.
        let worker = bench.edit(true);
        let (t, outcome) = bench.stop(&warm, worker);
        assert_eq!(outcome.report.tests[0].warm, None);
        right_after.push(t);
        r_after.push(t / base);

        // The agent's own CPU-bound work, alone and while a warm run tests. The warm run's
        // suite is held busy until the tool call is done, however short the suite.
        alone.push(tool_call());
        let hold = bench.root.join("hold");
        std::fs::write(&hold, "").unwrap();
        let since = cp_base::now_ms();
        let worker = bench.edit(true);
        bench.wait_phase(since, |p| matches!(p, WarmPhase::Running { .. }));
        beside.push(tool_call());
        assert!(
            matches!(
                current_warm_run(&bench.project).map(|r| r.phase),
                Some(WarmPhase::Running { .. })
            ),
            "the warm run ended before the tool call did: the figure means nothing"
        );
        std::fs::remove_file(&hold).unwrap();
        // Its stop settles it (it waits for its verdict).
        bench.stop(&warm, worker);
        suite.push(base);
    }
    let ratio = |samples: &[f64]| {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let slowdown: Vec<f64> = beside
        .iter()
        .zip(alone.iter())
        .map(|(b, a)| b / a)
        .collect();
    vec![
        Row::new(
            "baseline: the suite by itself (`sh suite.sh`)",
            "ms",
            suite.clone(),
        )
        .note(format!(
            "two busy Python processes for {suite_secs} s of wall time, then the verdict"
        )),
        Row::new("stop, warm runs off (as before issue 38)", "ms", off.clone()).note(format!(
            "{:.2}× the suite (median of per-round ratios)",
            ratio(r_off)
        )),
        Row::new(
            "stop one suite-time after the last edit, warm runs on",
            "ms",
            thought.clone(),
        )
        .note(format!(
            "{:.3}× the suite (median of per-round ratios; goal ≤ 0.1); quiet time {quiet_ms} ms; \
             of {rounds} stops, {waited} waited for the end of the warm run, {fresh} ran the suite \
             (the warm run had not begun), the others took its verdict at once",
            ratio(r_thought)
        )),
        Row::new("stop ÷ suite, one suite-time after the edit", "×", r_thought.clone())
            .note("goal ≤ 0.1 (1.0 before issue 38)"),
        Row::new(
            "  a warm run left to finish: from the edit to its tests' start",
            "ms",
            warm_start.clone(),
        )
        .note(format!(
            "the quiet time ({quiet_ms} ms), the warm console's start, listing and keying the tree, at nice 19"
        )),
        Row::new(
            "  a warm run left to finish: its tests' own time",
            "ms",
            warm_took.clone(),
        )
        .note("at nice 19 throughout (the stop after it takes its verdict)"),
        Row::new(
            "stop once the warm run is done (the agent thought longer)",
            "ms",
            after_done.clone(),
        )
        .note(format!(
            "{:.3}× the suite (median of per-round ratios): the warm run's verdict, no wait",
            ratio(r_done)
        )),
        Row::new("stop right after the edit, warm runs on", "ms", right_after.clone()).note(
            format!(
                "{:.3}× the suite (median of per-round ratios; goal ≤ 1.05): the warm run had \
                 not begun, was ended, and the stop ran the suite",
                ratio(r_after)
            ),
        ),
        Row::new("stop ÷ suite, right after the edit", "×", r_after.clone())
            .note("goal ≤ 1.05"),
        Row::new("baseline: CPU-bound tool call alone", "ms", alone.clone())
            .note("python3, 6,000,000 multiply-adds"),
        Row::new("CPU-bound tool call while a warm run tests", "ms", beside.clone()).note(
            "the warm run's suite keeps both cores busy, at nice 19 in its own autogroup",
        ),
        Row::new("tool call beside a warm run ÷ alone", "×", slowdown)
            .note("goal ≤ 1.10 (nice works)"),
    ]
}

/// The hook process per edit, side by side with the binary's bare start (`--version`) and a
/// loopback HTTP POST: Claude Code's `PostToolUse` for a `Write` with no callback and with one
/// matching blocking callback (`true`), and its `PostToolBatch` of one `Write`, each in a
/// project of its own (a repository with `src/greet.sh` committed, then rewritten), every
/// round running each once in turn.
pub fn hook_per_edit(opts: &Options) -> Vec<Row> {
    let rounds = if opts.quick { 3 } else { 30 };
    let config_home = tempfile::tempdir().unwrap();
    let project = || {
        let (repo, root) = greet_project();
        std::fs::write(root.join("src/greet.sh"), "echo hello again\n").unwrap();
        (repo, root)
    };
    let write_call = |root: &Path| json!({"file_path": root.join("src/greet.sh"), "content": "echo hello again\n"});
    let post_tool_use = |root: &Path| {
        json!({
            "session_id": "bench", "transcript_path": "/dev/null", "cwd": root,
            "permission_mode": "acceptEdits", "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": write_call(root),
            "tool_response": {"type": "update", "filePath": root.join("src/greet.sh")},
            "tool_use_id": "toolu_bench",
        })
        .to_string()
    };
    let run = |args: &[&str], cwd: &Path, input: &str| {
        time_with_stdin(
            Command::new(&opts.exe)
                .args(args)
                .current_dir(cwd)
                .env("XDG_CONFIG_HOME", config_home.path()),
            input,
        )
    };
    let (_plain_repo, plain) = project();
    let (_batch_repo, batch) = project();
    let (_callback_repo, callback) = project();
    add_blocking_callback(opts, &callback, config_home.path());
    let batch_payload = json!({
        "session_id": "bench", "transcript_path": "/dev/null", "cwd": batch,
        "hook_event_name": "PostToolBatch",
        "tool_calls": [{"tool_name": "Write", "tool_input": write_call(&batch),
            "tool_use_id": "toolu_bench"}],
    })
    .to_string();
    let cases: [(&str, &Path, String); 3] = [
        ("post-tool-use", &plain, post_tool_use(&plain)),
        ("post-tool-batch", &batch, batch_payload),
        ("post-tool-use", &callback, post_tool_use(&callback)),
    ];
    // The first calls start each project's console server and lay out its state.
    for (event, root, payload) in &cases {
        run(&["hook", event], root, payload);
    }
    let server = http::Server::start();
    let mut hooks: [Vec<f64>; 3] = Default::default();
    let (mut start, mut post) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for ((event, root, payload), times) in cases.iter().zip(&mut hooks) {
            let asked = warm_asked_at(root);
            times.push(run(&["hook", event], root, payload));
            // The server starts the warm run the hook asked for after the hook has exited: the
            // next process is timed once it has (an agent's next call comes later than that),
            // not while it starts on the same cores.
            let started = Instant::now();
            while warm_asked_at(root) == asked && started.elapsed() < WARM_START_LIMIT {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        start.push(run(&["--version"], &plain, ""));
        post.push(server.post(&cases[0].2));
    }
    for (_, root, _) in &cases {
        if let Ok(client) = ConsoleClient::for_project(root) {
            let _ = client.shutdown_server();
        }
    }
    hook_rows(hooks, start, post)
}

/// How long [`hook_per_edit`] waits for the warm run a hook asked for to start.
const WARM_START_LIMIT: Duration = Duration::from_secs(2);

/// When the project's newest warm run was asked for, if one was.
fn warm_asked_at(root: &Path) -> Option<u64> {
    current_warm_run(&Project::at(root)).map(|run| run.requested_at_ms)
}

/// Trusts the project at `root` and gives it a blocking callback on `*.sh` that runs `true`.
fn add_blocking_callback(opts: &Options, root: &Path, config_home: &Path) {
    let trusted = Command::new(&opts.exe)
        .args(["trust", "--project"])
        .arg(root)
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "context-pilot trust failed");
    let upsert = json!({"action": "create", "name": "check", "pattern": ["*.sh"],
        "script_content": "true", "blocking": true, "timeout": 60});
    let created = Command::new(&opts.exe)
        .args(["tool", "Callback_upsert", &upsert.to_string()])
        .current_dir(root)
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap();
    assert!(
        created.status.success(),
        "Callback_upsert failed: {created:?}"
    );
}

/// The rows of [`hook_per_edit`]: its three hook cases, the bare start and the POST.
fn hook_rows(hooks: [Vec<f64>; 3], start: Vec<f64>, post: Vec<f64>) -> Vec<Row> {
    let median = |s: &[f64]| {
        let mut s = s.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let bare = median(&start);
    let [plain_times, batch_times, callback_times] = hooks;
    let ratio = |s: &[f64]| format!("{:.2}× the bare start (medians)", median(s) / bare);
    let (h, p) = (median(&plain_times), median(&post));
    vec![
        Row::new(
            "Claude Code `PostToolUse` per edit: a `context-pilot hook` process",
            "ms",
            plain_times.clone(),
        )
        .note(format!(
            "a Write of a tracked file, no callback; snapshot restamped, warm-run request (each \
             case timed once the warm run asked for before it started); {}",
            ratio(&plain_times)
        )),
        Row::new(
            "Claude Code `PostToolBatch` of one Write: a `context-pilot hook` process",
            "ms",
            batch_times.clone(),
        )
        .note(format!("no callback; {}", ratio(&batch_times))),
        Row::new(
            "Claude Code `PostToolUse` per edit, one matching blocking callback (`true`)",
            "ms",
            callback_times.clone(),
        )
        .note(format!(
            "the callback runs in the console server; {}",
            ratio(&callback_times)
        )),
        Row::new("baseline: `context-pilot --version` (the binary's start)", "ms", start),
        Row::new(
            "loopback HTTP POST of the same payload, fresh connection, answered at once",
            "ms",
            post,
        )
        .note(format!(
            "the least an HTTP hook costs; {:.0}× below the hook process (medians), before any of the hook's own work",
            h / p
        )),
    ]
}

/// A loopback HTTP/1.1 server answering every POST at once with `{}`.
mod http {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::{SocketAddr, TcpListener, TcpStream};
    use std::time::Instant;

    pub struct Server {
        addr: SocketAddr,
    }

    impl Server {
        pub fn start() -> Self {
            let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
            let addr = listener.local_addr().unwrap();
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = answer(&stream);
                }
            });
            Self { addr }
        }

        /// Posts `body` on a fresh connection and reads the whole answer; the time taken.
        pub fn post(&self, body: &str) -> f64 {
            let started = Instant::now();
            let mut stream = TcpStream::connect(self.addr).unwrap();
            write!(
                stream,
                "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            super::ms(started.elapsed())
        }
    }

    fn answer(stream: &TcpStream) -> std::io::Result<()> {
        let mut reader = BufReader::new(stream);
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let mut stream = stream;
        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
    }
}
