//! Gemini CLI: everything Context Pilot knows about it, in one place ([`Gemini`]).

mod handoff;
mod home;
mod hooks;
mod run;
mod stream;

use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::Value;

use crate::AgentError;
use crate::agent::AgentCli;
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::SettingsFile;
use crate::session::CliSession;
use crate::spec::{AgentSpec, EditPaths, EditTool, HookEventSpec, HookMatcher, Version};
use crate::wiring::{Wiring, WiringSpec};

/// Gemini CLI's descriptor.
#[derive(Debug)]
pub struct Gemini;

/// Gemini CLI.
///
/// 0.41.0 is the first release with `--session-id`, which every fresh session passes. 0.40.1
/// exits with "Unknown arguments: session-id, sessionId" before any turn, so nothing works
/// below it. Measured with the e2e suites `context-pilot --test agents agent_cli::` and `--test
/// agents tui_agent_cli::` against the scripted server: both Gemini CLI tests pass on 0.41.0 and fail
/// on 0.40.1 ("Gemini CLI exited (exit status: 1) before finishing its turn").
///
/// Its `--resume` is not used: up to 0.61.0 at least, a resumed session sends every earlier
/// tool result twice (one user turn with two function responses for one function call), and
/// the Gemini API refuses the request with HTTP 400 `INVALID_ARGUMENT` ("the number of
/// function response parts is equal to the number of function call parts";
/// google-gemini/gemini-cli#29365). Set `resume_since` to the first release that fixes it.
pub(crate) const SPEC: AgentSpec = AgentSpec {
    name: "gemini",
    display_name: "Gemini CLI",
    program: "gemini",
    install: "install it with `npm install -g @google/gemini-cli`, or set agent.command in .context-pilot/config.json",
    min_version: (0, 41, 0),
    resume_since: None,
    probe_event: "BeforeAgent",
    hook_events: &[
        HookEventSpec {
            cli_name: "after-tool",
            name: "AfterTool",
            kind: EventKind::AfterEdit,
            matcher: HookMatcher::EditTools,
            since: None,
            until: None,
        },
        HookEventSpec {
            cli_name: "after-agent",
            name: "AfterAgent",
            kind: EventKind::Stop,
            matcher: HookMatcher::All,
            since: None,
            until: None,
        },
        // Nothing else serves the gate or the callbacks up to 0.61.0: it has no batch event,
        // no subagent stop, and `PreCompress` runs before every compression check (also when
        // nothing is compressed) with its output ignored; no event follows a compression
        // (`SessionStart` has the sources `startup`, `resume` and `clear` only).
    ],
    edit_tools: &[
        EditTool {
            name: "write_file",
            paths: EditPaths::Keys(&["file_path", "absolute_path"]),
        },
        EditTool {
            name: "replace",
            paths: EditPaths::Keys(&["file_path", "absolute_path"]),
        },
    ],
    shell_tools: &["run_shell_command"],
    parse_line: stream::parse_line,
    model_window: stream::model_window,
    names_its_sessions: false,
    session_log: None,
};

impl AgentCli for Gemini {
    fn spec(&self) -> &'static AgentSpec {
        &SPEC
    }

    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String> {
        Some(hooks::reply(kind, reply))
    }

    fn project_settings(&self, program: &str, version: Option<Version>) -> Vec<SettingsFile> {
        hooks::project_settings(program, version)
    }

    fn run_hooks(&self, program: &str, version: Option<Version>) -> Value {
        hooks::run_hooks(program, version)
    }

    fn wire(&self, spec: &WiringSpec, hooks: &Value) -> Result<Wiring, AgentError> {
        run::wire(spec, hooks)
    }

    fn session_command(
        &self,
        session: &CliSession,
        prompt: &str,
        session_args: &[String; 2],
    ) -> Command {
        run::session_command(session, prompt, session_args)
    }

    fn handoff_command(
        &self,
        session: &CliSession,
        request: &str,
        control: &SessionControl,
    ) -> Result<Command, DriverError> {
        run::handoff_command(session, request, control)
    }
}
