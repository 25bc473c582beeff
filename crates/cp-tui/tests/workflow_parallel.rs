//! End to end (issue 26): `context-pilot run --headless` on a workflow with `depends_on`, the
//! built-in agent against the scripted LLM server. Phases ready together run at once (their
//! requests are in flight together), each in its own worktree; their branches are merged;
//! a dependent starts as soon as its dependency is merged, while another phase still runs;
//! a conflict exits 3 with a clean tree; Ctrl-C / SIGTERM stop the run gracefully (exit 130,
//! phases interrupted, nothing left running); `--resume` after those or SIGKILL keeps every
//! commit; a phase whose context fills restarts alone, in its own worktree.
//! In the TUI too: the phases run at once, a parallel phase's approval gate reviews (F3)
//! its branch against its base, and a killed run resumes there.
//!
//! The phases run at once, so their requests interleave: the server answers by phase (each
//! prompt carries a marker, `util::phases`), not from one queue.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

mod util;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, TuiSession, anthropic, git, git_repo};
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
    assert_nothing_left(dir, "");
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
    assert_nothing_left(dir, "");
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
    assert_nothing_left(dir, "");
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
    assert_nothing_left(dir, "");
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
