//! `context-pilot run --agent claude|gemini|codex --headless`: the workflow's sessions run in the
//! user's own Claude Code, Gemini CLI or Codex CLI (crate `cp-agent-cli`), with progress printed on the
//! terminal. (Without `--headless` the TUI shows the run.)

use std::io::Write as _;

use cp_agent_cli::{AgentConfig, AgentKind, CliDriver, Progress, ProgressEvent, WiringSpec};
use cp_orchestrate::RunArgs;

use crate::headless::run_headless;

use crate::headless_out::{LineState, OwnLines};
use cp_host::Host;
use cp_host::program::program;

/// How an agent CLI run from `host` reaches Context Pilot: this binary (for `mcp` and the
/// hooks), for the host's project and worker.
pub(crate) fn wiring_spec(host: &Host) -> WiringSpec {
    wiring_spec_of(host.project(), host.worker())
}

/// [`wiring_spec`] from the project and the worker alone.
pub fn wiring_spec_of(project: &cp_base::Project, worker: &cp_base::WorkerId) -> WiringSpec {
    WiringSpec {
        program: program(),
        root: project.root().to_path_buf(),
        worker: worker.clone(),
    }
}

/// Runs the workflow headless with `kind` (never `Builtin`); returns the exit code.
pub fn run(host: &Host, args: &RunArgs, kind: AgentKind) -> anyhow::Result<i32> {
    let config = AgentConfig::load(host.project())?;
    let line = LineState::default();
    let printer = line.clone();
    let progress: Progress = Box::new(move |event| print_event(&printer, event));
    let mut driver = CliDriver::new(kind, config, wiring_spec(host), progress)?;
    let trust = host.project().trust_state();
    if !trust.allows() {
        eprintln!("{}", trust.advice(host.project().root()));
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = OwnLines {
        inner: std::io::stdout(),
        line,
    };
    Ok(run_headless(
        host.project(),
        args,
        &mut driver,
        &mut input,
        &mut output,
    ))
}

/// One line per tool call and result, the context use per request, and the agent's text
/// (which may arrive in pieces: Gemini CLI streams deltas).
fn print_event(line: &LineState, event: &ProgressEvent) {
    let mut out = std::io::stdout().lock();
    if let ProgressEvent::Text(text) = event {
        let _ = line.text(&mut out, text);
        let _ = out.flush();
        return;
    }
    let _ = line.end_line(&mut out);
    let _ = match event {
        ProgressEvent::Text(_) => Ok(()),
        ProgressEvent::ToolCall { .. } => writeln!(out, "  {event}"),
        ProgressEvent::ToolResult { .. } => writeln!(out, "    {event}"),
        ProgressEvent::Usage { .. }
        | ProgressEvent::SessionStarted { .. }
        | ProgressEvent::Compacted
        | ProgressEvent::Hook { .. }
        | ProgressEvent::Stopping => writeln!(out, "  … {event}"),
    };
    let _ = out.flush();
}
