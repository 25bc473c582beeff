//! Drives one invocation of an agent CLI: reads its stream, reports usage and tool calls to
//! the restart loop's [`SessionControl`], and stops it at a tool boundary when asked.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use cp_orchestrate::{SessionControl, SessionEnd, ToolRecord};

use crate::hook_report::ReportReader;
use crate::item::{Item, input_paths};
use crate::process::{AgentProcess, Next};
use crate::progress::{Progress, ProgressEvent};
use crate::session_log::SessionLog;
use crate::transcript::Transcript;
use crate::wired::{WiredCheck, unwired_message};
use cp_base::CancelToken;
use cp_base::text::fit_end;

/// How often the driver looks at the stop flag while the agent is quiet.
const POLL: Duration = Duration::from_millis(100);

/// Where the context window of the current model comes from, in order: config, the model
/// table, what the agent reported at the end of an earlier run.
#[derive(Debug, Clone, Default)]
pub struct WindowSource {
    /// `agent.context_window` from config.
    pub configured: Option<u64>,
    /// The model table of the agent (`model name → window`).
    pub table: Option<fn(&str) -> Option<u64>>,
    /// The window the agent reported in an earlier result.
    pub reported: Option<u64>,
}

impl WindowSource {
    /// The window for `model`, if anything knows it.
    pub fn window(&self, model: Option<&str>) -> Option<u64> {
        self.configured
            .or_else(|| model.and_then(|m| self.table.and_then(|table| table(m))))
            .or(self.reported)
    }
}

/// One invocation to drive.
pub struct Invocation<'a> {
    /// The started agent.
    pub process: AgentProcess,
    /// Parses one stdout line of this agent.
    pub parse: fn(&str) -> Vec<Item>,
    /// The agent's name for messages.
    pub agent: &'static str,
    /// Where usage and tool calls are reported; `None` for the handoff turn (it must not
    /// count towards the thresholds or the tool history).
    pub control: Option<&'a SessionControl>,
    /// The context window.
    pub window: &'a WindowSource,
    /// The project root, to make tool paths relative.
    pub root: &'a Path,
    /// Time the agent gets to exit after SIGINT.
    pub grace: Duration,
    /// Whether the person cancelled the turn (Esc in the TUI): the agent is interrupted at
    /// once, not at a tool boundary.
    pub cancel: Option<&'a CancelToken>,
    /// The verdicts of the hooks this invocation runs.
    pub reports: ReportReader,
    /// The session's conversation, which the agent's text, tool calls and results join.
    pub transcript: &'a mut Transcript,
    /// Whether the agent must prove at its first response that it loaded the MCP server and
    /// the hooks (see [`crate::wired`]).
    pub check_wiring: bool,
    /// The agent's own record of the session, when its prompt sizes are found there.
    pub log: Option<SessionLog>,
}

/// What an invocation gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// How it ended.
    pub end: SessionEnd,
    /// The session id the agent reported.
    pub session_id: Option<String>,
    /// The window the agent reported in its result.
    pub reported_window: Option<u64>,
}

/// The driver's state while the stream runs.
#[derive(Default)]
struct Watch {
    seen_messages: HashSet<String>,
    in_flight: HashSet<String>,
    /// True right after the last tool call in flight finished (a safe point to stop).
    at_boundary: bool,
    stopping_since: Option<Instant>,
    result: Option<(bool, String)>,
    session_id: Option<String>,
    model: Option<String>,
    reported_window: Option<u64>,
    /// The person cancelled the turn.
    cancelled: bool,
    /// A response's prompt size a hook reported (Gemini CLI's `AfterModel`), held until the
    /// response's text has streamed: the hook runs before the agent prints the last piece.
    held_usage: Option<Item>,
    /// The proofs of the wiring so far.
    wired: WiredCheck,
    /// What the agent did not load, found at its first response: the run is stopped.
    unwired: Option<&'static str>,
}

/// Runs `inv` to its end, reporting each event to `progress`.
pub fn drive(mut inv: Invocation<'_>, progress: &mut Progress) -> Outcome {
    let mut watch = Watch::default();
    loop {
        let next = inv.process.next_line(POLL);
        // A hook has finished before the agent goes on: its verdict comes before the line.
        for item in inv.reports.read_new() {
            take_report(&mut inv, &mut watch, item, progress);
        }
        read_log(&mut inv, &mut watch, progress);
        match next {
            Next::Line(line) => {
                for item in (inv.parse)(&line) {
                    if inv.check_wiring && is_response(&item) {
                        watch.unwired = watch.wired.missing();
                        if watch.unwired.is_some() {
                            break;
                        }
                    }
                    if !matches!(item, Item::Text(_)) {
                        release_usage(&mut inv, &mut watch, progress);
                    }
                    handle(&mut inv, &mut watch, item, progress);
                }
            }
            Next::Idle => {}
            Next::Closed => break,
        }
        if let Some(missing) = watch.unwired {
            tracing::warn!(agent = inv.agent, "the agent started without {missing}");
            break;
        }
        if watch.stopping_since.is_none() && inv.cancel.is_some_and(CancelToken::is_cancelled) {
            tracing::info!(agent = inv.agent, "the person cancelled the turn");
            inv.process.interrupt();
            watch.stopping_since = Some(Instant::now());
            watch.cancelled = true;
        }
        let stop = inv.control.is_some_and(SessionControl::stop_requested);
        if stop && watch.at_boundary && watch.stopping_since.is_none() {
            tracing::info!(
                agent = inv.agent,
                "interrupting the agent after its tool call"
            );
            progress(&ProgressEvent::Stopping);
            inv.process.interrupt();
            watch.stopping_since = Some(Instant::now());
        }
        if watch
            .stopping_since
            .is_some_and(|since| since.elapsed() >= inv.grace)
        {
            tracing::warn!(
                agent = inv.agent,
                "the agent ignored SIGINT; ending its process group"
            );
            break;
        }
    }
    let grace = if watch.stopping_since.is_some() || watch.unwired.is_some() {
        Duration::ZERO
    } else {
        inv.grace
    };
    let status = inv.process.finish(grace);
    // Whatever a hook reported as the agent exited.
    for item in inv.reports.read_new() {
        take_report(&mut inv, &mut watch, item, progress);
    }
    read_log(&mut inv, &mut watch, progress);
    release_usage(&mut inv, &mut watch, progress);
    let result = watch.result.take();
    let end = match (&watch.stopping_since, result) {
        _ if watch.unwired.is_some() => SessionEnd::Failed(unwired_message(
            inv.agent,
            watch.unwired.unwrap_or_default(),
            &inv.process.stderr_excerpt(),
        )),
        _ if watch.cancelled => SessionEnd::Failed(format!("{} was cancelled", inv.agent)),
        (Some(_), _) => SessionEnd::Stopped,
        (None, Some((true, _))) => SessionEnd::Completed,
        (None, Some((false, message))) => SessionEnd::Failed(
            api_refusal(inv.agent, &message)
                .unwrap_or_else(|| format!("{} reported an error: {message}", inv.agent)),
        ),
        (None, None) => SessionEnd::Failed(format!(
            "{} exited ({}) before finishing its turn: {}",
            inv.agent,
            status.map_or_else(|| "killed".to_owned(), |s| s.to_string()),
            fit_end(inv.process.stderr_excerpt().trim(), 2000)
        )),
    };
    Outcome {
        end,
        session_id: watch.session_id,
        reported_window: watch.reported_window,
    }
}

/// Whether `item` is the agent's response (its first one is where the wiring is checked); a
/// failed result is not: the agent's own error says more.
fn is_response(item: &Item) -> bool {
    matches!(
        item,
        Item::Text(_) | Item::ToolUse { .. } | Item::Result { ok: true, .. }
    )
}

/// A hook's report: a verdict now, a prompt size once the response's text has streamed.
fn take_report(inv: &mut Invocation<'_>, watch: &mut Watch, item: Item, progress: &mut Progress) {
    watch
        .wired
        .saw_report(matches!(item, Item::Wired { mcp: true }));
    if matches!(item, Item::Wired { .. }) {
        return;
    }
    release_usage(inv, watch, progress);
    if matches!(item, Item::Usage { .. }) {
        watch.held_usage = Some(item);
    } else {
        handle(inv, watch, item, progress);
    }
}

/// What the agent's session record says since the last look. A prompt size found there is
/// no new response starting (the record lags the stream): a tool boundary stays one.
fn read_log(inv: &mut Invocation<'_>, watch: &mut Watch, progress: &mut Progress) {
    let Some(items) = inv.log.as_mut().map(SessionLog::read_new) else {
        return;
    };
    for item in items {
        let at_boundary = watch.at_boundary;
        let keeps_boundary = matches!(item, Item::Usage { .. } | Item::Window(_));
        handle(inv, watch, item, progress);
        if keeps_boundary {
            watch.at_boundary = at_boundary;
        }
    }
}

/// Applies the prompt size a hook reported, once the response it belongs to is over.
fn release_usage(inv: &mut Invocation<'_>, watch: &mut Watch, progress: &mut Progress) {
    if let Some(item) = watch.held_usage.take() {
        handle(inv, watch, item, progress);
    }
}

fn handle(inv: &mut Invocation<'_>, watch: &mut Watch, item: Item, progress: &mut Progress) {
    match item {
        Item::Init { session_id, model } => {
            if let Some(log) = inv.log.as_mut() {
                log.saw_session(&session_id);
            }
            progress(&ProgressEvent::SessionStarted {
                session_id: session_id.clone(),
            });
            watch.session_id = Some(session_id);
            watch.model = model.or(watch.model.take());
        }
        Item::Usage {
            message_id,
            prompt_tokens,
            model,
        } => usage(inv, watch, message_id, prompt_tokens, model, progress),
        Item::Text(text) => {
            watch.at_boundary = false;
            inv.transcript.text(&text);
            progress(&ProgressEvent::Text(text));
        }
        Item::ToolUse { id, name, input } => {
            watch.at_boundary = false;
            // Claude Code repeats a message's event per content block; a call still in flight
            // is the same call. (Ids may repeat across responses: Gemini's `call_0`.)
            if !watch.in_flight.insert(id.clone()) {
                return;
            }
            inv.transcript.tool_call(&name, &input);
            progress(&ProgressEvent::ToolCall {
                id: id.clone(),
                name: name.clone(),
                summary: fit_end(&input.to_string(), 100),
            });
            if let Some(control) = inv.control {
                let paths = input_paths(&input)
                    .into_iter()
                    .map(|p| relative(inv.root, &p));
                control.record_tool_call(ToolRecord::new(name, paths));
            }
        }
        Item::ToolResult { id, is_error, text } => {
            watch.in_flight.remove(&id);
            watch.at_boundary = watch.in_flight.is_empty();
            inv.transcript.tool_result(is_error, &text);
            progress(&ProgressEvent::ToolResult {
                id,
                is_error,
                summary: fit_end(text.lines().next().unwrap_or(""), 100),
                text,
            });
        }
        Item::Compacted => compacted(inv, watch, progress),
        Item::Hook {
            event,
            summary,
            detail,
        } => progress(&ProgressEvent::Hook {
            event,
            summary,
            detail,
        }),
        Item::Wired { .. } => {}
        Item::Window(window) => watch.reported_window = Some(window),
        Item::Result {
            ok,
            message,
            window,
        } => {
            watch.reported_window = window.or(watch.reported_window);
            watch.result = Some((ok, message));
        }
    }
}

/// One response's prompt size (once per message id), against the window.
fn usage(
    inv: &Invocation<'_>,
    watch: &mut Watch,
    message_id: Option<String>,
    prompt_tokens: u64,
    model: Option<String>,
    progress: &mut Progress,
) {
    watch.at_boundary = false;
    if let Some(id) = message_id
        && !watch.seen_messages.insert(id)
    {
        return;
    }
    if model.is_some() {
        watch.model = model;
    }
    let window = inv
        .window
        .window(watch.model.as_deref())
        .or(watch.reported_window);
    if let Some(control) = inv.control {
        control.record_usage(prompt_tokens, window.unwrap_or(0));
    }
    progress(&ProgressEvent::Usage {
        prompt_tokens,
        window,
    });
}

/// The agent compacted its context by itself: the window was full, a breach of the context
/// threshold.
fn compacted(inv: &Invocation<'_>, watch: &mut Watch, progress: &mut Progress) {
    progress(&ProgressEvent::Compacted);
    // Compaction happens between requests, with no tool in flight.
    watch.at_boundary = watch.in_flight.is_empty();
    if let Some(control) = inv.control {
        match inv
            .window
            .window(watch.model.as_deref())
            .or(watch.reported_window)
        {
            Some(window) => control.record_usage(window, window),
            None => control.request_stop(),
        }
    }
}

/// A plain account of an error the model's API returned, when the agent's error `message`
/// carries the API's JSON (`{"error": {"code": 400, "message": …, "status": …}}`, as Gemini
/// CLI reports `[API Error: …]`).
fn api_refusal(agent: &str, message: &str) -> Option<String> {
    let start = message.find('{')?;
    let end = message.rfind('}')?;
    let json: serde_json::Value = serde_json::from_str(message.get(start..=end)?).ok()?;
    let error = json.get("error")?;
    let code = error.get("code")?.as_u64()?;
    let status = error
        .get("status")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let said = error
        .get("message")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    Some(format!(
        "{agent}'s request was refused by the model's API (HTTP {code} {status}: {})",
        fit_end(said.trim(), 300)
    ))
}

/// `path` relative to `root` when it lies beneath it.
fn relative(root: &Path, path: &str) -> String {
    Path::new(path)
        .strip_prefix(root)
        .map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_error_the_agent_reports_reads_as_a_refusal() {
        let message = r#"[API Error: {"error":{"code":400,"message":"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.","status":"INVALID_ARGUMENT"}}]"#;
        assert_eq!(
            api_refusal("Gemini CLI", message).as_deref(),
            Some(
                "Gemini CLI's request was refused by the model's API (HTTP 400 \
                 INVALID_ARGUMENT: Please ensure that the number of function response parts \
                 is equal to the number of function call parts of the function call turn.)"
            )
        );
        assert_eq!(api_refusal("Gemini CLI", "error_max_turns"), None);
    }
}
