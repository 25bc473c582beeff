//! The driver over a fake Claude Code stream: where it stops, what it counts.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cp_orchestrate::{ContextEstimator, RestartConfig, SessionControl, SessionEnd};

use super::stream::parse_line;
use crate::hook_report::{HOOK_REPORT_ENV, ReportReader};
use crate::invocation::{Invocation, WindowSource, drive};
use crate::process::AgentProcess;
use crate::progress::{Progress, ProgressEvent};

/// A fake Claude Code: one response at 95 % that writes a file (its event repeated, as
/// Claude Code repeats a message per content block), its hook's verdict reported to
/// `$CP_HOOK_REPORT`, the tool's result after a pause, then it waits to be interrupted.
/// `mark` records whether SIGINT came before or after the tool result.
fn fake_claude(root: &Path, mark: &Path, reports: &ReportReader) -> AgentProcess {
    let assistant = serde_json::json!({"type": "assistant", "message": {"id": "m1",
        "model": "claude-x", "usage": {"input_tokens": 95},
        "content": [{"type": "tool_use", "id": "t1", "name": "Write",
                     "input": {"file_path": root.join("src/a.rs")}}]}});
    let result = serde_json::json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "written"}]}});
    let script = format!(
        "phase=before\n\
         trap 'echo $phase > {mark}; echo {{\\\"type\\\":\\\"result\\\",\\\"subtype\\\":\\\"error_during_execution\\\",\\\"is_error\\\":true}}; exit 130' INT\n\
         echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}}'\n\
         echo '{assistant}'\necho '{assistant}'\n\
         sleep 0.2\necho '{hook}' >> \"$CP_HOOK_REPORT\"\n\
         sleep 0.3\nphase=after\necho '{result}'\n\
         while :; do sleep 0.05; done\n",
        mark = mark.display(),
        hook = serde_json::json!({"event": "PostToolUse", "verdict": "context",
            "text": "Callback lint passed"}),
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", &script])
        .env(HOOK_REPORT_ENV, reports.path());
    AgentProcess::spawn(command, "sh".into()).unwrap()
}

/// An invocation of `process` in `root`: no stop control, no cancel, a long grace.
fn invocation<'a>(
    process: AgentProcess,
    root: &'a Path,
    window: &'a WindowSource,
    reports: ReportReader,
) -> Invocation<'a> {
    Invocation {
        process,
        parse: parse_line,
        agent: "fake",
        control: None,
        window,
        root,
        cancel: None,
        grace: Duration::from_secs(60),
        reports,
        // A test's transcript lives as long as the test process.
        transcript: Box::leak(Box::default()),
        check_wiring: false,
        log: None,
    }
}

/// A progress sink that records every event.
fn recording() -> (Arc<Mutex<Vec<ProgressEvent>>>, Progress) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let progress: Progress =
        Box::new(move |e: &ProgressEvent| sink.lock().unwrap().push(e.clone()));
    (seen, progress)
}

#[test]
fn a_threshold_stops_the_agent_only_after_the_tool_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    let control = SessionControl::new("p", 0, ContextEstimator::new(&RestartConfig::default()));
    let window = WindowSource {
        configured: Some(100),
        ..WindowSource::default()
    };
    let (seen, mut progress) = recording();
    let reports = ReportReader::create(dir.path().join("reports.jsonl")).unwrap();
    let process = fake_claude(dir.path(), &mark, &reports);
    let outcome = drive(
        Invocation {
            control: Some(&control),
            ..invocation(process, dir.path(), &window, reports)
        },
        &mut progress,
    );
    assert_eq!(outcome.end, SessionEnd::Stopped);
    assert_eq!(outcome.session_id.as_deref(), Some("s1"));
    assert_eq!(std::fs::read_to_string(&mark).unwrap().trim(), "after");
    let seen = seen.lock().unwrap();
    let usages = seen
        .iter()
        .filter(|e| matches!(e, ProgressEvent::Usage { .. }))
        .count();
    assert_eq!(usages, 1, "one response, reported once: {seen:?}");
    // The hook's verdict shows between the tool call that fired it and the call's result.
    let position = |wanted: fn(&ProgressEvent) -> bool| seen.iter().position(wanted);
    let call = position(|e| matches!(e, ProgressEvent::ToolCall { .. }));
    let hook = position(|e| {
        matches!(e, ProgressEvent::Hook { event, detail, .. }
            if event == "PostToolUse" && detail == "Callback lint passed")
    });
    let result = position(|e| matches!(e, ProgressEvent::ToolResult { .. }));
    assert!(call < hook && hook < result && hook.is_some(), "{seen:?}");
    let history = control.tool_history();
    assert_eq!(
        history.len(),
        1,
        "a repeated event is one call: {history:?}"
    );
    assert_eq!(history[0].paths, ["src/a.rs"]);
    assert!(control.trigger().is_some());
}

#[test]
fn a_cancelled_turn_interrupts_the_agent_without_a_stop_request() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    let window = WindowSource::default();
    let cancel = cp_base::CancelToken::new();
    let esc = cancel.clone();
    // The person presses Esc as soon as the agent's tool call shows.
    let mut progress: Progress = Box::new(move |e: &ProgressEvent| {
        if matches!(e, ProgressEvent::ToolCall { .. }) {
            esc.cancel();
        }
    });
    let reports = ReportReader::create(dir.path().join("reports.jsonl")).unwrap();
    let process = fake_claude(dir.path(), &mark, &reports);
    let outcome = drive(
        Invocation {
            cancel: Some(&cancel),
            ..invocation(process, dir.path(), &window, reports)
        },
        &mut progress,
    );
    assert_eq!(outcome.end, SessionEnd::Failed("fake was cancelled".into()));
    // The agent got SIGINT (its trap wrote the mark) although no stop was requested and the
    // fake never ends by itself.
    assert!(mark.exists());
}

#[test]
fn a_prompt_size_a_hook_reports_lands_after_the_text_of_its_response() {
    let dir = tempfile::tempdir().unwrap();
    let reports = ReportReader::create(dir.path().join("reports.jsonl")).unwrap();
    // As Gemini CLI does: the hook of the response's last chunk runs before that chunk's
    // text is printed.
    let text = |t: &str| serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": t}]}});
    let usage = serde_json::json!({"event": "AfterModel", "verdict": "usage", "prompt_tokens": 42});
    let result = serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"});
    let script = format!(
        "echo '{first}'\nsleep 0.2\necho '{usage}' >> \"$CP_HOOK_REPORT\"\nsleep 0.2\necho '{last}'\necho '{result}'\n",
        first = text("Hello, "),
        last = text("world."),
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", &script])
        .env(HOOK_REPORT_ENV, reports.path());
    let (seen, mut progress) = recording();
    let window = WindowSource::default();
    let process = AgentProcess::spawn(command, "sh".into()).unwrap();
    let outcome = drive(
        invocation(process, dir.path(), &window, reports),
        &mut progress,
    );
    assert_eq!(outcome.end, SessionEnd::Completed);
    let seen = seen.lock().unwrap();
    let kinds: Vec<&str> = seen
        .iter()
        .map(|e| match e {
            ProgressEvent::Text(_) => "text",
            ProgressEvent::Usage {
                prompt_tokens: 42, ..
            } => "usage",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["text", "text", "usage"], "{seen:?}");
}

/// A fake agent that writes `stderr`, reports `wired` (report lines) before its first
/// response, prints a text, then a result after `linger` seconds.
fn fake_wired_agent(
    reports: &ReportReader,
    wired: &[serde_json::Value],
    stderr: &str,
    linger: u32,
) -> AgentProcess {
    let text = serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Hello."}]}});
    let result = serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"});
    let reports_lines = wired
        .iter()
        .map(|report| format!("echo '{report}' >> \"$CP_HOOK_REPORT\""))
        .chain(std::iter::once(String::new()))
        .collect::<Vec<_>>()
        .join("\n");
    let script = format!(
        "echo '{stderr}' >&2\n{reports_lines}echo '{text}'\nsleep {linger}\necho '{result}'\n"
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", &script])
        .env(HOOK_REPORT_ENV, reports.path());
    AgentProcess::spawn(command, "sh".into()).unwrap()
}

#[test]
fn an_agent_that_loaded_no_mcp_server_is_stopped_at_its_first_response_with_its_warning() {
    let dir = tempfile::tempdir().unwrap();
    let reports = ReportReader::create(dir.path().join("reports.jsonl")).unwrap();
    let hook = serde_json::json!({"event": "BeforeAgent", "verdict": "wired"});
    let warning = "Security Warning: Skipping system settings file: is not owned by root";
    // It would go on for a minute: the driver must not wait for that.
    let process = fake_wired_agent(&reports, &[hook], warning, 60);
    let control = SessionControl::new("p", 0, ContextEstimator::new(&RestartConfig::default()));
    let window = WindowSource::default();
    let (seen, mut progress) = recording();
    let started = std::time::Instant::now();
    let outcome = drive(
        Invocation {
            control: Some(&control),
            check_wiring: true,
            ..invocation(process, dir.path(), &window, reports)
        },
        &mut progress,
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the agent was not stopped"
    );
    let SessionEnd::Failed(message) = outcome.end else {
        panic!("{:?}", outcome.end);
    };
    assert!(
        message.contains("fake started without Context Pilot's MCP server"),
        "{message}"
    );
    assert!(message.contains(warning), "{message}");
    assert!(
        !seen
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ProgressEvent::Text(_))),
        "the unwired response is not shown as the agent's"
    );
}

#[test]
fn an_agent_that_proved_its_wiring_runs_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let reports = ReportReader::create(dir.path().join("reports.jsonl")).unwrap();
    let wired = [
        serde_json::json!({"event": "mcp", "verdict": "wired"}),
        serde_json::json!({"event": "UserPromptSubmit", "verdict": "wired"}),
    ];
    let process = fake_wired_agent(&reports, &wired, "", 0);
    let control = SessionControl::new("p", 0, ContextEstimator::new(&RestartConfig::default()));
    let window = WindowSource::default();
    let (_seen, mut progress) = recording();
    let outcome = drive(
        Invocation {
            control: Some(&control),
            check_wiring: true,
            ..invocation(process, dir.path(), &window, reports)
        },
        &mut progress,
    );
    assert_eq!(outcome.end, SessionEnd::Completed);
}
