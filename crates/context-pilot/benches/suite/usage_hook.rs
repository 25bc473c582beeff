//! Gemini CLI's `AfterModel` hook in the runs Context Pilot drives (`context-pilot
//! model-usage`): Gemini CLI runs it for every streamed chunk and waits for it, so its cost
//! is paid per chunk. Measured with a 200 KB payload (the hook gets the whole request each
//! time) against a bare `bash -c true` reading the same payload, interleaved.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;

use super::Options;
use super::stats::{Row, fmt, ms};

/// A chunk that ends a response, with a request of about `request_bytes`.
fn payload(request_bytes: usize) -> String {
    json!({
        "hook_event_name": "AfterModel",
        "session_id": "bench",
        "llm_request": {"model": "gemini-2.5-pro",
                        "messages": [{"role": "user", "content": "x".repeat(request_bytes)}]},
        "llm_response": {"text": "done",
            "candidates": [{"content": {"role": "model", "parts": ["done"]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 51_200, "candidatesTokenCount": 1,
                              "totalTokenCount": 51_201}},
    })
    .to_string()
}

/// Runs `command` with `input` on stdin to its end; returns the time in ms.
fn timed(mut command: Command, input: &[u8]) -> f64 {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A reader that stops early (`true`) closes the pipe: that is fine.
    let _ = child.stdin.take().unwrap().write_all(input);
    assert!(child.wait().unwrap().success());
    ms(started.elapsed())
}

pub fn usage_hook(opts: &Options) -> Vec<Row> {
    let rounds = if opts.quick { 3 } else { 50 };
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports.jsonl");
    std::fs::write(&reports, "").unwrap();
    let input = payload(200_000);
    let hook = |reports: &Path| {
        let mut command = Command::new(&opts.exe);
        command
            .arg("model-usage")
            .env(cp_agent_cli::HOOK_REPORT_ENV, reports);
        command
    };
    let baseline = || {
        let mut command = Command::new("bash");
        command.args(["-c", "cat > /dev/null"]);
        command
    };
    let (mut hook_ms, mut base_ms) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        hook_ms.push(timed(hook(&reports), input.as_bytes()));
        base_ms.push(timed(baseline(), input.as_bytes()));
    }
    let reported = std::fs::read_to_string(&reports).unwrap().lines().count();
    assert_eq!(reported, rounds, "one usage report per run");
    let hook_row = Row::new(
        "Gemini usage hook (`model-usage`) per streamed chunk, 200 KB payload",
        "ms",
        hook_ms,
    );
    let base_row = Row::new(
        "baseline: `bash -c 'cat > /dev/null'` on the same payload",
        "ms",
        base_ms,
    );
    let above = hook_row.median() - base_row.median();
    vec![
        hook_row.note(format!("{} ms above the baseline (medians)", fmt(above))),
        base_row,
    ]
}
