//! Codex CLI: everything Context Pilot knows about it, in one place ([`Codex`]).
//!
//! What works: `context-pilot init codex` (the MCP server and the `PostToolUse` and `Stop`
//! hooks in `.codex/config.toml`, then the two trust steps Codex needs), and the hooks:
//! callbacks fire for each file of an `apply_patch` ([`patch`]) and for files changed through
//! the shell, and the stop gate runs when Codex ends its turn. Runs and the TUI with
//! `--agent codex` are refused with a clear error ([`run`]).

mod hooks;
mod patch;
mod run;
mod trust;

use std::path::Path;
use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::Value;

use crate::AgentError;
use crate::agent::{AgentCli, AgentTrust};
use crate::hook_reply::{EventKind, Reply};
use crate::item::Item;
use crate::project_settings::SettingsFile;
use crate::session::CliSession;
use crate::spec::{AgentSpec, EditPaths, EditTool, HookEventSpec};
use crate::wiring::{Wiring, WiringSpec};

/// Codex CLI's descriptor.
#[derive(Debug)]
pub struct Codex;

/// Codex CLI.
///
/// 0.169.0, the version `scripts/install-agents.sh` pins, is the one measured: with it the
/// e2e tests of `cp-tui --test real_agents` pass (`init codex`, the project's hooks and MCP
/// server, callbacks on `apply_patch` and shell edits, the stop gate). Older releases were
/// not measured, so they are refused rather than trusted.
pub(crate) const SPEC: AgentSpec = AgentSpec {
    name: "codex",
    display_name: "Codex CLI",
    program: "codex",
    install: "install it with `npm install -g @openai/codex`, or set agent.command in .context-pilot/config.json",
    min_version: (0, 169, 0),
    resume_since: None,
    probe_event: "UserPromptSubmit",
    hook_events: &[
        HookEventSpec {
            cli_name: "codex-post-tool-use",
            name: "PostToolUse",
            kind: EventKind::AfterEdit,
        },
        HookEventSpec {
            cli_name: "codex-stop",
            name: "Stop",
            kind: EventKind::Stop,
        },
    ],
    edit_tools: &[EditTool {
        name: "apply_patch",
        paths: EditPaths::Parse(patch::edited_paths),
    }],
    // Its `exec_command` shell tool arrives in the hook payload as `Bash` (measured on 0.169.0);
    // MCP tools as `mcp__context_pilot__<tool>`, whose File_* edits fire callbacks in the MCP
    // server itself.
    shell_tools: &["Bash"],
    parse_line: no_stream,
    model_window: no_window,
};

/// Runs with Codex are refused, so its `exec --json` stream is not read yet.
fn no_stream(_line: &str) -> Vec<Item> {
    Vec::new()
}

fn no_window(_model: &str) -> Option<u64> {
    None
}

impl AgentCli for Codex {
    fn spec(&self) -> &'static AgentSpec {
        &SPEC
    }

    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String> {
        hooks::reply(kind, reply)
    }

    fn project_settings(&self, program: &str) -> Vec<SettingsFile> {
        hooks::project_settings(program)
    }

    fn init_notes(&self, root: &Path) -> Option<String> {
        Some(hooks::trust_steps(root))
    }

    fn trust_checks(&self, root: &Path) -> Vec<AgentTrust> {
        trust::checks(root)
    }

    fn runs_unsupported(&self) -> Option<AgentError> {
        Some(run::unsupported())
    }

    fn wire(&self, _spec: &WiringSpec, _hooks: &Value) -> Result<Wiring, AgentError> {
        run::wire()
    }

    fn session_command(
        &self,
        session: &CliSession,
        prompt: &str,
        _session_args: &[String; 2],
    ) -> Command {
        run::session_command(session, prompt)
    }

    fn handoff_command(
        &self,
        _session: &CliSession,
        _request: &str,
        _control: &SessionControl,
    ) -> Result<Command, DriverError> {
        run::handoff_command()
    }
}

#[cfg(test)]
mod tests {
    use crate::{AgentConfig, AgentError, AgentKind, CliDriver, WiringSpec};

    #[test]
    fn a_run_with_codex_is_refused_clearly_before_anything_starts() {
        let spec = WiringSpec {
            program: "context-pilot".into(),
            root: std::env::temp_dir(),
            worker: cp_base::WorkerId::default(),
        };
        let codex: AgentKind = "codex".parse().unwrap();
        let Err(error) = CliDriver::new(codex, AgentConfig::default(), spec, Box::new(|_: &_| {}))
        else {
            panic!("runs with Codex are not supported yet");
        };
        assert!(
            matches!(error, AgentError::RunsUnsupported { .. }),
            "{error}"
        );
        let said = error.to_string();
        assert!(
            said.starts_with("Codex CLI: runs and the TUI with Codex CLI are not supported yet"),
            "{said}"
        );
        assert!(said.contains("context-pilot init codex"), "{said}");
        assert!(said.contains("--agent claude"), "{said}");
    }
}
