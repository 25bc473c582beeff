//! Codex CLI: everything Context Pilot knows about it, in one place ([`Codex`]).
//!
//! `context-pilot init codex` merges the MCP server and the `PostToolUse` and `Stop` hooks
//! into `.codex/config.toml` and names the two trust steps Codex needs ([`hooks`]); callbacks
//! fire for each file of an `apply_patch` ([`patch`]) and for files changed through the shell.
//! `doctor` reads the person's own Codex trust ([`user_trust`]); `init codex --trust-in-codex`
//! records it there when asked ([`trust_write`]). Runs and the TUI drive `codex exec --json` ([`run`], [`stream`]) with the hooks trusted
//! for that invocation only ([`hook_trust`]), measuring context use from Codex's session file
//! ([`rollout`]).

mod hook_trust;
mod hooks;
#[cfg(test)]
mod invocation_tests;
mod patch;
mod rollout;
mod run;
mod stream;
mod trust_write;
mod user_trust;

pub use trust_write::{CodexTrustEdit, trust_in_codex};
pub use user_trust::plugin_hook_trust;

use std::path::Path;
use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::Value;

use crate::AgentError;
use crate::agent::{AgentCli, AgentTrust};
use crate::hook_reply::{EventKind, Reply};
use crate::project_settings::SettingsFile;
use crate::session::CliSession;
use crate::spec::{
    AgentSpec, EditPaths, EditTool, HookEventSpec, HookMatcher, SessionLogSpec, Version,
};
use crate::wiring::{Wiring, WiringSpec};

/// Codex CLI's descriptor.
#[derive(Debug)]
pub struct Codex;

/// Codex CLI.
///
/// 0.135.0 is the oldest release runs and the TUI were measured to work with, with the e2e
/// tests `context-pilot --test agents agent_cli_codex::` (a run with a restart measured from the session file,
/// the handoff taken through `Checkpoint_handoff` in the resumed thread, our hooks trusted and
/// run, the repository's not) and `--test agents tui_agent_cli_codex::`: both pass on 0.141.0, 0.142.0,
/// 0.143.0, 0.145.0, 0.150.0, 0.160.0, 0.169.0 and the pinned 0.171.0; on 0.135.0, 0.138.0 and 0.140.0
/// everything passes but the run test's last check, that the repository's hook would have run
/// with `--dangerously-bypass-hook-trust`: those releases run no hook from a project's
/// `.codex/config.toml` at all. On 0.134.0 (and 0.132.0, 0.130.0) the handoff turn's call of
/// `Checkpoint_handoff` never reaches the MCP server, so every restart falls back to a
/// handoff built from git. The project hooks `init codex` writes, which the person's own
/// `codex` runs, therefore need 0.141.0 (`--test agents real_agents::` passes from 0.143.0; 0.141.0
/// and 0.142.0 offer MCP tools in the request rather than through `tool_search`, which that
/// test checks).
/// The first release that runs `SessionStart` hooks with source `compact` after a
/// compaction (measured with the scripted server: 0.144.6 does not, 0.145.0 does).
const COMPACT_SESSION_START: Version = (0, 145, 0);

/// The first release that runs `SubagentStop` hooks when a subagent (`spawn_agent`) ends,
/// with its `agent_id` (measured with the scripted server: 0.142.5 runs none, 0.143.0 does).
const SUBAGENT_STOP: Version = (0, 143, 0);

pub(crate) const SPEC: AgentSpec = AgentSpec {
    name: "codex",
    display_name: "Codex CLI",
    program: "codex",
    install: "install it with `npm install -g @openai/codex`, or set agent.command in .context-pilot/config.json",
    min_version: (0, 135, 0),
    resume_since: Some((0, 135, 0)),
    probe_event: "UserPromptSubmit",
    hook_events: &[
        HookEventSpec {
            cli_name: "codex-post-tool-use",
            name: "PostToolUse",
            kind: EventKind::AfterEdit,
            matcher: HookMatcher::All,
            since: None,
            until: None,
        },
        HookEventSpec {
            cli_name: "codex-stop",
            name: "Stop",
            kind: EventKind::Stop,
            matcher: HookMatcher::All,
            since: None,
            until: None,
        },
        // A subagent (`spawn_agent`, the `multi_agent_v2` feature) ending: its payload names
        // `agent_id` and `agent_type`, as its tool events do.
        HookEventSpec {
            cli_name: "codex-subagent-stop",
            name: "SubagentStop",
            kind: EventKind::SubagentStop,
            matcher: HookMatcher::All,
            since: Some(SUBAGENT_STOP),
            until: None,
        },
        // From 0.145.0 a compaction ends with `SessionStart` (source `compact`), whose
        // `additionalContext` reaches the next request as a developer message; 0.144.6 runs
        // `PreCompact` and `PostCompact` only, whose output never reaches the model. Wired
        // for compaction only: where a session began is recorded at its first event.
        HookEventSpec {
            cli_name: "codex-session-start-compact",
            name: "SessionStart",
            kind: EventKind::SessionStart,
            matcher: HookMatcher::Exact("compact"),
            since: Some(COMPACT_SESSION_START),
            until: None,
        },
    ],
    edit_tools: &[EditTool {
        name: "apply_patch",
        paths: EditPaths::Parse(patch::edited_paths),
    }],
    // Its `exec_command` shell tool arrives in the hook payload as `Bash` (measured on 0.169.0 and 0.171.0);
    // MCP tools as `mcp__context_pilot__<tool>`, whose File_* edits fire callbacks in the MCP
    // server itself.
    shell_tools: &["Bash"],
    parse_line: stream::parse_line,
    model_window: stream::model_window,
    names_its_sessions: true,
    session_log: Some(SessionLogSpec {
        locate: rollout::locate,
        parse_line: rollout::parse_line,
    }),
};

impl AgentCli for Codex {
    fn spec(&self) -> &'static AgentSpec {
        &SPEC
    }

    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String> {
        hooks::reply(kind, reply)
    }

    fn project_settings(&self, program: &str, version: Option<Version>) -> Vec<SettingsFile> {
        hooks::project_settings(program, version)
    }

    fn init_notes(&self, root: &Path) -> Option<String> {
        Some(hooks::trust_steps(root))
    }

    fn trust_checks(&self, root: &Path) -> Vec<AgentTrust> {
        user_trust::checks(root)
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
        let version = session.binary.parsed_version();
        let hooks = session.spec.hooks_with_probe(
            self.run_hooks(&session.spec.program, version),
            SPEC.probe_event,
        );
        run::session_command(session, prompt, session_args, &hooks)
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
