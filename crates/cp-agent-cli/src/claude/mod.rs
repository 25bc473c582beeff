//! Claude Code: everything Context Pilot knows about it, in one place ([`Claude`]).

mod hooks;
#[cfg(test)]
mod invocation_tests;
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

/// Claude Code's descriptor.
#[derive(Debug)]
pub struct Claude;

/// Claude Code.
///
/// 2.0.31 is the first release with `--tools`, which the handoff turn passes as `--tools ""`
/// (no built-in tool, only `Checkpoint_handoff`). 2.0.30 exits with "unknown option
/// '--tools'", so no agent-written handoff is ever taken and every restart falls back to one
/// built from git; everything else the driver uses (`--session-id`, `--resume`,
/// `--settings` hooks, `--mcp-config`, the stream events) already works there.
/// Measured with the e2e suites `context-pilot --test agents agent_cli::` and `--test agents tui_agent_cli::` against
/// the scripted server: all Claude Code tests pass on 2.0.31; on 2.0.30 and 2.0.0 only the
/// two handoff tests fail ("no handoff turn", "handoff missing").
/// The first release that sends `PostToolBatch` (measured: 2.1.117 ignores the event in its
/// settings, 2.1.118 runs it once per batch and gives its `additionalContext` to the model).
const POST_TOOL_BATCH: Version = (2, 1, 118);

/// The first release whose hook payloads carry `agent_id` and `agent_type` (its changelog):
/// without `agent_type` the compaction agent's `SubagentStop` cannot be told from a
/// subagent's.
const SUBAGENT_TYPES: Version = (2, 1, 69);

pub(crate) const SPEC: AgentSpec = AgentSpec {
    name: "claude",
    display_name: "Claude Code",
    program: "claude",
    install: "install it with `npm install -g @anthropic-ai/claude-code`, or set agent.command in .context-pilot/config.json",
    min_version: (2, 0, 31),
    resume_since: Some((2, 0, 31)),
    probe_event: "UserPromptSubmit",
    hook_events: &[
        // Until 2.1.118: callbacks after each edit (2.1.117 has no `PostToolBatch`).
        HookEventSpec {
            cli_name: "post-tool-use",
            name: "PostToolUse",
            kind: EventKind::AfterEdit,
            matcher: HookMatcher::EditTools,
            since: None,
            until: Some(POST_TOOL_BATCH),
        },
        // From 2.1.118: callbacks once per batch of tool calls, with every file of it.
        HookEventSpec {
            cli_name: "post-tool-batch",
            name: "PostToolBatch",
            kind: EventKind::AfterBatch,
            matcher: HookMatcher::All,
            since: Some(POST_TOOL_BATCH),
            until: None,
        },
        HookEventSpec {
            cli_name: "stop",
            name: "Stop",
            kind: EventKind::Stop,
            matcher: HookMatcher::All,
            since: None,
            until: None,
        },
        // From 2.1.69, whose payloads name the subagent's `agent_type` (empty for the
        // compaction agent, which is never held).
        HookEventSpec {
            cli_name: "subagent-stop",
            name: "SubagentStop",
            kind: EventKind::SubagentStop,
            matcher: HookMatcher::All,
            since: Some(SUBAGENT_TYPES),
            until: None,
        },
        // Every start of a session records where it began. With source `compact` it runs
        // after every compaction too, and its `additionalContext` reaches the next request.
        // (`PreCompact`'s output only instructs the summary; `PostCompact`'s is shown to the
        // person, never to the model.)
        HookEventSpec {
            cli_name: "session-start",
            name: "SessionStart",
            kind: EventKind::SessionStart,
            matcher: HookMatcher::All,
            since: None,
            until: None,
        },
    ],
    edit_tools: &[
        EditTool {
            name: "Write",
            paths: EditPaths::Keys(&["file_path"]),
        },
        EditTool {
            name: "Edit",
            paths: EditPaths::Keys(&["file_path"]),
        },
        EditTool {
            name: "MultiEdit",
            paths: EditPaths::Keys(&["file_path"]),
        },
        EditTool {
            name: "NotebookEdit",
            paths: EditPaths::Keys(&["notebook_path"]),
        },
    ],
    shell_tools: &["Bash"],
    parse_line: stream::parse_line,
    model_window: stream::model_window,
    names_its_sessions: false,
    session_log: None,
};

impl AgentCli for Claude {
    fn spec(&self) -> &'static AgentSpec {
        &SPEC
    }

    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String> {
        hooks::reply(kind, reply)
    }

    fn project_settings(&self, program: &str, version: Option<Version>) -> Vec<SettingsFile> {
        hooks::project_settings(program, version)
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
        _control: &SessionControl,
    ) -> Result<Command, DriverError> {
        run::handoff_command(session, request)
    }
}
