//! End to end (issue 26): `context-pilot run` of a workflow in the TUI, the built-in agent
//! against the scripted LLM server. The phases run at once and each phase's conversation shows
//! its tool calls (the Phases panel); a parallel phase's approval gate reviews (F3) its branch
//! against its base; Esc stops every running phase and leaves nothing behind; a phase run by
//! the TUI's own agent shows its context and tokens.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use crate::util::phase_runs::{PATIENCE, prepare, start_run_tui};
use crate::util::phases::{
    Script, Seen, TWO, anthropic_stall, assert_no_worktree_locked, assert_nothing_left, marker,
    run_record, serve, write,
};
use crate::util::processes::{descendants_of, processes_with, running};
use cp_e2e::{LlmServer, RecordedRequest, anthropic};
use serde_json::Value;

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
    let mut tui = start_run_tui(dir, &server);
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
    let record = cp_e2e::eventually_some_with(
        "the run to complete",
        PATIENCE,
        || Some(run_record(dir).unwrap()).filter(|r| r["status"] == "completed"),
        || format!("{:#}\n{}", run_record(dir).unwrap(), tui.screen()),
    );
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
        let Some(phase) = logged_phase(request, &log) else {
            return anthropic::side_reply(request);
        };
        let (open, opened) = &*held;
        // At the limit the reply goes out anyway; the test then says what is wrong.
        let _open = opened
            .wait_timeout_while(open.lock().unwrap(), PATIENCE, |open| !*open)
            .unwrap();
        if request.raw_body.contains("\"tool_result\"") {
            return Some(anthropic::text_turn("Done."));
        }
        let file = format!("{phase}.txt");
        let (name, args) = write(&file, &format!("{phase} was here\n"));
        Some(anthropic::tool_use_turn(&[(phase, name, args.as_str())]))
    });
    let mut tui = start_run_tui(dir, &server);
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
    cp_e2e::eventually_with(
        "the run to complete",
        PATIENCE,
        || run_record(dir).unwrap()["status"] == "completed",
        || tui.screen(),
    );
    // The TUI has the run's end (so Ctrl-C quits at once, with nothing running).
    // Each landed through the merge queue: merged, its tested merge under its row.
    tui.wait_until("both phases show merged", PATIENCE, |s| {
        row_shows(s, "api", "merged")
            && row_shows(s, "ui", "merged")
            && s.contains("↳ merged ")
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
    let mut tui = start_run_tui(dir, &server);
    // Both phases started their console and wait on their second request (the request log).
    for phase in ["api", "ui"] {
        assert!(
            seen.wait_requests(phase, 2, PATIENCE),
            "{phase}: {}",
            tui.screen()
        );
    }
    // Each phase's console runs its command (seen in /proc once its shell has started it).
    cp_e2e::eventually_with(
        "both phases' console commands",
        PATIENCE,
        || processes_with(&tag).len() == 2,
        || format!("{:?}", processes_with(&tag)),
    );
    let pid = i32::try_from(tui.pid().unwrap()).unwrap();
    let started: Vec<i32> = descendants_of(pid);
    // The phases' console servers and their commands.
    assert!(started.len() >= 4, "{started:?}");
    tui.send(b"\x1b");
    // The run records both phases as interrupted (and itself, to be resumed).
    cp_e2e::eventually_with(
        "the run and both phases recorded as interrupted",
        PATIENCE,
        || {
            let record = run_record(dir).unwrap();
            let stopped = ["api", "ui"]
                .iter()
                .all(|p| record["phase_runs"][p]["status"] == "interrupted");
            let ended = record["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("interrupted"));
            stopped && ended
        },
        || format!("{:#}\n{}", run_record(dir).unwrap(), tui.screen()),
    );
    // Nothing of the phases is left: their consoles' commands, console servers, git.
    let alive = || -> Vec<i32> { started.iter().copied().filter(|&p| running(p)).collect() };
    cp_e2e::eventually_with(
        "every process of the phases to end",
        PATIENCE,
        || processes_with(&tag).is_empty() && alive().is_empty(),
        || {
            let left = processes_with(&tag);
            format!("left running: {left:?} {:?}\n{}", alive(), tui.screen())
        },
    );
    assert_no_worktree_locked(dir);
    // The TUI is alive and takes keys: typed text shows on its input line, and Ctrl-C
    // quits at once (no run is left to ask about), with the run's code (130: interrupted,
    // to be resumed).
    tui.wait_for("Workflow interrupted", PATIENCE).unwrap();
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
        let Some(phase) = logged_phase(request, &log) else {
            return anthropic::side_reply(request);
        };
        if request.raw_body.contains("\"tool_result\"") {
            // The model never answers: the phase waits until it is stopped.
            return Some(anthropic_stall());
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
    let mut tui = start_run_tui(dir, &server);
    cp_e2e::eventually_with(
        "the run to complete",
        PATIENCE,
        || run_completed(dir),
        || tui.screen(),
    );
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

/// The phase of [`TWO`] `request` belongs to (its marker), the request recorded in `log`;
/// `None` for the agent's side calls.
fn logged_phase(request: &RecordedRequest, log: &Seen) -> Option<&'static str> {
    let phase = ["api", "ui"]
        .into_iter()
        .find(|p| request.raw_body.contains(&marker(p)))?;
    log.record(phase, &request.raw_body);
    Some(phase)
}
