//! End to end (issue 26): stopping a run of phases at once, and resuming it, headless with the
//! built-in agent against the scripted LLM server. Ctrl-C / SIGTERM stop the run gracefully
//! (exit 130, phases interrupted, nothing left running); `--resume` after those or SIGKILL,
//! headless or in the TUI, keeps every commit. A second Ctrl-C ends the run at once and still
//! leaves no process; `repeat_phase` while a dependent of its target runs stops that dependent
//! and keeps its branch as superseded.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::util::agent_run::shown;
use crate::util::phase_runs::{PATIENCE, command, prepare, run, start_tui};
use crate::util::phases::{
    FEATURE, Seen, anthropic_stall, assert_no_worktree_locked, assert_nothing_left, feature_script,
    marker, phase_branch_gone, read, run_record, serve, write,
};
use crate::util::processes::{descendants_of, running};
use cp_e2e::{LlmServer, anthropic, git};
use serde_json::Value;

/// Waits until `check` holds for the run's record.
fn wait_record(dir: &Path, child: &mut Child, check: impl Fn(&Value) -> bool) -> Value {
    cp_e2e::eventually_some("the awaited run record", PATIENCE, || {
        let record = run_record(dir).filter(&check);
        if record.is_none() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before the awaited state"
            );
        }
        record
    })
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

/// Resumes `run_id` in the TUI and waits for its end (the Phases panel says it); returns the
/// last screen.
fn resume_in_tui(dir: &Path, server: &LlmServer, run_id: &str) -> String {
    let args = ["run", "--resume", run_id, "--max-restarts", "0"];
    let mut tui = start_tui(dir, server, &args);
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
            return Some(anthropic_stall());
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
        cp_e2e::eventually(&format!("{phase}'s second request"), PATIENCE, || {
            seen.bodies(phase).len() >= 2 || {
                assert!(child.try_wait().unwrap().is_none(), "the run ended early");
                false
            }
        });
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
            return Some(anthropic_stall());
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
