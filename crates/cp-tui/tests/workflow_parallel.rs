//! End to end (issue 26): `context-pilot run --headless` on a workflow with `depends_on`, the
//! built-in agent against the scripted LLM server. Phases ready together run at once (their
//! requests are in flight together), each in its own worktree; their branches are merged;
//! a dependent starts as soon as its dependency is merged, while another phase still runs;
//! a conflict exits 3 with a clean tree; Ctrl-C / SIGTERM stop the run gracefully (exit 130,
//! phases interrupted, nothing left running); `--resume` after those or SIGKILL keeps every
//! commit; a phase whose context fills restarts alone, in its own worktree.
//! A second Ctrl-C ends the run at once and still leaves no process; `repeat_phase` while a
//! dependent of its target runs stops that dependent and keeps its branch as superseded.
//! In the TUI too: the phases run at once, each phase's conversation shows its tool calls,
//! a parallel phase's approval gate reviews (F3) its branch against its base, a killed run
//! resumes there, Esc stops every running phase and leaves nothing behind, and a phase run
//! by the TUI's own agent shows its context and tokens.
//!
//! The phases run at once, so their requests interleave: the server answers by phase (each
//! prompt carries a marker, `util::phases`), not from one queue.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

mod util;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, Reply, TuiSession, anthropic, git, git_repo};
use serde_json::Value;
use util::agent_run::shown;
use util::phases::{
    CLASH, FEATURE, Script, Seen, TWO, assert_clash_stopped, assert_clean, assert_nothing_left,
    clash_script, feature_script, marker, phase_branch_gone, read, run_record, serve, serve_script,
    write,
};

/// How long a test waits for a durable fact before failing (a busy machine is slow).
const PATIENCE: Duration = Duration::from_secs(120);

fn prepare(yaml: &str) -> tempfile::TempDir {
    let repo = git_repo();
    let dir = repo.path();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(dir.join(".context-pilot/workflows/graph.yaml"), yaml).unwrap();
    std::fs::write(dir.join("README.md"), "# demo\n").unwrap();
    std::fs::write(dir.join("shared.txt"), "base\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    repo
}

fn command(dir: &Path, server: &LlmServer, extra: &[&str]) -> Command {
    let mut cmd = command_with_restarts(dir, server, extra);
    cmd.args(["--max-restarts", "0"]);
    cmd
}

/// [`command`], smart restarts left on.
fn command_with_restarts(dir: &Path, server: &LlmServer, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_context-pilot"));
    cmd.arg("run")
        .args(extra)
        .arg("--headless")
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", cp_e2e::config_home())
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null());
    cmd
}

fn run(dir: &Path, server: &LlmServer, extra: &[&str]) -> Output {
    command(dir, server, extra).output().unwrap()
}

/// Whether the run's record says it completed (false while it has none yet).
fn run_completed(dir: &Path) -> bool {
    let Ok(mut runs) = std::fs::read_dir(dir.join(".context-pilot/runs")) else {
        return false;
    };
    runs.next()
        .and_then(Result::ok)
        .and_then(|run| std::fs::read_to_string(run.path().join("context.json")).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|record| record["status"] == "completed")
}

#[test]
fn two_phases_run_at_once_in_worktrees_and_a_dependent_sees_both() {
    let repo = prepare(FEATURE);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = feature_script();
    let seen = Arc::new(Seen::default());
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        script,
        Arc::clone(&seen),
        Some(("api", "ui", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // api's first request was still unanswered when ui's arrived.
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{shown}");

    // Each ran in its own worktree, on its own branch, merged with a commit naming it.
    let record = run_record(dir).unwrap();
    let phases = &record["phase_runs"];
    for phase in ["api", "ui"] {
        let worktree = phases[phase]["worktree"].as_str().unwrap();
        assert!(
            worktree.starts_with(".context-pilot/worktrees/") && worktree.ends_with(phase),
            "{record:#}"
        );
        assert!(
            phases[phase]["branch"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{phase}")),
            "{record:#}"
        );
        assert_eq!(phases[phase]["status"], "merged", "{record:#}");
        assert_eq!(phases[phase]["agent"], "builtin", "{record:#}");
        assert!(phases[phase]["base_commit"].is_string(), "{record:#}");
        let merge = phases[phase]["merge_commit"].as_str().unwrap();
        let subject = git(dir, &["log", "-1", "--format=%s", merge]);
        assert!(
            subject.starts_with(&format!("Merge phase {phase} ")),
            "{subject}"
        );
    }
    assert_eq!(phases["integrate"]["status"], "merged", "{record:#}");
    assert_eq!(
        std::fs::read_to_string(dir.join("api.txt")).unwrap(),
        "api was here\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ui.txt")).unwrap(),
        "ui was here\n"
    );
    // The dependent phase read both results.
    let integrate = seen.bodies("integrate");
    let last = integrate.last().unwrap();
    assert!(
        last.contains("api was here") && last.contains("ui was here"),
        "{last}"
    );
    // Progress lines of the phases at once carry their id; one summary line per phase.
    assert!(shown.contains("[api]") && shown.contains("[ui]"), "{shown}");
    for phase in ["api", "ui", "integrate"] {
        assert!(
            shown.contains(&format!("phase {phase}: merged, ")),
            "{shown}"
        );
    }
    assert_nothing_left(dir, &shown);
    assert_clean(dir, "");
}

const FAST_SLOW: &str = "\
name: fast-slow
phases:
  - id: fast
    depends_on: []
    prompt: PHASE-fast-MARK Write fast.txt.
  - id: slow
    depends_on: []
    prompt: PHASE-slow-MARK Write slow.txt.
  - id: after
    depends_on: [fast]
    prompt: PHASE-after-MARK Read fast.txt.
";

/// A phase starts as soon as its dependencies are merged, not when the whole wave is done:
/// slow's first request is held until after's first request arrives, which can only happen
/// while slow still runs (fast finished, was merged, and its dependent started).
#[test]
fn a_dependent_starts_when_its_dependency_is_merged_while_another_phase_still_runs() {
    let repo = prepare(FAST_SLOW);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = Script {
        phases: vec![
            ("fast", vec![write("fast.txt", "fast was here\n")]),
            ("slow", vec![write("slow.txt", "slow was here\n")]),
            ("after", vec![read("fast.txt")]),
        ],
    };
    let seen = Arc::new(Seen::default());
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        script,
        Arc::clone(&seen),
        Some(("slow", "after", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // after's first request arrived while slow's first request was unanswered.
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{shown}");
    let record = run_record(dir).unwrap();
    let phases = &record["phase_runs"];
    for phase in ["fast", "slow", "after"] {
        assert_eq!(phases[phase]["status"], "merged", "{record:#}");
        // Each ran beside another, so in a worktree of its own.
        assert!(phases[phase]["worktree"].is_string(), "{record:#}");
    }
    // after's branch was made from the run's branch with fast merged: it read fast's work.
    let after = seen.bodies("after");
    assert!(after.last().unwrap().contains("fast was here"), "{after:?}");
    for file in ["fast.txt", "slow.txt"] {
        assert!(dir.join(file).exists(), "{file}\n{shown}");
    }
    assert_nothing_left(dir, &shown);
    assert_clean(dir, "");
}

#[test]
fn a_conflict_exits_3_naming_the_file_and_both_phases_and_leaves_the_tree_clean() {
    let repo = prepare(CLASH);
    let dir = repo.path();
    let server = serve_script(clash_script());
    // The person's own notification command, from their user config, gets the alert as JSON.
    let home = tempfile::tempdir().unwrap();
    let alerts = home.path().join("alerts.jsonl");
    std::fs::create_dir_all(home.path().join("context-pilot")).unwrap();
    std::fs::write(
        home.path().join("context-pilot/config.json"),
        serde_json::json!({"notify": {"command": format!("cat >> '{}'", alerts.display())}})
            .to_string(),
    )
    .unwrap();
    let out = command(dir, &server, &[".context-pilot/workflows/graph.yaml"])
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains('\x07'),
        "no bell: {shown}"
    );
    let alert: Value = serde_json::from_str(
        std::fs::read_to_string(&alerts)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(alert["event"], "conflict", "{alert}");
    assert_eq!(alert["phase"], "right", "{alert}");
    assert!(
        alert["message"].as_str().unwrap().contains("shared.txt"),
        "{alert}"
    );
    assert_clash_stopped(dir, &shown);
}

/// Waits until `check` holds for the run's record.
fn wait_record(dir: &Path, child: &mut Child, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = run_record(dir)
            && check(&value)
        {
            return value;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the awaited state"
        );
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the run record"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn resume_after_sigkill_mid_wave_finishes_and_keeps_every_commit() {
    interrupted_mid_wave(libc::SIGKILL, false);
}

/// The same run resumed in the TUI: it drives the phases' worktrees as headless does.
#[test]
fn resume_in_the_tui_after_sigkill_mid_wave_finishes_and_keeps_every_commit() {
    interrupted_mid_wave(libc::SIGKILL, true);
}

/// Ctrl-C (SIGINT to the run's process alone, so the run itself must stop its agents)
/// mid-wave: the running phase is stopped and recorded as interrupted, the run exits with
/// 130, no process it started is left, no worktree is left locked, and `--resume` finishes
/// the run.
#[test]
fn resume_after_ctrl_c_mid_wave_finishes_and_keeps_every_commit() {
    interrupted_mid_wave(libc::SIGINT, false);
}

/// SIGTERM (a service manager's stop) is as graceful as Ctrl-C.
#[test]
fn resume_after_sigterm_mid_wave_finishes_and_keeps_every_commit() {
    interrupted_mid_wave(libc::SIGTERM, false);
}

fn interrupted_mid_wave(signal: i32, in_tui: bool) {
    let repo = prepare(FEATURE);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = feature_script();
    // ui's agent hangs after its first turn: the process is killed with api merged.
    let stall = Arc::new(Mutex::new(Some("ui")));
    serve(&server, script, Arc::default(), None, Arc::clone(&stall));
    let mut first = command(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    first.stdout(Stdio::null()).stderr(Stdio::null());
    // Its own process group with SIGINT at its default, as a shell's foreground job.
    std::os::unix::process::CommandExt::process_group(&mut first, 0);
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut first, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = first.spawn().unwrap();
    // api is listed first, so it is merged as soon as it finishes, while ui still runs; its
    // worktree and branch are gone once the branch list no longer has it.
    let record = wait_record(dir, &mut child, |r| {
        r["phase_runs"]["api"]["status"] == "merged"
            && r["phase_runs"]["ui"]["status"] == "running"
            && phase_branch_gone(dir, "api")
    });
    let run_id = record["run_id"].as_str().unwrap().to_owned();
    let merge = record["phase_runs"]["api"]["merge_commit"]
        .as_str()
        .unwrap()
        .to_owned();
    let api_commit = git(dir, &["rev-parse", &format!("{merge}^2")])
        .trim()
        .to_owned();
    let pid = i32::try_from(child.id()).unwrap();
    let descendants = descendants_of(pid);
    // SAFETY: signalling the process (SIGKILL: its group) this test started.
    unsafe {
        if signal == libc::SIGKILL {
            libc::kill(-pid, signal);
        } else {
            libc::kill(pid, signal);
        }
    }
    let status = child.wait().unwrap();
    if signal != libc::SIGKILL {
        assert_eq!(status.code(), Some(130), "{status:?}");
        let record = run_record(dir).unwrap();
        assert_eq!(
            record["phase_runs"]["ui"]["status"], "interrupted",
            "{record:#}"
        );
        // Nothing the run started outlives it (agents, console servers, git).
        let alive: Vec<i32> = descendants.into_iter().filter(|&p| running(p)).collect();
        assert!(alive.is_empty(), "left running: {alive:?}");
    }
    // No worktree is left locked, and git's own locks are gone.
    assert_no_worktree_locked(dir);

    *stall.lock().unwrap() = None;
    let shown = if in_tui {
        resume_in_tui(dir, &server, &run_id)
    } else {
        let out = run(dir, &server, &["--resume", &run_id]);
        assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
        shown(&out)
    };
    // api's commit made before the kill is on the run's branch; ui's work too.
    let kept = Command::new("git")
        .args(["merge-base", "--is-ancestor", &api_commit, "HEAD"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(kept.success(), "{api_commit} lost\n{shown}");
    assert_eq!(
        std::fs::read_to_string(dir.join("ui.txt")).unwrap(),
        "ui was here\n"
    );
    let record = run_record(dir).unwrap();
    for phase in ["api", "ui", "integrate"] {
        assert_eq!(
            record["phase_runs"][phase]["status"], "merged",
            "{record:#}"
        );
    }
    assert_nothing_left(dir, &shown);
}

/// The first turn of phase `phase` in [`a_second_ctrl_c_ends_the_run_at_once_and_leaves_no_process`]:
/// commit a first step, then start a console that ignores SIGTERM with a `setsid` child
/// (`sleep <n>1`, `sleep <n>0`, `n` the phase's number); after the interruption, a look at
/// the file.
fn holding_turn(phase: &str, n: u32, holding: bool) -> Vec<(&'static str, String)> {
    if !holding {
        return vec![read(&format!("{phase}.txt"))];
    }
    let step = format!(
        "printf '{phase} was here\\n' > {phase}.txt && git add {phase}.txt && \
         git commit -qm '{phase}: first step'"
    );
    let hold = format!("trap '' TERM INT; setsid sleep {n}1 & sleep {n}0; wait");
    vec![
        (
            "console_easy_bash",
            serde_json::json!({ "command": step }).to_string(),
        ),
        (
            "console_create",
            serde_json::json!({ "command": hold, "description": "ignores SIGTERM" }).to_string(),
        ),
    ]
}

/// Answers api and ui with [`holding_turn`] while `holding`, then holds their second request;
/// integrate reads both files. Every request is recorded in `seen`.
fn serve_holding(server: &LlmServer, holding: Arc<std::sync::atomic::AtomicBool>, seen: Arc<Seen>) {
    server.answer_side_requests(move |request| {
        let phase = ["api", "ui", "integrate"]
            .into_iter()
            .find(|p| request.raw_body.contains(&marker(p)))?;
        seen.record(phase, &request.raw_body);
        let hold = holding.load(std::sync::atomic::Ordering::SeqCst);
        if request.raw_body.matches("\"tool_result\"").count() == 0 {
            let calls = match phase {
                "api" => holding_turn("api", 301, hold),
                "ui" => holding_turn("ui", 302, hold),
                _ => vec![read("api.txt"), read("ui.txt")],
            };
            let ids: Vec<String> = (0..calls.len()).map(|i| format!("{phase}{i}")).collect();
            let calls: Vec<(&str, &str, &str)> = calls
                .iter()
                .zip(&ids)
                .map(|((name, args), id)| (id.as_str(), *name, args.as_str()))
                .collect();
            return Some(anthropic::tool_use_turn(&calls));
        }
        if hold {
            return Some(Reply::sse("event: ping\ndata: {\"type\":\"ping\"}\n\n").then_stall());
        }
        Some(anthropic::text_turn("Done."))
    });
}

/// A second Ctrl-C while the graceful stop still waits (each phase's console ignores SIGTERM
/// and its console server waits `CP_CONSOLE_KILL_GRACE_MS` before SIGKILL) ends the run at
/// once with 130: every process it started is gone (console servers, consoles, a `setsid`
/// child of one), no worktree is left locked, and `--resume` finishes the run with the
/// commits made before.
#[test]
fn a_second_ctrl_c_ends_the_run_at_once_and_leaves_no_process() {
    let repo = prepare(FEATURE);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let holding = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let seen = Arc::new(Seen::default());
    serve_holding(&server, Arc::clone(&holding), Arc::clone(&seen));
    let logs = tempfile::tempdir().unwrap();
    let stderr_path = logs.path().join("stderr");
    let mut first = command(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    first
        .env("CP_CONSOLE_KILL_GRACE_MS", "600000")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    std::os::unix::process::CommandExt::process_group(&mut first, 0);
    let mut child = first.spawn().unwrap();
    // Both phases are at work at once, their consoles running: each sent its second request
    // (after the tool results), which the server holds.
    for phase in ["api", "ui"] {
        let deadline = Instant::now() + PATIENCE;
        while seen.bodies(phase).len() < 2 {
            assert!(child.try_wait().unwrap().is_none(), "the run ended early");
            assert!(
                Instant::now() < deadline,
                "{phase} never sent its second request"
            );
            seen.wait_for("never-a-phase", Duration::from_millis(50));
        }
    }
    let record = run_record(dir).unwrap();
    let run_id = record["run_id"].as_str().unwrap().to_owned();
    let step = |phase: &str| {
        git(dir, &["rev-parse", &format!("cp/{run_id}/{phase}")])
            .trim()
            .to_owned()
    };
    let steps = [step("api"), step("ui")];
    let pid = i32::try_from(child.id()).unwrap();
    let descendants = descendants_of(pid);
    let cmdline = |p: i32| std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
    for sleeper in ["3011", "3021"] {
        assert!(
            descendants.iter().any(|&p| cmdline(p)
                .split(|&b| b == 0)
                .any(|a| a == sleeper.as_bytes())),
            "the console's setsid child `sleep {sleeper}` is not among the run's processes"
        );
    }
    // SAFETY: signalling the process this test started.
    unsafe { libc::kill(pid, libc::SIGINT) };
    // The graceful stop has begun (a phase is recorded as interrupted); it now waits for a
    // console that ignores SIGTERM.
    wait_record(dir, &mut child, |r| {
        ["api", "ui"]
            .iter()
            .any(|p| r["phase_runs"][*p]["status"] == "interrupted")
    });
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted again: ended at once"),
        "{stderr}"
    );
    let alive: Vec<(i32, String, String)> = descendants
        .into_iter()
        .filter(|&p| running(p))
        .map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            (
                p,
                String::from_utf8_lossy(&cmdline(p)).replace('\0', " "),
                stat,
            )
        })
        .collect();
    assert!(alive.is_empty(), "left running: {alive:?}\n{stderr}");
    assert_no_worktree_locked(dir);

    holding.store(false, std::sync::atomic::Ordering::SeqCst);
    let out = run(dir, &server, &["--resume", &run_id]);
    let resumed = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{resumed}");
    for commit in &steps {
        let kept = Command::new("git")
            .args(["merge-base", "--is-ancestor", commit, "HEAD"])
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(kept.success(), "{commit} lost\n{resumed}");
    }
    let record = run_record(dir).unwrap();
    for phase in ["api", "ui", "integrate"] {
        assert_eq!(
            record["phase_runs"][phase]["status"], "merged",
            "{record:#}"
        );
    }
    assert_nothing_left(dir, "");
}

const REDO: &str = "\
name: redo
phases:
  - id: plan
    depends_on: []
    prompt: PHASE-plan-MARK Write plan.txt.
  - id: build
    depends_on: [plan]
    prompt: PHASE-build-MARK Write build.txt.
  - id: check
    depends_on: [plan]
    prompt: PHASE-check-MARK Write check.txt.
    approval:
      prompt: Good?
      options:
        - label: Done
          on_select: { action: continue }
        - label: Back to plan
          on_select: { action: repeat_phase, target: plan }
";

/// Each phase writes `<phase>.txt` = `<phase> try <n>` in its n-th run; build's first run
/// then waits (its request held) until it is stopped.
fn serve_tries(server: &LlmServer) {
    let tries: Arc<Mutex<HashMap<&'static str, u32>>> = Arc::default();
    server.answer_side_requests(move |request| {
        let phase = ["plan", "build", "check"]
            .into_iter()
            .find(|p| request.raw_body.contains(&marker(p)))?;
        let mut tries = tries.lock().unwrap();
        let results = request.raw_body.matches("\"tool_result\"").count();
        if results == 0 {
            let n = tries.entry(phase).or_default();
            *n += 1;
            let call = write(&format!("{phase}.txt"), &format!("{phase} try {n}\n"));
            let id = format!("{phase}{n}");
            return Some(anthropic::tool_use_turn(&[(&id, call.0, &call.1)]));
        }
        if phase == "build" && tries.get("build") == Some(&1) {
            return Some(Reply::sse("event: ping\ndata: {\"type\":\"ping\"}\n\n").then_stall());
        }
        Some(anthropic::text_turn("Done."))
    });
}

/// `repeat_phase` at check's gate while build, which depends on plan too, still runs (its
/// request held): build's agent is stopped, its work kept on `cp/<run>/build@1` (said in the
/// output and in `context.json`), and after plan's second run build and check run again
/// from plan's new result.
#[test]
fn repeat_phase_stops_a_running_dependent_keeps_its_branch_and_reruns_it() {
    let repo = prepare(REDO);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    serve_tries(&server);
    let answers = dir.join(".git/answers.yaml");
    std::fs::write(
        &answers,
        "- {phase: check, option: Back to plan}\n- {phase: check, option: Done}\n",
    )
    .unwrap();
    let out = run(
        dir,
        &server,
        &[
            ".context-pilot/workflows/graph.yaml",
            "--answers",
            answers.to_str().unwrap(),
        ],
    );
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let record = run_record(dir).unwrap();
    let run_id = record["run_id"].as_str().unwrap();
    let kept = format!("cp/{run_id}/build@1");
    assert!(
        shown.contains(&format!(
            "phase build: superseded (phase plan runs again); its work is kept on {kept}"
        )),
        "{shown}"
    );
    let build = &record["phase_runs"]["build"];
    assert_eq!(build["status"], "merged", "{record:#}");
    assert_eq!(
        build["superseded"][0]["branch"],
        kept.as_str(),
        "{record:#}"
    );
    // The stopped run's work, on plan's first result, is on the kept branch.
    let show = |rev: &str| git(dir, &["show", rev]);
    assert_eq!(show(&format!("{kept}:build.txt")), "build try 1\n");
    assert_eq!(show(&format!("{kept}:plan.txt")), "plan try 1\n");
    // The run's branch has the second runs, on plan's second result.
    for (file, content) in [
        ("plan.txt", "plan try 2\n"),
        ("build.txt", "build try 2\n"),
        ("check.txt", "check try 2\n"),
    ] {
        assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap(), content);
    }
    let mut branches: Vec<String> = git(
        dir,
        &["branch", "--list", "cp/*", "--format=%(refname:short)"],
    )
    .lines()
    .map(str::to_owned)
    .collect();
    branches.sort();
    assert_eq!(branches, [kept, format!("cp/{run_id}/check@1")]);
    assert_eq!(git(dir, &["worktree", "list"]).lines().count(), 1);
}

/// No worktree is left locked, and git's own locks are gone.
fn assert_no_worktree_locked(dir: &Path) {
    let git_dir = dir.join(".git");
    for tree in std::fs::read_dir(git_dir.join("worktrees"))
        .unwrap()
        .flatten()
    {
        assert!(
            !tree.path().join("locked").exists(),
            "{}",
            tree.path().display()
        );
        assert!(
            !tree.path().join("index.lock").exists(),
            "{}",
            tree.path().display()
        );
    }
    assert!(!git_dir.join("index.lock").exists());
}

/// Resumes `run_id` in the TUI and waits for its end (the Phases panel says it); returns the
/// last screen.
fn resume_in_tui(dir: &Path, server: &LlmServer, run_id: &str) -> String {
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    let args = ["run", "--resume", run_id, "--max-restarts", "0"];
    let mut tui = TuiSession::start(dir, &args, &env).unwrap();
    // Tab: the sidebar; `]`: the Phases panel (there once the run's phases are known).
    tui.send(b"\t");
    tui.wait_until("the Phases panel is listed", PATIENCE, |s| {
        s.contains("Phases")
    })
    .unwrap();
    tui.send(b"]");
    let screen = tui.wait_for("Workflow finished.", PATIENCE).unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(PATIENCE).unwrap(), 0, "{screen}");
    screen
}

/// Every process below `pid` now, from /proc's parent links.
fn descendants_of(pid: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The parent is the second field after the command name's closing parenthesis.
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        if let Some(parent) = after.split_whitespace().nth(1)
            && let Ok(parent) = parent.parse::<i32>()
        {
            parents.push((child, parent));
        }
    }
    let mut found = vec![pid];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        index += 1;
    }
    found.remove(0);
    found
}

/// Whether process `pid` exists and is not a zombie.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        after.split_whitespace().next() != Some("Z")
    })
}

/// A trusted project's test command runs in each phase's worktree (the worktree shares the
/// project's trust while its configuration is the same), and the phases still merge.
#[test]
fn the_stop_gate_runs_the_tests_in_each_phases_worktree() {
    let repo = git_repo();
    let dir = repo.path();
    let log = tempfile::NamedTempFile::new().unwrap();
    std::fs::create_dir_all(dir.join(".context-pilot/workflows")).unwrap();
    std::fs::write(
        dir.join(".context-pilot/workflows/graph.yaml"),
        "name: tested\nphases:\n  - id: api\n    depends_on: []\n    prompt: PHASE-api-MARK Write src/api.rs.\n  - id: ui\n    depends_on: []\n    prompt: PHASE-ui-MARK Write src/ui.rs.\n",
    )
    .unwrap();
    let command = format!("pwd >> '{}'", log.path().display());
    std::fs::write(
        dir.join(".context-pilot/config.json"),
        serde_json::json!({"checkpoint": {"tests": {"command": command}}}).to_string(),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
    cp_e2e::trust(dir);
    let server = serve_script(Script {
        phases: vec![
            ("api", vec![write("src/api.rs", "pub fn api() {}\n")]),
            ("ui", vec![write("src/ui.rs", "pub fn ui() {}\n")]),
        ],
    });
    let out = run(dir, &server, &[".context-pilot/workflows/graph.yaml"]);
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let ran = std::fs::read_to_string(log.path()).unwrap();
    for phase in ["api", "ui"] {
        assert!(
            ran.lines()
                .any(|l| l.contains(".context-pilot/worktrees/")
                    && l.ends_with(&format!("/{phase}"))),
            "tests of {phase} did not run in its worktree: {ran}\n{shown}"
        );
    }
    assert!(dir.join("src/api.rs").exists() && dir.join("src/ui.rs").exists());
    assert_nothing_left(dir, &shown);
    // The trust lent to the worktrees was taken back: the person's store names none of them.
    let store =
        std::fs::read_to_string(cp_e2e::config_home().join("context-pilot/trust.json")).unwrap();
    let root = dir.canonicalize().unwrap();
    assert!(store.contains(&*root.to_string_lossy()), "{store}");
    let worktrees = root.join(".context-pilot/worktrees");
    assert!(!store.contains(&*worktrees.to_string_lossy()), "{store}");
}

const GATED: &str = "\
name: gated
phases:
  - id: api
    depends_on: []
    prompt: PHASE-api-MARK Write api.txt.
    approval:
      prompt: Good api?
      options:
        - { label: Continue, on_select: { action: continue } }
        - { label: Stop, on_select: { action: abort } }
  - id: ui
    depends_on: []
    prompt: PHASE-ui-MARK Write ui.txt.
";

#[test]
fn in_the_tui_phases_run_at_once_and_f3_at_a_parallel_gate_shows_the_phases_branch() {
    let repo = prepare(GATED);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let script = Script {
        phases: vec![
            ("api", vec![write("api.txt", "api was here\n")]),
            ("ui", vec![write("ui.txt", "ui was here\n")]),
        ],
    };
    let overlapped = Arc::new(Mutex::new(None));
    serve(
        &server,
        script,
        Arc::default(),
        Some(("api", "ui", Arc::clone(&overlapped))),
        Arc::default(),
    );
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(
        dir,
        &[
            "run",
            ".context-pilot/workflows/graph.yaml",
            "--max-restarts",
            "0",
        ],
        &env,
    )
    .unwrap();
    tui.wait_for("┌ Approval gate · phase api", PATIENCE)
        .unwrap();
    // api's first request was still unanswered when ui's arrived: they ran at once.
    assert_eq!(*overlapped.lock().unwrap(), Some(true), "{}", tui.screen());
    let record = run_record(dir).unwrap();
    let worktree = record["phase_runs"]["api"]["worktree"].as_str().unwrap();
    assert!(worktree.ends_with("api"), "{record:#}");
    // F3: the Changes panel shows api's work, committed on its branch in its worktree (not
    // in the project's tree, where api.txt does not exist yet).
    assert!(!dir.join("api.txt").exists());
    tui.send(b"\x1bOR");
    tui.wait_for("+api was here", PATIENCE).unwrap();
    // F2 shows the gate again; Enter continues.
    tui.send(b"\x1bOQ");
    tui.wait_for("┌ Approval gate · phase api", PATIENCE)
        .unwrap();
    tui.send(b"\r");
    let deadline = Instant::now() + PATIENCE;
    let record = loop {
        let record = run_record(dir).unwrap();
        if record["status"] == "completed" {
            break record;
        }
        assert!(Instant::now() < deadline, "{record:#}\n{}", tui.screen());
        std::thread::sleep(Duration::from_millis(100));
    };
    for phase in ["api", "ui"] {
        assert_eq!(
            record["phase_runs"][phase]["status"], "merged",
            "{record:#}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("api.txt")).unwrap(),
        "api was here\n"
    );
    // Esc leaves the Changes panel's keys, `]` shows the Phases panel, which has the run's
    // end once the TUI has it (so Ctrl-C quits at once, with nothing running).
    tui.send(b"\x1b");
    // (Esc and `]` together would read as Alt-].)
    tui.wait_for("Enter review keys", PATIENCE).unwrap();
    tui.send(b"]");
    tui.wait_for("Workflow finished.", PATIENCE).unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(PATIENCE).unwrap(), 0);
    assert_nothing_left(dir, "");
}

/// Whether the Phases panel's row of `phase` shows `state`.
fn row_shows(screen: &str, phase: &str, state: &str) -> bool {
    screen.lines().any(|line| {
        let cells: Vec<&str> = line.split_whitespace().collect();
        cells
            .windows(4)
            .any(|w| w[0].ends_with(phase) && w[0].len() <= phase.len() + 3 && w[2] == state)
    })
}

#[test]
fn in_the_tui_the_phases_panel_shows_two_phases_running_at_once_then_done() {
    let repo = prepare(TWO);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    // Every phase request waits until the test opens the gate: both phases stay running.
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let seen = Arc::new(Seen::default());
    let (held, log) = (Arc::clone(&gate), Arc::clone(&seen));
    server.answer_side_requests(move |request| {
        let phase = ["api", "ui"]
            .into_iter()
            .find(|p| request.raw_body.contains(&marker(p)));
        let Some(phase) = phase else {
            return anthropic::side_reply(request);
        };
        log.record(phase, &request.raw_body);
        let (open, opened) = &*held;
        let mut open = open.lock().unwrap();
        while !*open {
            let (guard, timeout) = opened.wait_timeout(open, PATIENCE).unwrap();
            open = guard;
            if timeout.timed_out() {
                break;
            }
        }
        if request.raw_body.contains("\"tool_result\"") {
            return Some(anthropic::text_turn("Done."));
        }
        let file = format!("{phase}.txt");
        let (name, args) = write(&file, &format!("{phase} was here\n"));
        Some(anthropic::tool_use_turn(&[(phase, name, args.as_str())]))
    });
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(
        dir,
        &[
            "run",
            ".context-pilot/workflows/graph.yaml",
            "--max-restarts",
            "0",
        ],
        &env,
    )
    .unwrap();
    // Both phases' first requests are in flight (the request log), held.
    assert!(seen.wait_for("api", PATIENCE), "{}", tui.screen());
    assert!(seen.wait_for("ui", PATIENCE), "{}", tui.screen());
    // Tab: the sidebar; `]`: the Phases panel.
    tui.send(b"\t");
    tui.send(b"]");
    tui.wait_until("both phases show running", PATIENCE, |s| {
        row_shows(s, "api", "running") && row_shows(s, "ui", "running") && s.contains("2▶")
    })
    .unwrap();
    {
        let (open, opened) = &*gate;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
    let deadline = Instant::now() + PATIENCE;
    while run_record(dir).unwrap()["status"] != "completed" {
        assert!(Instant::now() < deadline, "{}", tui.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    // The TUI has the run's end (so Ctrl-C quits at once, with nothing running).
    tui.wait_until("both phases show done", PATIENCE, |s| {
        row_shows(s, "api", "done")
            && row_shows(s, "ui", "done")
            && s.contains("Workflow finished.")
    })
    .unwrap();
    // The selected phase's conversation (the run has ended: nothing more comes) holds its
    // agent's work as the Conversation panel shows it: the tool call with its result, and
    // the answer. `]`: the next phase's.
    for (phase, next) in [("api", true), ("ui", false)] {
        let path = format!("\"file_path\":\"{phase}.txt\"");
        tui.wait_until(&format!("{phase}'s tool call entry"), PATIENCE, |s| {
            s.contains(&format!("── {phase} ──"))
                && s.lines()
                    .any(|l| l.contains("✓ File_write {") && l.contains(&path))
                && s.contains(&format!("Created {phase}.txt"))
                && s.contains("agent › Done.")
        })
        .unwrap();
        if next {
            tui.send(b"]");
        }
    }
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(PATIENCE).unwrap(), 0);
    assert_nothing_left(dir, "");
}

/// Smart restart works per phase: one phase's context fills, it hands off and goes on in a
/// fresh session in its own worktree (the auto-commit on its branch), while the phase beside
/// it never sees a handoff; both merge.
#[test]
fn a_phase_whose_context_fills_restarts_alone_in_its_worktree() {
    const HANDOFF_MARK: &str = "Submit your handoff now via Checkpoint_handoff";
    let repo = prepare(TWO);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let bodies: Arc<Mutex<Vec<(&'static str, String)>>> = Arc::default();
    let log = Arc::clone(&bodies);
    server.answer_side_requests(move |request| {
        let body = &request.raw_body;
        let phase = ["api", "ui"].into_iter().find(|p| body.contains(&marker(p)))?;
        log.lock().unwrap().push((phase, body.clone()));
        let results = body.matches("\"tool_result\"").count();
        let (file, usage) = if phase == "api" {
            ("api.txt", 150_000)
        } else {
            ("ui.txt", 1_000)
        };
        let turn = if body.contains(HANDOFF_MARK) && results < 2 {
            let handoff = r#"{"reason": "threshold_critical",
                "completed": [{"file": "api.txt", "status": "partial"}],
                "remaining": [{"file": "api.txt", "description": "HANDOFF-REMAINING finish api.txt"}],
                "decisions": [], "files_modified": ["api.txt"]}"#;
            cp_e2e::Turn::tool_calls(&[("h1", "Checkpoint_handoff", handoff)])
        } else if body.contains(HANDOFF_MARK) {
            cp_e2e::Turn::text("Handoff recorded.")
        } else if body.contains("HANDOFF-REMAINING") {
            // The fresh session, told what is left.
            cp_e2e::Turn::text("Finished after the restart.")
        } else if results == 0 {
            let args = serde_json::json!({"file_path": file, "content": format!("{phase}\n")});
            cp_e2e::Turn::tool_calls(&[("w1", "File_write", &args.to_string())])
                .with_usage(usage, 0, 50)
        } else {
            cp_e2e::Turn::text("Done.")
        };
        Some(anthropic::reply(&turn))
    });
    let args = [
        ".context-pilot/workflows/graph.yaml",
        "--context-threshold",
        "50",
    ];
    let out = command_with_restarts(dir, &server, &args).output().unwrap();
    let shown = shown(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let bodies = bodies.lock().unwrap();
    let of = |phase: &str| -> Vec<&String> {
        bodies
            .iter()
            .filter(|(p, _)| *p == phase)
            .map(|(_, b)| b)
            .collect()
    };
    assert!(
        of("api").iter().any(|b| b.contains("HANDOFF-REMAINING")),
        "api's fresh session was not given its handoff:\n{shown}"
    );
    assert!(
        of("ui").iter().all(|b| !b.contains(HANDOFF_MARK)),
        "ui was asked for a handoff:\n{shown}"
    );
    // The auto-commit before the restart is api's, on its branch, with its file.
    let history = git(dir, &["log", "--format=%s", "--name-only"]);
    let restart = history
        .split("auto-commit before restart 1 of phase ")
        .nth(1)
        .unwrap_or_else(|| panic!("no restart commit:\n{history}\n{shown}"));
    assert!(restart.starts_with("api"), "{history}");
    assert!(
        restart.lines().take(6).any(|l| l == "api.txt"),
        "the restart's auto-commit does not hold api.txt:\n{history}\n{shown}"
    );
    assert!(
        !history.contains("restart 1 of phase ui"),
        "ui restarted:\n{history}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("api.txt")).unwrap(),
        "api\n"
    );
    assert_eq!(std::fs::read_to_string(dir.join("ui.txt")).unwrap(), "ui\n");
    let record = run_record(dir).unwrap();
    for phase in ["api", "ui"] {
        assert_eq!(record["phase_runs"][phase]["status"], "merged", "{record}");
    }
    assert_nothing_left(dir, &shown);
}

/// Processes whose command line holds `needle`, anywhere on the machine.
fn processes_with(needle: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && running(pid) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Esc in the TUI stops every running phase: the two phases each started a console and
/// then wait on a model reply that never comes; Esc ends both. The run records them as
/// interrupted, no process of theirs is left (agents, console servers, the consoles'
/// commands), no worktree is locked, and the TUI is still there: it takes keys and quits
/// at once (nothing runs any more).
#[test]
fn esc_in_the_tui_stops_every_running_phase_and_leaves_nothing_behind() {
    let repo = prepare(TWO);
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    let seen = Arc::new(Seen::default());
    // A name for the consoles' commands no other test uses, to find them in /proc.
    let tag = format!("cp-esc-{}", std::process::id());
    let command = format!("exec -a {tag} sleep 600");
    serve_held_consoles(&server, Arc::clone(&seen), &command);
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    let mut tui = TuiSession::start(
        dir,
        &[
            "run",
            ".context-pilot/workflows/graph.yaml",
            "--max-restarts",
            "0",
        ],
        &env,
    )
    .unwrap();
    // Both phases started their console and wait on their second request (the request log).
    for phase in ["api", "ui"] {
        assert!(
            seen.wait_requests(phase, 2, PATIENCE),
            "{phase}: {}",
            tui.screen()
        );
    }
    let consoles = processes_with(&tag);
    assert_eq!(consoles.len(), 2, "{consoles:?}");
    let pid = i32::try_from(tui.pid().unwrap()).unwrap();
    let started: Vec<i32> = descendants_of(pid);
    // The phases' console servers and their commands.
    assert!(started.len() >= 4, "{started:?}");
    tui.send(b"\x1b");
    // The run records both phases as interrupted (and itself, to be resumed).
    let deadline = Instant::now() + PATIENCE;
    loop {
        let record = run_record(dir).unwrap();
        let stopped = ["api", "ui"]
            .iter()
            .all(|p| record["phase_runs"][p]["status"] == "interrupted");
        let ended = record["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("interrupted"));
        if stopped && ended {
            break;
        }
        assert!(Instant::now() < deadline, "{record:#}\n{}", tui.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    // Nothing of the phases is left: their consoles' commands, console servers, git.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = processes_with(&tag);
        let alive: Vec<i32> = started.iter().copied().filter(|&p| running(p)).collect();
        if left.is_empty() && alive.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "left running: {left:?} {alive:?}\n{}",
            tui.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_no_worktree_locked(dir);
    // The TUI is alive and takes keys: typed text shows on its input line, and Ctrl-C
    // quits at once (no run is left to ask about), with the run's code (130: interrupted,
    // to be resumed).
    tui.wait_for("Workflow aborted", PATIENCE).unwrap();
    tui.type_text("still here");
    tui.wait_for("still here", PATIENCE).unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(PATIENCE).unwrap(), 130, "{}", tui.screen());
}

/// Answers each phase's first request with a `console_create` of `command`, and never
/// answers the next one (it stalls until the phase is stopped); logs them in `log`.
fn serve_held_consoles(server: &LlmServer, log: Arc<Seen>, command: &str) {
    let command = command.to_owned();
    server.answer_side_requests(move |request| {
        let phase = ["api", "ui"]
            .into_iter()
            .find(|p| request.raw_body.contains(&marker(p)));
        let Some(phase) = phase else {
            return anthropic::side_reply(request);
        };
        log.record(phase, &request.raw_body);
        if request.raw_body.contains("\"tool_result\"") {
            // The model never answers: the phase waits until it is stopped.
            return Some(Reply::sse("event: ping\ndata: {\"type\":\"ping\"}\n\n").then_stall());
        }
        let args = serde_json::json!({"command": &command, "description": "held"}).to_string();
        Some(anthropic::tool_use_turn(&[(
            phase,
            "console_create",
            args.as_str(),
        )]))
    });
}

/// A workflow without `depends_on` runs its phases with the TUI's own agent, in the
/// conversation: the phase's row still shows its context use and tokens, that agent's.
#[test]
fn in_the_tui_a_phase_the_tuis_agent_runs_shows_its_context_and_tokens() {
    let repo =
        prepare("name: plain\nphases:\n  - id: only\n    prompt: PHASE-only-MARK Say done.\n");
    let dir = repo.path();
    let server = LlmServer::start().unwrap();
    server.answer_side_requests(|request| {
        anthropic::side_reply(request).or_else(|| Some(anthropic::text_turn("Done.")))
    });
    let url = server.url();
    let env = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("OPENAI_API_KEY", ""),
    ];
    let args = [
        "run",
        ".context-pilot/workflows/graph.yaml",
        "--max-restarts",
        "0",
    ];
    let mut tui = TuiSession::start(dir, &args, &env).unwrap();
    let deadline = Instant::now() + PATIENCE;
    while !run_completed(dir) {
        assert!(Instant::now() < deadline, "{}", tui.screen());
        std::thread::sleep(Duration::from_millis(100));
    }
    tui.send(b"\t");
    tui.send(b"]");
    // The row: `only builtin done <context>% <tokens> <time>`, no `–` left.
    tui.wait_until("the row shows context and tokens", PATIENCE, |s| {
        s.contains("Workflow finished.")
            && s.lines().any(|line| {
                let cells: Vec<&str> = line.split_whitespace().collect();
                cells.windows(5).any(|w| {
                    w[0].ends_with("only")
                        && w[2] == "done"
                        && w[3].ends_with('%')
                        && w[4].chars().next().is_some_and(|c| c.is_ascii_digit())
                })
            })
    })
    .unwrap();
    tui.send(b"\x03");
    assert_eq!(tui.wait_exit(PATIENCE).unwrap(), 0);
}
