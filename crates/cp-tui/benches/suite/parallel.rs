//! Parallel workflow phases (issue 26): `context-pilot run --headless` of 4 independent phases
//! with `--max-parallel 4`, against one phase alone with the same script. Each phase writes a
//! file (one tool call) and ends, is asked once by the stop gate to verify, and ends again:
//! three requests of 667 ms, 2 s of model time. The overhead per extra phase is the
//! difference, divided by the 3 extra phases: worktree, agent start, merge and removal.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, Reply, Turn, anthropic, git, git_repo};

use super::Options;
use super::stats::Row;

/// The requests of one phase: the write, its end, and the end again after the stop gate's
/// one block (checked: the figures say so when it differs).
const REQUESTS_PER_PHASE: usize = 3;
/// The scripted model's time per request: 2 s of model time per phase.
const MODEL_TIME: Duration = Duration::from_millis(2000 / REQUESTS_PER_PHASE as u64);

fn workflow(phases: usize) -> String {
    let mut yaml = String::from("name: bench\nphases:\n");
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

/// One run of `phases` phases; its wall time in ms and the model requests it made.
fn run_once(opts: &Options, phases: usize) -> (f64, usize) {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/bench.yaml"),
        workflow(phases),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
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
    (elapsed.as_secs_f64() * 1000.0, server.side_requests().len())
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

/// The rows: one phase, four at once, their ratio and the overhead per extra phase.
pub fn parallel_phases(opts: &Options) -> Vec<Row> {
    let rounds = if opts.quick { 1 } else { 5 };
    let (mut one, mut four, mut ratio, mut overhead) = (vec![], vec![], vec![], vec![]);
    let (mut one_requests, mut four_requests) = (0, 0);
    for _ in 0..rounds {
        let (alone, requests) = run_once(opts, 1);
        one_requests = requests;
        let (wave, requests) = run_once(opts, 4);
        four_requests = requests;
        one.push(alone);
        four.push(wave);
        ratio.push(wave / alone);
        overhead.push((wave - alone) / 3.0);
    }
    let model = MODEL_TIME.as_secs_f64() * one_requests as f64;
    if one_requests != REQUESTS_PER_PHASE {
        eprintln!(
            "suite: parallel: a phase made {one_requests} requests, not {REQUESTS_PER_PHASE}"
        );
    }
    vec![
        Row::new("workflow: one phase alone", "ms", one).note(format!(
            "{one_requests} model requests of {} ms each ({model:.1} s of model time); in the project's tree",
            MODEL_TIME.as_millis()
        )),
        Row::new("workflow: 4 independent phases, --max-parallel 4", "ms", four).note(format!(
            "{four_requests} model requests in all; each phase in its own worktree, merged back"
        )),
        Row::new("4 phases ÷ one phase (same round)", "×", ratio)
            .note("the goal is at most 1.3×"),
        Row::new("overhead per extra phase", "ms", overhead)
            .note("(4 phases − one phase) ÷ 3, same round: worktree, agent start, merge, removal"),
    ]
}
