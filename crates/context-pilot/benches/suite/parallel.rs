//! Parallel workflow phases (issue 26): `context-pilot run --headless` of 4 independent phases
//! with `--max-parallel 4`, against one phase alone with the same script. Each phase writes a
//! file (one tool call) and ends, is asked once by the stop gate to verify, and ends again:
//! three requests of 667 ms, 2 s of model time. The project has a test suite (a `unittest`
//! file, `checkpoint.tests.command`, trusted), so the stop gate tests each phase and the merge
//! queue (issue 37) tests each combined tree before it lands, as it would in real use. The
//! overhead per extra phase is the difference, divided by the 3 extra phases: worktree, agent
//! start, merge test, merge and removal.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, Reply, Turn, anthropic, git, git_repo};
use serde_json::{Value, json};

use super::Options;
use super::stats::Row;

/// The requests of one phase: the write, its end, and the end again after the stop gate's
/// one block (checked: the figures say so when it differs).
const REQUESTS_PER_PHASE: usize = 3;
/// The scripted model's time per request: 2 s of model time per phase.
const MODEL_TIME: Duration = Duration::from_millis(2000 / REQUESTS_PER_PHASE as u64);

fn workflow(phases: usize) -> String {
    let mut yaml = String::from("name: bench\nspeculative_merges: 4\nphases:\n");
    for i in 0..phases {
        let _ = writeln!(
            yaml,
            "  - id: p{i}\n    depends_on: []\n    prompt: PHASE-p{i}-MARK Write p{i}.rs."
        );
    }
    yaml
}

/// Answers each phase's first request with a `File_write` of its file, every later one with
/// "Done.", each after [`MODEL_TIME`].
fn serve(server: &LlmServer, phases: usize) {
    server.answer_side_requests(move |request| {
        let phase = (0..phases).find(|i| request.raw_body.contains(&format!("PHASE-p{i}-MARK")))?;
        let turn = if request.raw_body.contains("\"tool_result\"") {
            Turn::text("Done.")
        } else {
            let args =
                format!(r#"{{"file_path": "p{phase}.rs", "content": "pub fn p{phase}() {{}}\n"}}"#);
            Turn::tool_calls(&[(&format!("w{phase}"), "File_write", &args)])
        };
        Some(Reply::sse(&anthropic::sse(&turn)).with_chunk_delay(MODEL_TIME))
    });
}

/// The project's test command: a `unittest` suite of one test.
const TESTS: &str = "python3 -m unittest";

/// What one run did: its wall time in ms, the model requests it made, and its merge
/// queue's tests (how many, their time in ms).
struct Measured {
    wall_ms: f64,
    requests: usize,
    merge_tests: u64,
    merge_test_ms: u64,
}

/// One run of `phases` phases.
fn run_once(opts: &Options, phases: usize) -> Measured {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/bench.yaml"),
        workflow(phases),
    )
    .unwrap();
    std::fs::write(
        dir.join(".context-pilot/config.json"),
        json!({"checkpoint": {"tests": {"command": TESTS}}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("test_bench.py"),
        "import unittest\n\n\nclass Bench(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "__pycache__/\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    let trusted = Command::new(&opts.exe)
        .args(["trust", "--project"])
        .arg(dir)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .output()
        .unwrap();
    assert!(trusted.status.success(), "context-pilot trust failed");
    let server = LlmServer::start().unwrap();
    serve(&server, phases);
    let started = Instant::now();
    let out = command(opts, dir, &server).output().unwrap();
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "bench run failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let queue = merge_queue(dir);
    Measured {
        wall_ms: elapsed.as_secs_f64() * 1000.0,
        requests: server.side_requests().len(),
        merge_tests: queue["tested"].as_u64().unwrap_or(0),
        merge_test_ms: queue["test_ms"].as_u64().unwrap_or(0),
    }
}

/// The `merge_queue` record of the run in `dir` (its `context.json`).
fn merge_queue(dir: &Path) -> Value {
    let run = std::fs::read_dir(dir.join(".context-pilot/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    let text = std::fs::read_to_string(run.path().join("context.json")).unwrap();
    let record: Value = serde_json::from_str(&text).unwrap();
    record["merge_queue"].clone()
}

fn command(opts: &Options, dir: &Path, server: &LlmServer) -> Command {
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["run", ".context-pilot/workflows/bench.yaml", "--headless"])
        .args(["--max-parallel", "4"])
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "k")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The rows: one phase, four at once, their ratio and the overhead per extra phase, and what
/// the merge queue's tests took in the run of four.
pub fn parallel_phases(opts: &Options) -> Vec<Row> {
    let rounds = if opts.quick { 1 } else { 5 };
    let (mut one, mut four, mut ratio, mut overhead) = (vec![], vec![], vec![], vec![]);
    let (mut tests, mut test_ms) = (vec![], vec![]);
    let (mut one_requests, mut four_requests) = (0, 0);
    for _ in 0..rounds {
        let alone = run_once(opts, 1);
        one_requests = alone.requests;
        let wave = run_once(opts, 4);
        four_requests = wave.requests;
        one.push(alone.wall_ms);
        four.push(wave.wall_ms);
        ratio.push(wave.wall_ms / alone.wall_ms);
        overhead.push((wave.wall_ms - alone.wall_ms) / 3.0);
        #[expect(clippy::cast_precision_loss, reason = "a handful of tests")]
        tests.push(wave.merge_tests as f64);
        #[expect(clippy::cast_precision_loss, reason = "milliseconds of a bench run")]
        test_ms.push(wave.merge_test_ms as f64);
    }
    let model = MODEL_TIME.as_secs_f64() * one_requests as f64;
    if one_requests != REQUESTS_PER_PHASE {
        eprintln!(
            "suite: parallel: a phase made {one_requests} requests, not {REQUESTS_PER_PHASE}"
        );
    }
    vec![
        Row::new("workflow: one phase alone", "ms", one).note(format!(
            "{one_requests} model requests of {} ms each ({model:.1} s of model time); in the project's tree, its tree tested after it",
            MODEL_TIME.as_millis()
        )),
        Row::new("workflow: 4 independent phases, --max-parallel 4", "ms", four).note(format!(
            "{four_requests} model requests in all; each phase in its own worktree, each merge tested on the combined tree before it lands"
        )),
        Row::new("4 phases ÷ one phase (same round)", "×", ratio)
            .note("the goal is at most 1.3×, merge tests included"),
        Row::new("overhead per extra phase", "ms", overhead).note(
            "(4 phases − one phase) ÷ 3, same round: worktree, agent start, merge test, merge, removal",
        ),
        Row::new("merge queue: combined trees tested (4 phases)", "", tests)
            .note(format!("`{TESTS}` of one test, each; up to the machine's cores at once")),
        Row::new("merge queue: time in tests (4 phases)", "ms", test_ms)
            .note("summed over the tests; those ahead of their turn run beside the others"),
    ]
}
