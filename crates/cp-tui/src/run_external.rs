//! `context-pilot run --agent claude|gemini --headless`: the workflow's sessions run in the
//! user's own Claude Code or Gemini CLI (crate `cp-agent-cli`), with progress printed on the
//! terminal. (Without `--headless` the TUI shows the run: `tui::run_workflow`.)

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use cp_agent_cli::{
    AgentConfig, AgentEvent, AgentKind, ClaudeRunner, GeminiRunner, Progress, WiringSpec,
};
use cp_orchestrate::{RunArgs, SessionRunner, run_headless};

use crate::host::Host;
use crate::init::{InitAgent, program, runner_hook_settings};

/// How an agent CLI run from `host` reaches Context Pilot: this binary for `mcp` and the
/// hooks `init` would write for `agent`, for the host's project and worker.
pub(crate) fn wiring_spec(host: &Host, agent: InitAgent) -> WiringSpec {
    let program = program();
    WiringSpec {
        hook_settings: runner_hook_settings(agent, &program),
        program,
        root: host.project().root().to_path_buf(),
        worker: host.worker().clone(),
    }
}

/// Runs the workflow headless with `kind` (never `Builtin`); returns the exit code.
pub fn run(host: &Host, args: &RunArgs, kind: AgentKind) -> anyhow::Result<i32> {
    let config = AgentConfig::load(host.project())?;
    let spec = |agent| wiring_spec(host, agent);
    let progress: Progress = Box::new(print_event);
    let mut runner: Box<dyn SessionRunner> = match kind {
        AgentKind::Claude => Box::new(ClaudeRunner::new(
            config,
            spec(InitAgent::Claude),
            progress,
        )?),
        AgentKind::Gemini => Box::new(GeminiRunner::new(
            config,
            spec(InitAgent::Gemini),
            progress,
        )?),
        AgentKind::Builtin => anyhow::bail!("the built-in agent does not run through an agent CLI"),
    };
    let trust = host.project().trust_state();
    if !trust.allows() {
        eprintln!("{}", trust.advice(host.project().root()));
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::stdout();
    Ok(run_headless(
        host.project(),
        args,
        runner.as_mut(),
        &mut input,
        &mut output,
    ))
}

/// One line per tool call and result, the context use per request, and the agent's text
/// (which may arrive in pieces: Gemini CLI streams deltas).
fn print_event(event: &AgentEvent) {
    static MID_LINE: AtomicBool = AtomicBool::new(false);
    let mut out = std::io::stdout().lock();
    if let AgentEvent::Text(text) = event {
        let _ = write!(out, "{text}");
        MID_LINE.store(!text.ends_with('\n'), Ordering::Relaxed);
        let _ = out.flush();
        return;
    }
    if MID_LINE.swap(false, Ordering::Relaxed) {
        let _ = writeln!(out);
    }
    let _ = match event {
        AgentEvent::Text(_) => Ok(()),
        AgentEvent::ToolCall { .. } => writeln!(out, "  {event}"),
        AgentEvent::ToolResult { .. } => writeln!(out, "    {event}"),
        AgentEvent::Usage { .. }
        | AgentEvent::SessionStarted { .. }
        | AgentEvent::Compacted
        | AgentEvent::Hook { .. }
        | AgentEvent::Stopping => writeln!(out, "  … {event}"),
    };
    let _ = out.flush();
}
