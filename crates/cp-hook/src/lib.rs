//! `context-pilot hook <event>`: the hook receiver for Claude Code, Gemini CLI and Codex CLI.
//!
//! | event | agent | what it does |
//! |---|---|---|
//! | `post-tool-use` | Claude Code `PostToolUse` (`Write`, `Edit`, `MultiEdit`, `NotebookEdit`, `Bash`), before 2.1.118 | fires callbacks |
//! | `post-tool-batch` | Claude Code `PostToolBatch`, from 2.1.118 | fires callbacks once for the whole batch |
//! | `after-tool` | Gemini CLI `AfterTool` (`write_file`, `replace`, `run_shell_command`) | fires callbacks |
//! | `codex-post-tool-use` | Codex CLI `PostToolUse` (every file of an `apply_patch`; its shell) | fires callbacks |
//! | `stop` | Claude Code `Stop` | runs the stop gate |
//! | `after-agent` | Gemini CLI `AfterAgent` | runs the stop gate |
//! | `codex-stop` | Codex CLI `Stop` | runs the stop gate |
//! | `subagent-stop`, `codex-subagent-stop` | `SubagentStop` | runs the stop gate for a subagent that changed files ([`subagent`]) |
//! | `session-start` | Claude Code `SessionStart` | records where the session began; with source `compact`, puts the latest handoff and the gate's open items back ([`compacted`]) |
//! | `codex-session-start-compact` | Codex CLI `SessionStart` with source `compact` | puts the latest handoff and the gate's open items back |
//!
//! The events are those the agents' descriptors list (`cp_agent_cli::AgentSpec::hook_events`);
//! which of them `init` wires depends on the agent's version. Every event of a session records
//! where HEAD was at the session's first event ([`SessionStarts`]), and the stop gate checks
//! what the session committed since as well as what it did not; a driver that started the
//! agent says where its phase began instead ([`SESSION_BASE_ENV`]). After a shell tool call (or
//! a batch with one), the files the command changed fire callbacks too ([`ShellSnapshots`]; off
//! with `{"hooks": {"shell_edits": false}}` in config.json).
//!
//! Inside a subagent (the payload names its `agent_id`) the hook counts in a session of the
//! subagent's own (`<session>.agent-<id>`): its shell snapshots, its edits (for its
//! `SubagentStop`), where it began and its stop gate blocks. A subagent in a worktree of its
//! own (Claude Code's `isolation: "worktree"`) runs its hooks there: the worktree is the
//! project, its callbacks run in it, and it is trusted as its repository is while its
//! `.context-pilot/` is the same (`cp_base::TrustState::TrustedWorktree`).
//!
//! The payload comes on stdin ([`HookPayload`]). An edit outside the project is ignored.
//! Blocking callback results go back to the agent at once. Background runs keep going in the
//! console server after the hook exits: the runs still going are saved for the worker's next
//! hook call, which re-attaches to them and reports those that ended
//! ([`Carried`](cp_host::Carried)); results that arrive after a reply was made wait in the
//! worker's [`Outbox`](cp_host::Outbox). Hook processes of one worker take turns (a lock), so
//! a result is reported once even when the agent's parallel tool calls run hooks at the same
//! moment. The reply follows each agent's format, which its descriptor writes
//! (`cp_agent_cli::AgentCli::hook_reply`).
//!
//! When a driver of Context Pilot started the agent (`context-pilot run --agent …`, the TUI's
//! `--agent`), each verdict is also reported to that driver ([`HookReport`]), which shows it
//! to the person.
//!
//! A hook never blocks the agent because of its own error: a malformed payload or a broken
//! config exits 0, says why on stderr, and logs it under `.context-pilot/logs/`.
//!
//! ```no_run
//! use cp_hook::{HookEvent, handle};
//! let payload = r#"{"cwd": "/work/app", "hook_event_name": "Stop", "stop_hook_active": false}"#;
//! let stop = HookEvent::named("stop").expect("Claude Code's stop event");
//! let out = handle(stop, None, None, payload);
//! if let Some(json) = out.stdout { println!("{json}"); }
//! ```

pub mod compacted;
mod edit;
mod event;
pub mod model_usage;
mod payload;
mod shell;
mod stop;
pub mod subagent;
pub mod wiring_probe;

use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;

use cp_agent_cli::{HookReport, HookReportKind};
use cp_base::{Project, WorkerId};
use cp_git::Head;
use cp_mod_checkpoint::SessionStarts;
use cp_orchestrate::SESSION_BASE_ENV;

pub use cp_agent_cli::{EventKind, Reply};
pub use edit::AgentEdit;
pub use event::{HookEvent, UnknownHookEvent};
pub use payload::{HookPayload, PayloadError, ToolCallPayload};
pub use shell::{HOOKS_CONFIG_KEY, HooksConfig, ShellSnapshots};
use shell::{Since, add_shell_edits, next_snapshot, shell_tool_ran};

use cp_host::{Carried, Host};

/// The session key used when a stop payload has no `session_id`.
const NO_SESSION: &str = "no-session-id";

/// What the hook process prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutput {
    /// The JSON reply for the agent.
    pub stdout: Option<String>,
    /// Problems for the person (the agent shows stderr in its logs or transcript).
    pub stderr: Option<String>,
    /// The verdicts for the driver that started the agent, if one did.
    pub reports: Vec<HookReport>,
}

/// Reads the payload from stdin, handles it, prints the reply and exits 0.
pub fn main(event: HookEvent, project: Option<&Path>, worker: Option<&str>) -> ExitCode {
    let mut input = String::new();
    let out = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => handle(event, project, worker, &input),
        Err(e) => failure(
            event,
            project,
            &format!("cannot read the payload from stdin: {e}"),
        ),
    };
    if let Some(stdout) = out.stdout {
        println!("{stdout}");
    }
    if let Some(stderr) = out.stderr {
        eprintln!("{stderr}");
    }
    for report in &out.reports {
        if let Err(e) = report.send() {
            tracing::warn!("cannot report the hook's verdict to the driver: {e}");
        }
    }
    ExitCode::SUCCESS
}

/// Handles one hook event with `input` as its payload. `project` overrides the payload's
/// `cwd` for finding the project; `worker` is the `--worker` flag.
pub fn handle(
    event: HookEvent,
    project: Option<&Path>,
    worker: Option<&str>,
    input: &str,
) -> HookOutput {
    let (payload, project, worker) = match locate(event, project, worker, input) {
        Ok(found) => found,
        Err(out) => return out,
    };
    let session = payload.session_key(NO_SESSION);
    // The agent's calls that changed files, as the payload names them.
    let mut edits = match named_edits(event, &payload, &project) {
        Ok(Some(edits)) => edits,
        // An edit outside the project is none of our business.
        Ok(None) => return reply_only(event, &Reply::Nothing),
        Err(e) => {
            return failure(
                event,
                Some(project.root()),
                &format!("ignored a malformed payload: {e}"),
            );
        }
    };
    let host = match Host::new(project.clone(), worker) {
        Ok(h) => h,
        Err(e) => return failure(event, Some(project.root()), &format!("cannot start: {e}")),
    };
    let (hooks_config, hooks_problem) = HooksConfig::load(&project);
    let snapshots = hooks_config
        .shell_edits
        .then(|| ShellSnapshots::new(&project, host.worker()));
    // The files the payload names, when they are all the agent's tools wrote (checked before
    // the shell's changes join the edits).
    let named = named_writes(&edits);
    let shell_now = add_other_edits(
        event,
        &payload,
        &host,
        &session,
        snapshots.as_ref(),
        &mut edits,
    );
    // A broken callbacks config must never silently turn callbacks off: say so every time.
    let mut config_problems = cp_mod_callback::config_problems(&project);
    config_problems.extend(hooks_problem);
    for problem in &config_problems {
        tracing::warn!("callbacks config: {problem}");
    }
    // Runs that earlier hook processes left in flight: report those that ended meanwhile.
    let carried = Carried::resume(&host);
    carried.settle(&host);
    let outcome = decide(event, &host, &payload, &session, edits);
    // The work tree as this call leaves it (callbacks may have changed files too): what the
    // session's next shell call is compared with.
    if let Some(snapshots) = &snapshots {
        let since = match &outcome {
            Ok(d) if d.named_writes_only => Since::NamedOnly,
            Ok(_) if matches!(event.kind(), EventKind::AfterEdit | EventKind::AfterBatch) => {
                Since::Callbacks
            }
            _ => Since::Anything,
        };
        let now = next_snapshot(snapshots, &session, since, shell_now, named.as_deref());
        if let Some(now) = now {
            snapshots.save(&session, &now);
        }
    }
    // What is still running is saved for the next call, and whatever reported after the
    // reply was made waits for it in the outbox.
    let problems = carried.suspend(&host);
    let out = match outcome {
        Ok(decided) => reply_only(event, &decided.reply),
        Err(problem) => failure(event, Some(project.root()), &problem.to_string()),
    };
    with_notices(event, &project, out, &problems, &config_problems)
}

/// The payload, the project it is about and the worker; or the whole answer, when the payload
/// is malformed, names no project, or the worker is invalid.
fn locate(
    event: HookEvent,
    project: Option<&Path>,
    worker: Option<&str>,
    input: &str,
) -> Result<(HookPayload, Project, WorkerId), HookOutput> {
    let payload = HookPayload::parse(input)
        .map_err(|e| failure(event, project, &format!("ignored a malformed payload: {e}")))?;
    let start = project
        .map(Path::to_path_buf)
        .or_else(|| payload.cwd.clone())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    // Outside any project a hook has nothing to do, and must leave no `.context-pilot/`.
    let project = find_project(&start).ok_or_else(|| reply_only(event, &Reply::Nothing))?;
    let worker = WorkerId::from_flag_or_env(worker)
        .map_err(|e| failure(event, Some(project.root()), &e.to_string()))?;
    cp_host::logging::init(&project.logs_dir());
    tracing::info!(
        event = event.cli_name(),
        session = payload.session_id.as_deref().unwrap_or("-"),
        tool = payload.call.tool_name.as_deref().unwrap_or("-"),
        worker = %worker,
        "hook"
    );
    Ok((payload, project, worker))
}

/// Adds to `edits` what the payload does not name: the files a shell command changed (when
/// shell edits are watched), and records a subagent's edits for its own stop. Returns the
/// work tree's snapshot taken after the shell command, if one ran.
fn add_other_edits(
    event: HookEvent,
    payload: &HookPayload,
    host: &Host,
    session: &str,
    snapshots: Option<&ShellSnapshots>,
    edits: &mut Vec<AgentEdit>,
) -> Option<cp_git::WorkTreeSnapshot> {
    let project = host.project();
    let mut shell_now = None;
    if let Some(snapshots) = snapshots
        && let Some(shell) = shell_tool_ran(event, payload)
    {
        shell_now = add_shell_edits(snapshots, payload, project, session, shell, edits);
    }
    if payload.subagent().is_some() {
        let changed: Vec<_> = edits.iter().flat_map(|e| e.changes.clone()).collect();
        subagent::SubagentEdits::new(project, host.worker()).record(session, &changed);
    }
    shell_now
}

/// The paths of `edits` (as the payload names them), when the tools that made them name
/// every file they write: then nothing else of the tree changed by the agent's hand. `None`
/// when a tool's edits are read from its arguments (Codex CLI's `apply_patch`, whose moves
/// do not name the file moved away).
fn named_writes(edits: &[AgentEdit]) -> Option<Vec<String>> {
    let names_all = edits
        .iter()
        .filter(|edit| !edit.changes.is_empty())
        .all(|edit| {
            cp_agent_cli::edit_tool(&edit.tool)
                .is_some_and(|tool| matches!(tool.paths, cp_agent_cli::EditPaths::Keys(_)))
        });
    names_all.then(|| {
        edits
            .iter()
            .flat_map(|edit| edit.changes.iter().map(|change| change.path.clone()))
            .collect()
    })
}

/// `out` with what the person must hear beside the agent's answer: an untrusted project's
/// callbacks off (once), the hook's own problems, a broken callbacks config (every time).
fn with_notices(
    event: HookEvent,
    project: &Project,
    mut out: HookOutput,
    problems: &[String],
    config_problems: &[String],
) -> HookOutput {
    if let Some(advice) = cp_host::trust::notice_once(project) {
        out.stdout = cp_host::trust::with_system_message(out.stdout.take(), &advice);
        out.reports
            .push(event.report(HookReportKind::Notice, advice));
    }
    if !problems.is_empty() {
        let ours = problems
            .iter()
            .map(|p| format!("context-pilot hook {}: {p}", event.cli_name()));
        let all: Vec<String> = out.stderr.take().into_iter().chain(ours).collect();
        out.stderr = Some(all.join("\n"));
    }
    if !config_problems.is_empty() {
        tell_person(event, &mut out, config_problems);
    }
    out
}

/// What [`decide`] answers.
struct Decided {
    reply: Reply,
    /// No module answered the edits with notes, so no blocking callback wrote files: the tree
    /// holds the agent's edits and nothing more. False for every event but edits.
    named_writes_only: bool,
}

impl From<Reply> for Decided {
    fn from(reply: Reply) -> Self {
        Self {
            reply,
            named_writes_only: false,
        }
    }
}

/// What the hook answers at `event`: callbacks fired for `edits`, a stop gate's verdict, or
/// the context to put back after a compaction. Runs under the worker's lock, so the first
/// events of one session, arriving at once, record where it began once.
fn decide(
    event: HookEvent,
    host: &Host,
    payload: &HookPayload,
    session: &str,
    edits: Vec<AgentEdit>,
) -> Result<Decided, stop::StopSkipped> {
    let base = match payload.subagent() {
        // A subagent's work is what it did since its own first event (a driver's base is its
        // main session's).
        Some(_) => SessionStarts::new(host.project(), host.worker()).begin(session),
        None => session_base(host, payload.session_id.as_deref()),
    };
    match event.kind() {
        EventKind::AfterEdit | EventKind::AfterBatch => {
            let after = edit::after_edits(host, edits);
            Ok(Decided {
                reply: after.reply,
                named_writes_only: !after.noted,
            })
        }
        EventKind::Stop => stop::at_stop(host, session, base).map(Decided::from),
        EventKind::SubagentStop => subagent::at_subagent_stop(
            host,
            &subagent::EndingSubagent {
                agent_id: payload.subagent(),
                agent_type: payload.agent_type.as_deref(),
                key: session,
                base,
            },
        )
        .map(Decided::from),
        EventKind::SessionStart if payload.source.as_deref() == Some("compact") => {
            Ok(compacted::after_compaction(host).into())
        }
        EventKind::SessionStart => {
            // A new session on a clean tree: its base's verdict, so its stops can tell the
            // failures it made from those it found.
            if payload.source.as_deref() != Some("resume")
                && let Some(exe) = cp_host::program::binary_path()
            {
                cp_mod_checkpoint::WarmLauncher::new(exe)
                    .request_base(host.project(), host.worker());
            }
            Ok(Reply::Nothing.into())
        }
    }
}

/// The agent's calls that changed files, as the payload of `event` names them (an edit tool's
/// files, every edit call of a batch); empty for events that edit nothing. `None` when the one
/// edit tool of a `PostToolUse` edited a file outside the project.
fn named_edits(
    event: HookEvent,
    payload: &HookPayload,
    project: &Project,
) -> Result<Option<Vec<AgentEdit>>, PayloadError> {
    Ok(Some(match event.kind() {
        EventKind::AfterEdit => {
            let changes = payload.edited_files(project)?;
            if changes.is_empty() && payload.call.is_edit_tool() {
                return Ok(None);
            }
            vec![AgentEdit {
                tool: payload.call.tool_name.clone().unwrap_or_default(),
                changes,
            }]
        }
        EventKind::AfterBatch => payload
            .batch_edits(project)?
            .into_iter()
            .map(|(tool, changes)| AgentEdit { tool, changes })
            .collect(),
        EventKind::Stop | EventKind::SubagentStop | EventKind::SessionStart => Vec::new(),
    }))
}

/// Where the agent's session began: as its driver says ([`SESSION_BASE_ENV`]), else as
/// recorded at the session's first event (this one, if it is the first). Without a session id
/// nothing can be recorded: only uncommitted work is then checked.
fn session_base(host: &Host, session: Option<&str>) -> Option<Head> {
    if let Some(json) = std::env::var_os(SESSION_BASE_ENV).filter(|v| !v.is_empty()) {
        match serde_json::from_str::<Head>(&json.to_string_lossy()) {
            Ok(head) => return Some(head),
            Err(e) => tracing::warn!("ignoring {SESSION_BASE_ENV}: {e}"),
        }
    }
    let session = session?;
    SessionStarts::new(host.project(), host.worker()).begin(session)
}

/// The project a hook started in `start` acts on: the git work tree around it, or the nearest
/// directory (itself or an ancestor) that already has `.context-pilot/`. `None` elsewhere.
fn find_project(start: &Path) -> Option<Project> {
    let start = std::fs::canonicalize(start).ok()?;
    let in_git = start.ancestors().any(|dir| dir.join(".git").exists());
    if in_git {
        return Project::discover(&start).ok();
    }
    start
        .ancestors()
        .find(|dir| dir.join(cp_base::STATE_DIR).is_dir())
        .map(Project::at)
}

/// Adds problems the person must see to the hook's output: stderr, and a `systemMessage`
/// (shown to the user by Claude Code and Gemini CLI) in the reply.
fn tell_person(event: HookEvent, out: &mut HookOutput, problems: &[String]) {
    let text = format!(
        "Context Pilot: callbacks config problem: {}",
        problems.join("; ")
    );
    let lines = problems
        .iter()
        .map(|p| format!("context-pilot hook {}: {p}", event.cli_name()));
    let all: Vec<String> = out.stderr.take().into_iter().chain(lines).collect();
    out.stderr = Some(all.join("\n"));
    out.stdout = Some(cp_agent_cli::with_system_message(
        out.stdout.as_deref(),
        &text,
    ));
    out.reports.push(event.report(HookReportKind::Notice, text));
}

fn reply_only(event: HookEvent, reply: &Reply) -> HookOutput {
    let report = match (reply, event.kind()) {
        (Reply::Nothing | Reply::Context(_), kind) if kind.is_stop() => {
            Some(event.report(HookReportKind::Passed, String::new()))
        }
        (Reply::Nothing, _) => None,
        (Reply::Context(text), _) => Some(event.report(HookReportKind::Context, text.clone())),
        (Reply::Block(text), _) => Some(event.report(HookReportKind::Blocked, text.clone())),
        (Reply::Notice(text), _) => Some(event.report(HookReportKind::Notice, text.clone())),
    };
    HookOutput {
        stdout: event.agent.hook_reply(event.kind(), reply),
        stderr: None,
        reports: report.into_iter().collect(),
    }
}

/// Our own problem: say it on stderr, log it, and let the agent carry on.
fn failure(event: HookEvent, project: Option<&Path>, problem: &str) -> HookOutput {
    let logs = project
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .and_then(|dir| find_project(&dir))
        .map(|p| p.logs_dir());
    if let Some(logs) = logs {
        cp_host::logging::init(&logs);
    }
    tracing::warn!(event = event.cli_name(), "hook: {problem}");
    let said = format!("context-pilot hook {}: {problem}", event.cli_name());
    let mut out = reply_only(event, &Reply::Nothing);
    out.reports
        .push(event.report(HookReportKind::Notice, said.clone()));
    out.stderr = Some(said);
    out
}
