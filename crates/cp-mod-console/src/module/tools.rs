//! The console tools, as data: name, description (written for the model), JSON Schema, and
//! handler. Anything that waits runs deferred, with the module released.

use std::sync::Arc;
use std::time::Duration;

use cp_base::{Args, CancelToken, Tool, ToolEnv, ToolOutcome, ToolResult, ToolTable, now_ms};
use serde_json::{Value, json};

use super::cancellable::{Waited, wait_in_rounds};
use super::consoles::ConsoleModule;
use super::fenced;
use super::keys::decode_keys;
use super::tool_args::{
    Step, client_for, command_arg, condition_args, console_arg, cwd_arg, fail, max_wait_arg,
};
use super::watch::{Watch, start_watch};
use crate::client::ConsoleHandle;
use crate::console_info::{ConsoleInfo, ConsoleStatus, SpawnSpec};
use crate::terminal::terminal_text;

/// Lines of output a wait result shows.
const RESULT_LINES: usize = 20;
/// The label of `console_easy_bash` consoles (their panels close once they pass).
pub(super) const EASY_BASH_LABEL: &str = "easy_bash";
/// Characters of output `console_easy_bash` returns inline.
pub(super) const INLINE_LIMIT: usize = 8000;
/// Lines shown when the output is too long to inline.
const OVERFLOW_LINES: usize = 40;

type Handler = fn(&mut ConsoleModule, &Value, &ToolEnv) -> ToolOutcome;

/// The console tools: what the model sees, and the function that runs each.
pub(super) static TOOLS: ToolTable<Handler> = ToolTable::new(&[
    Tool {
        name: "console_create",
        description: "Start a shell command in a new console (a terminal that keeps running in \
            the background and survives host restarts) and open its panel. Use it for servers, \
            watchers, long builds and interactive programs. The result starts with the console \
            id; pass it to console_wait, console_watch, console_send_keys and console_kill. \
            Example: {\"command\": \"cargo watch -x test\", \"cwd\": \".\", \"description\": \"tests on save\"}",
        schema: create_schema,
        handler: create,
    },
    Tool {
        name: "console_send_keys",
        description: "Type into a running console. Escapes: \\n newline, \\r carriage return \
            (Enter in full-screen programs), \\t tab, \\e escape (\\e[A arrow up, \\e[B down, \
            \\e[C right, \\e[D left), \\xHH any byte (\\x03 Ctrl-C, \\x04 Ctrl-D), \\\\ a \
            backslash; other backslashes are sent as typed. \
            Example: {\"id\": \"<console id>\", \"input\": \"yes\\n\"}",
        schema: send_keys_schema,
        handler: send_keys,
    },
    Tool {
        name: "console_wait",
        description: "Wait until a console exits (mode \"exit\") or its output matches a regex \
            (mode \"pattern\"; multi-line, so ^ and $ match at line ends; a pattern that is not a \
            valid regex is matched as literal text), for at most max_wait seconds (1-600, \
            default 30). Returns whether the condition was met and the last lines of output. \
            Example: {\"id\": \"<console id>\", \"mode\": \"pattern\", \"pattern\": \"Listening on\", \"max_wait\": 60}",
        schema: wait_schema,
        handler: wait,
    },
    Tool {
        name: "console_watch",
        description: "Like console_wait, but returns at once; you get a notification when the \
            console exits (mode \"exit\") or its output matches the pattern (mode \"pattern\"). \
            Example: {\"id\": \"<console id>\", \"mode\": \"exit\"}",
        schema: watch_schema,
        handler: watch,
    },
    Tool {
        name: "console_kill",
        description: "Stop a console: its whole process group gets SIGTERM, then SIGKILL after a \
            grace period, so background children die too. Example: {\"id\": \"<console id>\"}",
        schema: kill_schema,
        handler: kill,
    },
    Tool {
        name: "console_easy_bash",
        description: "Run a short shell command to completion and get its exit code and output \
            (up to 8000 characters inline; longer output is cut to its end and kept in a console \
            panel). The whole process group is killed after 10 seconds; use console_create for \
            anything longer. Example: {\"command\": \"ls -la src\", \"cwd\": \".\"}",
        schema: easy_bash_schema,
        handler: easy_bash,
    },
]);

fn id_param() -> Value {
    json!({"type": "string", "description": "Console id, as returned by console_create.",
           "examples": ["1b4e28ba-2fa1-41d2-883f-0016d3cca427"]})
}

fn cwd_param() -> Value {
    json!({"type": "string", "description": "Working directory inside the project, relative to \
           the project root or absolute. Default: the project root.", "examples": ["."]})
}

fn mode_param() -> Value {
    json!({"type": "string", "enum": ["exit", "pattern"],
           "description": "exit: until the command ends; pattern: until the output matches."})
}

fn pattern_param() -> Value {
    json!({"type": "string", "description": "Regex (literal text if not a valid regex); \
           required when mode is pattern.", "examples": ["Listening on \\d+"]})
}

fn create_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["command"],
    "properties": {
        "command": {"type": "string", "minLength": 1, "description": "Shell command, run with bash -c.",
                    "examples": ["npm run dev"]},
        "cwd": cwd_param(),
        "description": {"type": "string", "description": "What it is for, shown in the panel."}
    }})
}

fn send_keys_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["id", "input"],
        "properties": {"id": id_param(),
            "input": {"type": "string", "description": "Text to type, with escapes.", "examples": ["q\\n"]}}})
}

fn wait_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["id", "mode"],
        "properties": {"id": id_param(), "mode": mode_param(), "pattern": pattern_param(),
            "max_wait": {"type": "number", "minimum": 1, "maximum": 600,
                         "description": "Seconds to wait at most (default 30).", "examples": [60]}}})
}

fn watch_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["id", "mode"],
        "properties": {"id": id_param(), "mode": mode_param(), "pattern": pattern_param()}})
}

fn kill_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["id"],
        "properties": {"id": id_param()}})
}

fn easy_bash_schema() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["command"],
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "Shell command, run with bash -c.",
                        "examples": ["git status --short"]},
            "cwd": cwd_param()}})
}

fn runtime(info: &ConsoleInfo) -> String {
    let d = info.runtime(now_ms());
    format!("{:.1}s", d.as_secs_f64())
}

fn run<T>(step: impl FnOnce() -> Step<T>, done: impl FnOnce(T) -> ToolOutcome) -> ToolOutcome {
    match step() {
        Ok(v) => done(v),
        Err(result) => result.into(),
    }
}

fn create(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_create";
    let args = Args::new(TOOL, args);
    run(
        || {
            let command = command_arg(TOOL, &args)?;
            let cwd = cwd_arg(TOOL, &args, env)?;
            let mut spec = SpawnSpec::new(command, cwd).label("console");
            if let Some(d) = args
                .opt_str("description")?
                .filter(|d| !d.trim().is_empty())
            {
                spec = spec.description(d);
            }
            let client = client_for(TOOL, module, env)?;
            let handle = client.spawn(spec.clone()).map_err(|e| fail(TOOL, e))?;
            let panel = module
                .ensure_panel(&handle, &env.notifier)
                .map_err(|e| fail(TOOL, e))?;
            env.notifier.open_panel(panel.clone());
            Ok((handle.id(), spec, panel))
        },
        |(id, spec, panel)| {
            ToolResult::ok(format!(
                "{id}\nConsole started: `{}` in {} (panel {panel}). Wait for it with \
                 console_wait or console_watch, type into it with console_send_keys, stop it \
                 with console_kill.",
                spec.command,
                spec.cwd.display()
            ))
            .into()
        },
    )
}

fn send_keys(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_send_keys";
    let args = Args::new(TOOL, args);
    run(
        || {
            let handle = console_arg(TOOL, module, &args, env)?;
            let bytes =
                decode_keys(args.str("input")?).map_err(|e| fail(TOOL, format!("'input': {e}")))?;
            handle.send(&bytes).map_err(|e| fail(TOOL, e))?;
            Ok((handle.id(), bytes.len()))
        },
        |(id, n)| ToolResult::ok(format!("Sent {n} bytes to console {id}.")).into(),
    )
}

fn wait(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_wait";
    let args = Args::new(TOOL, args);
    run(
        || {
            let handle = console_arg(TOOL, module, &args, env)?;
            let (pattern, note) = condition_args(TOOL, &args)?;
            let limit = max_wait_arg(TOOL, &args)?;
            Ok((handle, pattern, note, limit))
        },
        |(handle, pattern, note, limit)| {
            let cancel = env.cancel.clone();
            ToolOutcome::Deferred(Box::new(move || {
                wait_result(
                    &handle,
                    (pattern.as_deref(), note.as_deref()),
                    limit,
                    &cancel,
                )
            }))
        },
    )
}

/// `condition` is the pattern and the note; Esc (`cancel`) ends the wait early, leaving the
/// console running.
fn wait_result(
    handle: &ConsoleHandle,
    condition: (Option<&str>, Option<&str>),
    limit: Duration,
    cancel: &CancelToken,
) -> ToolResult {
    const TOOL: &str = "console_wait";
    let (pattern, note) = condition;
    let waited = wait_in_rounds(limit, cancel, |round| match pattern {
        None => handle.wait_exit(round),
        Some(p) => handle.wait_pattern(p, round),
    });
    let Waited { outcome, cancelled } = match waited {
        Ok(w) => w,
        Err(e) => return fail(TOOL, e),
    };
    let tail = handle.tail(RESULT_LINES).unwrap_or_default();
    let id = handle.id();
    let info = &outcome.info;
    let head = match (pattern, outcome.met) {
        (_, false) if cancelled => format!(
            "Wait cancelled by the user (Esc): console {id} is {}; it was left running.",
            info.status
        ),
        (None, true) => format!(
            "Condition met: console {id} {} after {}.",
            info.status,
            runtime(info)
        ),
        (Some(p), true) => format!(
            "Condition met: the output of console {id} matches `{p}` (console {}).",
            info.status
        ),
        (_, false) if outcome.timed_out() => format!(
            "Condition NOT met within {}s: console {id} is still running.",
            limit.as_secs()
        ),
        (Some(p), false) => format!(
            "Condition NOT met: console {id} {} without output matching `{p}`.",
            info.status
        ),
        (None, false) => format!("Condition NOT met: console {id} is {}.", info.status),
    };
    let note = note.map(|n| format!("\n{n}")).unwrap_or_default();
    ToolResult::ok(format!("{head}{note}\nLast lines:\n{}", fenced(&tail)))
}

fn watch(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_watch";
    let args = Args::new(TOOL, args);
    run(
        || {
            let handle = console_arg(TOOL, module, &args, env)?;
            let (pattern, note) = condition_args(TOOL, &args)?;
            let watch = Watch {
                console: handle.id(),
                pattern,
            };
            let key = module.add_watch(watch.clone());
            let what = match &watch.pattern {
                None => "exits".to_owned(),
                Some(p) => format!("prints output matching `{p}`"),
            };
            start_watch(
                handle.clone(),
                watch,
                key,
                Arc::clone(&module.watches),
                env.notifier.clone(),
            );
            Ok((handle.id(), what, note))
        },
        |(id, what, note)| {
            let note = note.map(|n| format!("\n{n}")).unwrap_or_default();
            ToolResult::ok(format!(
                "Watching console {id}: you will be notified when it {what}.{note}"
            ))
            .into()
        },
    )
}

fn kill(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_kill";
    let args = Args::new(TOOL, args);
    run(
        || console_arg(TOOL, module, &args, env),
        |handle| {
            ToolOutcome::Deferred(Box::new(move || {
                let before = match handle.info() {
                    Ok(info) => info,
                    Err(e) => return fail(TOOL, e),
                };
                let id = handle.id();
                if !before.status.is_running() {
                    return ToolResult::ok(format!(
                        "Console {id} had already ended ({}); nothing to kill.",
                        before.status
                    ));
                }
                match handle.kill() {
                    Ok(info) => ToolResult::ok(format!(
                        "Console {id} {}: its whole process group got SIGTERM (then SIGKILL \
                         after the grace period) and was reaped.\nLast lines:\n{}",
                        info.status,
                        fenced(&handle.tail(RESULT_LINES).unwrap_or_default())
                    )),
                    Err(e) => fail(TOOL, e),
                }
            }))
        },
    )
}

fn easy_bash(module: &mut ConsoleModule, args: &Value, env: &ToolEnv) -> ToolOutcome {
    const TOOL: &str = "console_easy_bash";
    let args = Args::new(TOOL, args);
    let limit = module.easy_timeout;
    run(
        || {
            let command = command_arg(TOOL, &args)?;
            let cwd = cwd_arg(TOOL, &args, env)?;
            let client = client_for(TOOL, module, env)?;
            let spec = SpawnSpec::new(command, cwd)
                .label(EASY_BASH_LABEL)
                .timeout(limit);
            let handle = client.spawn(spec).map_err(|e| fail(TOOL, e))?;
            let panel = module
                .ensure_panel(&handle, &env.notifier)
                .map_err(|e| fail(TOOL, e))?;
            Ok((handle, panel))
        },
        |(handle, panel)| {
            let cancel = env.cancel.clone();
            ToolOutcome::Deferred(Box::new(move || {
                easy_bash_result(&handle, &panel, limit, &cancel)
            }))
        },
    )
}

/// Esc (`cancel`) kills the command's process group.
fn easy_bash_result(
    handle: &ConsoleHandle,
    panel: &str,
    limit: Duration,
    cancel: &CancelToken,
) -> ToolResult {
    const TOOL: &str = "console_easy_bash";
    // The server enforces the limit; the margin only guards against a server that vanished.
    let waited = wait_in_rounds(limit + Duration::from_secs(15), cancel, |round| {
        handle.wait_exit(round)
    });
    let (mut info, cancelled) = match waited {
        Ok(w) => (w.outcome.info, w.cancelled),
        Err(e) => return fail(TOOL, e),
    };
    if cancelled {
        match handle.kill() {
            Ok(killed) => info = killed,
            Err(e) => return fail(TOOL, e),
        }
    }
    let head = match &info.status {
        ConsoleStatus::Killed { .. } if cancelled => {
            "cancelled by the user (Esc): the whole process group was killed.".to_owned()
        }
        ConsoleStatus::Exited { code } => format!("exit code {code} ({})", runtime(&info)),
        ConsoleStatus::Killed { .. } => format!(
            "timed out after {}s: the whole process group was killed. For longer commands use \
             console_create.",
            limit.as_secs()
        ),
        other => format!("{other} ({})", runtime(&info)),
    };
    let mut bytes = Vec::new();
    let mut offset = 0;
    while let Ok(chunk) = handle.read_since(offset) {
        if chunk.bytes.is_empty() || bytes.len() > 4 * INLINE_LIMIT {
            break;
        }
        offset = chunk.next_offset;
        bytes.extend(chunk.bytes);
    }
    let text = terminal_text(&bytes, (info.rows, info.cols));
    let text = text.trim_end();
    if text.len() <= INLINE_LIMIT && offset >= info.output_len {
        return ToolResult::ok(format!("{head}\n{}", fenced(text)));
    }
    let tail = handle.tail(OVERFLOW_LINES).unwrap_or_default();
    ToolResult::ok(format!(
        "{head}\nThe output is {} bytes, too long to show here; its last {OVERFLOW_LINES} \
         lines follow. The full output is in panel {panel} (log {}).\n{}",
        info.output_len,
        handle.log_path().display(),
        fenced(&tail)
    ))
}
