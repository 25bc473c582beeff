//! A day's session in the real binary: the TUI restored from a saved state of 100, 1,000 and
//! 10,000 conversation entries, then driven by the scripted model. Reports the time from start
//! to the first frame that shows the restored conversation, the host's time per request
//! (everything between two model requests: the tool batch, the saved state, the panels and
//! building the next request; the scripted model answers at once), and the TUI's CPU time per
//! request, which a busy machine does not inflate as it does the wall-clock time.

use std::path::Path;
use std::time::{Duration, Instant};

use cp_e2e::{LlmServer, TuiSession, anthropic};
use cp_llm::Message;
use cp_tui::SavedState;
use serde_json::json;

use super::Options;
use super::conversation::conversation;
use super::stats::{Row, fmt, ms};
use super::tui::cpu_secs;

const WAIT: Duration = Duration::from_secs(60);
/// The default worker, whose saved state `cp_e2e` reads.
const WORKER: &str = cp_e2e::DEFAULT_WORKER;

/// Writes a saved state of `entries` conversation entries, with the model history that goes
/// with them, where the TUI restores it from.
fn seed(root: &Path, entries: usize) {
    let conversation = conversation(entries);
    let mut messages = Vec::new();
    for i in 0..entries.div_ceil(3) {
        messages.push(Message::user_text(format!(
            "Step {i}: add the next check to the parser, please."
        )));
        messages.push(Message::assistant_text(format!(
            "Done with step {i}: the parser now rejects empty input, and `cargo test` passes."
        )));
    }
    let state = SavedState {
        version: 1,
        conversation,
        messages,
        ..SavedState::default()
    };
    let dir = root.join(".context-pilot/state").join(WORKER);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("session.json"),
        serde_json::to_vec(&state).unwrap(),
    )
    .unwrap();
}

fn start(opts: &Options, root: &Path, server: &LlmServer) -> TuiSession {
    let url = server.url();
    TuiSession::start_exe(
        &opts.exe,
        root,
        &[],
        &[
            ("ANTHROPIC_BASE_URL", url.as_str()),
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_API_KEY", ""),
        ],
    )
    .unwrap()
}

/// What one session gave: the restore time, the host time of each request, and the TUI's
/// CPU time per request.
struct Measured {
    restore: Vec<f64>,
    host: Vec<f64>,
    cpu: Vec<f64>,
    /// The last request's body, in KiB.
    body_kib: f64,
    /// Writing that body as JSON once (`serde_json::to_vec`), in ms: the part of a request's
    /// cost that the provider's body needs, whatever the host does around it.
    body_json: Vec<f64>,
}

/// Restore time, host time and CPU time per request for a session of `entries` entries.
fn measure(opts: &Options, entries: usize, turns: usize) -> Measured {
    let repo = cp_e2e::git_repo();
    let root = repo.path().canonicalize().unwrap();
    // The turns write under bench/, which git ignores: the stop gate has nothing to hold the
    // agent for, so each turn is two requests.
    std::fs::write(root.join(".gitignore"), "bench/\n").unwrap();
    cp_e2e::git(&root, &["add", "-A"]);
    cp_e2e::git(&root, &["commit", "-q", "-m", "ignore bench/"]);
    seed(&root, entries);
    let server = LlmServer::start().unwrap();
    // The last entry of the seeded conversation is on screen once it is restored.
    let last = entries - 1;
    let marker = match last % 3 {
        0 => format!("Step {last}:"),
        2 => format!("notes/n{last}.md"),
        _ => format!("step {last}"),
    };
    let started = Instant::now();
    let mut tui = start(opts, &root, &server);
    tui.wait_for(&marker, WAIT).unwrap();
    let restore = vec![ms(started.elapsed())];
    let pid = tui.pid().unwrap();
    // CPU time is counted from the end of the first turn, so what the restore left to do
    // after its first frame (laying out every entry's height) is not counted.
    let mut cpu_before = cpu_secs(pid);

    for turn in 0..turns {
        let args = json!({"file_path": format!("bench/t{turn}.md"), "content": "x\n"}).to_string();
        server.push(anthropic::tool_use_turn(&[(
            &format!("toolu_b{turn}"),
            "File_write",
            &args,
        )]));
        server.push(anthropic::text_turn(&format!("Wrote t{turn}.")));
        tui.type_text(&format!("write t{turn}"));
        tui.send(b"\r");
        server.wait_for_count(2 * (turn + 1), WAIT);
        // The turn is over once the state saved at its end holds the answer; the next message
        // starts a new turn.
        let answer = format!("Wrote t{turn}.");
        cp_e2e::wait_saved_session(&root, "the turn ended", WAIT, |s| {
            cp_e2e::last_assistant_message(s).is_some_and(|m| m.contains(&answer))
        })
        .unwrap();
        if turn == 0 {
            cpu_before = cpu_secs(pid);
        }
    }
    // All the TUI's threads, the turns' included; the machine's load does not change it.
    let cpu = vec![(cpu_secs(pid) - cpu_before) * 1_000.0 / (2 * (turns - 1)) as f64];
    let requests = server.requests();
    assert_eq!(requests.len(), 2 * turns, "two requests a turn");
    // Within a turn, the gap between the end of the reply with the tool call and the arrival
    // of the request that carries its result is all host time: the tool batch, the saved
    // state, the panels and the next request's body. The scripted server's own work (reading
    // the first request into JSON, writing its reply) happens before that gap, so it is not
    // counted against the host.
    let host: Vec<f64> = requests
        .chunks(2)
        .enumerate()
        .map(|(pair_index, pair)| {
            let replied = server
                .replied_at(2 * pair_index)
                .expect("the reply with the tool call was written");
            ms(pair[1].received.duration_since(replied))
        })
        .collect();
    let last = requests.last().expect("two requests a turn");
    let body_kib = last.raw_body.len() as f64 / 1024.0;
    let body_json = (0..5)
        .map(|_| {
            let started = Instant::now();
            let bytes = serde_json::to_vec(&last.body).unwrap();
            std::hint::black_box(bytes);
            ms(started.elapsed())
        })
        .collect();
    tui.send(b"\x03");
    tui.wait_exit(WAIT).unwrap();
    Measured {
        restore,
        host,
        cpu,
        body_kib,
        body_json,
    }
}

/// One size's rows, and its medians: (entries, restore, host, CPU, writing the body as JSON).
fn size_rows(entries: usize, measured: Measured) -> (Vec<Row>, (usize, f64, f64, f64, f64)) {
    let Measured {
        restore,
        host,
        cpu,
        body_kib,
        body_json,
    } = measured;
    let restore_row = Row::new(
        format!(
            "start to first frame, restoring {} entries",
            fmt(entries as f64)
        ),
        "ms",
        restore,
    )
    .note("the real binary in a PTY; until the last restored entry is on screen");
    let host_row = Row::new(
        format!("host time per request, {} entries", fmt(entries as f64)),
        "ms",
        host,
    )
    .note("reply with the tool call written → request with its result in: tool batch, saved state, panels, next request");
    let cpu_row = Row::new(
        format!("TUI CPU time per request, {} entries", fmt(entries as f64)),
        "ms",
        cpu,
    )
    .note("utime + stime of the TUI process (all threads) over the turns after the first, ÷ their requests; 10 ms ticks");
    let body_row = Row::new(
        format!("request body, {} entries", fmt(entries as f64)),
        "KiB",
        vec![body_kib],
    )
    .note("the last request's body as the provider receives it");
    let json_row = Row::new(
        format!(
            "baseline: writing that body as JSON once, {} entries",
            fmt(entries as f64)
        ),
        "ms",
        body_json,
    )
    .note(
        "serde_json::to_vec of the parsed body, in the bench process: what the body itself costs",
    );
    let medians = (
        entries,
        restore_row.median(),
        host_row.median(),
        cpu_row.median(),
        json_row.median(),
    );
    (
        vec![restore_row, host_row, cpu_row, body_row, json_row],
        medians,
    )
}

/// The rows: per size, restore time and host time per request; then the growth as ratios.
pub fn day_session(opts: &Options) -> Vec<Row> {
    let (sizes, turns): (&[usize], usize) = if opts.quick {
        (&[100, 300], 2)
    } else {
        (&[100, 1_000, 10_000], 10)
    };
    let mut rows = Vec::new();
    let mut medians = Vec::new();
    for &entries in sizes {
        let (size_rows, size_medians) = size_rows(entries, measure(opts, entries, turns));
        rows.extend(size_rows);
        medians.push(size_medians);
    }
    if let (Some(first), Some(last)) = (medians.first(), medians.last()) {
        rows.push(
            Row::new(
                format!(
                    "host time per request, {} ÷ {} entries",
                    fmt(last.0 as f64),
                    fmt(first.0 as f64)
                ),
                "×",
                vec![last.2 / first.2],
            )
            .note("the goal is at most 2×"),
        );
        rows.push(
            Row::new(
                format!(
                    "host time per request beyond writing its body, {} ÷ {} entries",
                    fmt(last.0 as f64),
                    fmt(first.0 as f64)
                ),
                "×",
                vec![(last.2 - last.4).max(0.0) / (first.2 - first.4).max(f64::EPSILON)],
            )
            .note("host time less the baseline of writing the body as JSON, at each size"),
        );
        rows.push(
            Row::new(
                format!(
                    "TUI CPU time per request, {} ÷ {} entries",
                    fmt(last.0 as f64),
                    fmt(first.0 as f64)
                ),
                "×",
                vec![last.3 / first.3],
            )
            .note("the host's own work, whatever the machine's load"),
        );
        rows.push(
            Row::new(
                format!(
                    "start to first frame, {} ÷ {} entries",
                    fmt(last.0 as f64),
                    fmt(first.0 as f64)
                ),
                "×",
                vec![last.1 / first.1],
            )
            .note("the goal is a first frame within 500 ms"),
        );
    }
    rows
}
