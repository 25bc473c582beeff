//! The driver over a fake Codex CLI: prompt sizes and the window come from its session file,
//! and a compaction it made by itself is a breach that stops it after the tool in flight.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cp_orchestrate::{ContextEstimator, RestartConfig, SessionControl, SessionEnd};
use serde_json::json;

use super::SPEC;
use crate::hook_report::ReportReader;
use crate::invocation::{Invocation, WindowSource, drive};
use crate::process::AgentProcess;
use crate::progress::{Progress, ProgressEvent};
use crate::session_log::SessionLog;

/// A fake `codex exec --json` under `home` (its `CODEX_HOME`): thread `t1` starts a command;
/// its session file says the request took 100 of 1,000 tokens, then that Codex compacted the
/// thread; the command ends, and it waits to be interrupted.
fn fake_codex(home: &Path) -> AgentProcess {
    let day = home.join("sessions/2026/11/26");
    let file = day.join("rollout-2026-11-26T10-00-00-t1.jsonl");
    let count = json!({"type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 100}, "model_context_window": 1000}}});
    let started = json!({"type": "item.started", "item": {"id": "item_1",
        "type": "command_execution", "command": "ls", "status": "in_progress"}});
    let done = json!({"type": "item.completed", "item": {"id": "item_1",
        "type": "command_execution", "command": "ls", "aggregated_output": "ok",
        "exit_code": 0, "status": "completed"}});
    let script = format!(
        "trap 'exit 130' INT\n\
         mkdir -p '{day}'\n\
         echo '{{\"type\":\"thread.started\",\"thread_id\":\"t1\"}}'\n\
         echo '{count}' >> '{file}'\n\
         echo '{started}'\n\
         sleep 0.3\necho '{{\"type\":\"compacted\",\"payload\":{{}}}}' >> '{file}'\n\
         sleep 0.3\necho '{done}'\n\
         while :; do sleep 0.05; done\n",
        day = day.display(),
        file = file.display(),
    );
    let mut command = Command::new("sh");
    command.args(["-c", &script]);
    AgentProcess::spawn(command, "sh".into()).unwrap()
}

#[test]
fn a_compaction_codex_made_is_a_breach_and_it_stops_after_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let control = SessionControl::new("p", 0, ContextEstimator::new(&RestartConfig::default()));
    let window = WindowSource::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let mut progress: Progress =
        Box::new(move |e: &ProgressEvent| sink.lock().unwrap().push(e.clone()));
    let env = vec![("CODEX_HOME".to_owned(), dir.path().display().to_string())];
    let log = SPEC
        .session_log
        .map(|spec| SessionLog::new(spec, env, None));
    let outcome = drive(
        Invocation {
            process: fake_codex(dir.path()),
            parse: SPEC.parse_line,
            agent: "fake",
            control: Some(&control),
            window: &window,
            root: dir.path(),
            cancel: None,
            grace: Duration::from_secs(60),
            reports: ReportReader::create(dir.path().join("reports.jsonl")).unwrap(),
            transcript: Box::leak(Box::default()),
            check_wiring: false,
            log,
        },
        &mut progress,
    );
    assert_eq!(outcome.end, SessionEnd::Stopped);
    assert_eq!(outcome.session_id.as_deref(), Some("t1"));
    assert_eq!(outcome.reported_window, Some(1000));
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|e| matches!(
            e,
            ProgressEvent::Usage {
                prompt_tokens: 100,
                window: Some(1000)
            }
        )),
        "{seen:?}"
    );
    let compacted = seen
        .iter()
        .position(|e| matches!(e, ProgressEvent::Compacted));
    let result = seen
        .iter()
        .position(|e| matches!(e, ProgressEvent::ToolResult { .. }));
    assert!(compacted.is_some() && compacted < result, "{seen:?}");
    assert!(control.trigger().is_some());
    assert_eq!(control.tool_history()[0].name, "Bash");
}
