//! The long-session check (`tests/it/tui_long_day.rs`) as a figure: the real binary restores
//! 2,000 turns (a question, a `File_write` call with its result and a short markdown answer
//! each), the scripted model drives one more turn, and the view goes 40 pages up and back.
//! The TUI's resident memory then, less that of the same session restored with no turns,
//! ÷ the turns, is what a turn of history costs for the rest of the day.

use std::time::Duration;

use cp_e2e::{LlmServer, TuiSession, anthropic};
use serde_json::json;

use super::Options;
use super::long_session;
use super::stats::{Row, fmt};

const WAIT: Duration = Duration::from_secs(90);
const PG_UP: &[u8] = b"\x1b[5~";
const PG_DOWN: &[u8] = b"\x1b[6~";

/// A figure of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
fn status_kib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// What one session measured: resident and peak memory at its end, and the size of the
/// saved state's logs, all in KiB.
struct Measured {
    rss: f64,
    peak: f64,
    logs: f64,
}

/// Restores `turns` turns, drives one more and scrolls 40 pages up and back (when there is
/// anything to scroll); then reads the TUI's memory.
fn measure(opts: &Options, turns: usize) -> Measured {
    let repo = cp_e2e::git_repo();
    let root = repo.path().canonicalize().unwrap();
    // The live turn writes under notes/, which git ignores: the stop gate has nothing to hold.
    std::fs::write(root.join(".gitignore"), "notes/\n").unwrap();
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-q", "-m", "ignore notes/"]);
    long_session::seed(&root, turns);

    let server = LlmServer::start().unwrap();
    let write = json!({"file_path": "notes/last.md", "content": "last\n"}).to_string();
    server.push(anthropic::tool_use_turn(&[(
        "toolu_last",
        "File_write",
        &write,
    )]));
    server.push(anthropic::text_turn("The last finding is noted too."));
    let url = server.url();
    let mut tui = TuiSession::start_exe(
        &opts.exe,
        &root,
        &[],
        &[
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_API_KEY", ""),
        ],
    )
    .unwrap();
    tui.wait_for("Conversation", WAIT).unwrap();
    tui.type_text("Note the last finding.");
    tui.send(b"\r");
    cp_e2e::wait_saved_session(&root, "the live turn ended", WAIT, |s| {
        cp_e2e::last_assistant_message(s)
            .is_some_and(|m| m.contains("The last finding is noted too."))
    })
    .unwrap();
    assert_eq!(server.requests().len(), 2, "a tool call and the answer");
    if turns > 0 {
        let pages = 40.min(turns / 4);
        for _ in 0..pages {
            tui.send(PG_UP);
        }
        let up = 10 * pages as u64;
        long_session::conversation_scroll(&root, "the pages up applied", WAIT, |n| n == up);
        for _ in 0..pages {
            tui.send(PG_DOWN);
        }
        long_session::conversation_scroll(&root, "the pages down applied", WAIT, |n| n == 0);
    }
    tui.wait_until("the end is shown", WAIT, |s| {
        s.contains("The last finding is noted too.")
    })
    .unwrap();
    let pid = tui.pid().unwrap();
    let rss = status_kib(pid, "VmRSS");
    let peak = status_kib(pid, "VmHWM");
    let state = cp_e2e::session_path(&root, cp_e2e::DEFAULT_WORKER);
    let dir = state.parent().unwrap();
    let logs: u64 = ["conversation.jsonl", "messages.jsonl"]
        .iter()
        .filter_map(|log| std::fs::metadata(dir.join(log)).ok())
        .map(|m| m.len())
        .sum();
    tui.send(b"\x03");
    tui.wait_exit(WAIT).unwrap();
    Measured {
        rss,
        peak,
        logs: logs as f64 / 1024.0,
    }
}

/// The rows: RSS per turn (and peak RSS per turn) over the restored turns, each round against
/// a session restored with none in the same round.
pub fn long_day(opts: &Options) -> Vec<Row> {
    let (turns, rounds) = if opts.quick { (100, 1) } else { (2_000, 5) };
    let (mut per_turn, mut peak_per_turn) = (Vec::new(), Vec::new());
    let (mut full, mut empty, mut logs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let none = measure(opts, 0);
        let day = measure(opts, turns);
        per_turn.push((day.rss - none.rss) / turns as f64);
        peak_per_turn.push((day.peak - none.peak) / turns as f64);
        full.push(day.rss / 1024.0);
        empty.push(none.rss / 1024.0);
        logs.push((day.logs - none.logs) / turns as f64);
    }
    let n = fmt(turns as f64);
    vec![
        Row::new(format!("TUI RSS per turn, {n} turns"), "KiB", per_turn).note(format!(
            "the long-session check: {n} turns restored, one more driven, 40 pages up and back; \
             VmRSS less that of the same session with none restored (same round), ÷ {n}; \
             the goal is at most 8 KB"
        )),
        Row::new(
            format!("TUI peak RSS per turn, {n} turns"),
            "KiB",
            peak_per_turn,
        )
        .note("VmHWM, the same way"),
        Row::new(format!("TUI RSS with {n} turns"), "MiB", full),
        Row::new("baseline: TUI RSS, no turns restored", "MiB", empty)
            .note("the same session, one live turn"),
        Row::new("reference: saved history per turn", "KiB", logs).note(
            "the saved state's logs (conversation and model messages, JSON), ÷ turns: \
             the history's own size",
        ),
    ]
}
