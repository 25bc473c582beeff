//! The descriptor of one agent CLI: everything Context Pilot knows about it, in one place.
//!
//! Each agent's folder (`claude/`, `gemini/`) implements [`AgentCli`] once, and the table of
//! kinds ([`crate::AGENT_CLIS`]) lists them. The rest of the code asks the descriptor and never
//! names an agent:
//!
//! - what it is: [`AgentSpec`] (names, binary, minimum version, install hint, when `--resume`
//!   is safe, hook events, edit tools, stream parser and model table);
//! - what its hooks answer: [`AgentCli::hook_reply`];
//! - how `context-pilot init` wires it into a project: [`AgentCli::project_settings`];
//! - how a run wires it for one invocation, and the commands of a session and of its handoff
//!   turn: [`AgentCli::run_hooks`], [`AgentCli::wire`], [`AgentCli::session_command`],
//!   [`AgentCli::handoff_command`]. Stopping (SIGINT at a tool boundary, a grace period, then
//!   its process tree) and resuming (`--resume ID`, else a fresh session given the
//!   conversation so far) are the same for every agent; the spec says from which version its
//!   `--resume` can be trusted.

use std::process::Command;

use cp_orchestrate::{DriverError, SessionControl};
use serde_json::Value;

use crate::AgentError;
use crate::hook_reply::{EventKind, Reply};
use crate::item::Item;
use crate::project_settings::{SettingsFile, hooks_of};
use crate::session::CliSession;
use crate::wiring::{Wiring, WiringSpec};

/// One agent CLI Context Pilot drives and wires; implemented once in each agent's folder.
pub trait AgentCli: Sync + std::fmt::Debug {
    /// What the agent is (plain data).
    fn spec(&self) -> &'static AgentSpec;

    /// What a hook prints on stdout at an event of `kind` that decided `reply`, in this
    /// agent's format; `None` prints nothing.
    fn hook_reply(&self, kind: EventKind, reply: &Reply) -> Option<String>;

    /// The project settings files `context-pilot init` merges Context Pilot into (the MCP
    /// server running `program mcp`, and the hooks running `program hook …`).
    fn project_settings(&self, program: &str) -> Vec<SettingsFile>;

    /// What `context-pilot init` tells the person after wiring the project at `root`, beyond
    /// what it changed (e.g. steps to take in the agent itself).
    fn init_notes(&self, _root: &std::path::Path) -> Option<String> {
        None
    }

    /// Why runs and the TUI cannot drive this agent yet; `None` when they can.
    fn runs_unsupported(&self) -> Option<AgentError> {
        None
    }

    /// The hooks (`{"hooks": {…}}`) a run passes for one invocation: by default those `init`
    /// writes.
    fn run_hooks(&self, program: &str) -> Value {
        hooks_of(self.project_settings(program))
    }

    /// Writes one run's wiring (the MCP server of `spec`, and `hooks`, which hold the probe
    /// hook already) where this agent reads it for one invocation.
    fn wire(&self, spec: &WiringSpec, hooks: &Value) -> Result<Wiring, AgentError>;

    /// The command of a session: `session.command(prompt)` plus this agent's options, with
    /// `session_args` (`--session-id NEW` or `--resume ID`).
    fn session_command(
        &self,
        session: &CliSession,
        prompt: &str,
        session_args: &[String; 2],
    ) -> Command;

    /// The command of the handoff turn after `session` was stopped: only `Checkpoint_handoff`
    /// may be used, and no hooks run.
    fn handoff_command(
        &self,
        session: &CliSession,
        request: &str,
        control: &SessionControl,
    ) -> Result<Command, DriverError>;
}

/// The facts of one agent CLI.
#[derive(Debug, Clone, Copy)]
pub struct AgentSpec {
    /// The name on the command line and in config.json, e.g. `claude`.
    pub name: &'static str,
    /// The name people know it by, e.g. "Claude Code".
    pub display_name: &'static str,
    /// The program on `PATH`, e.g. `claude`.
    pub program: &'static str,
    /// How to install it, for error messages.
    pub install: &'static str,
    /// The oldest version the driver supports (`major.minor.patch`).
    pub min_version: (u64, u64, u64),
    /// The first version whose `--resume` gives a session the model's API accepts; `None`
    /// while no release does. Below it, the driver does not resume: the handoff turn and the
    /// next interactive turn run in a fresh session given the conversation so far.
    pub resume_since: Option<(u64, u64, u64)>,
    /// The hook event that runs once the prompt is in and before the model is asked: the run
    /// adds its probe hook there, which proves the hooks were loaded (see [`crate::wired`]).
    pub probe_event: &'static str,
    /// The hook events `context-pilot hook` answers for this agent.
    pub hook_events: &'static [HookEventSpec],
    /// The tools that edit files, and where their arguments name the file.
    pub edit_tools: &'static [EditTool],
    /// The tools that run shell commands, which may edit any file: after one, the hook
    /// compares the work tree with what it saw at the session's previous hook call.
    pub shell_tools: &'static [&'static str],
    /// Parses one line of its stream (`--output-format stream-json`).
    pub parse_line: fn(&str) -> Vec<Item>,
    /// The context window of a model it runs, when known.
    pub model_window: fn(&str) -> Option<u64>,
}

impl AgentSpec {
    /// The edit tools and the shell tools as a hook matcher, e.g.
    /// `Write|Edit|MultiEdit|NotebookEdit|Bash`.
    pub fn edit_matcher(&self) -> String {
        self.edit_tools
            .iter()
            .map(|tool| tool.name)
            .chain(self.shell_tools.iter().copied())
            .collect::<Vec<_>>()
            .join("|")
    }
}

/// One hook event of an agent that `context-pilot hook` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEventSpec {
    /// The name on our command line, e.g. `post-tool-use`.
    pub cli_name: &'static str,
    /// The agent's own name of the event, e.g. `PostToolUse` (accepted on the command line
    /// too).
    pub name: &'static str,
    /// What Context Pilot does at it.
    pub kind: EventKind,
}

/// A tool of an agent that edits files.
#[derive(Debug, Clone, Copy)]
pub struct EditTool {
    /// The tool's name, e.g. `Edit`.
    pub name: &'static str,
    /// Where its arguments name the files it edited.
    pub paths: EditPaths,
}

/// Where an edit tool's arguments (`tool_input`) name the files it edited.
#[derive(Debug, Clone, Copy)]
pub enum EditPaths {
    /// One file, under the first of these argument keys that is present, e.g. `file_path`.
    Keys(&'static [&'static str]),
    /// Any number of files, read from the arguments with what happened to each, e.g. the
    /// paths of Codex's `apply_patch` from its patch text. An error names what is wrong.
    Parse(ParsePaths),
}

/// Reads the edited files from an edit tool's arguments, or says what is wrong with them.
pub type ParsePaths = fn(&serde_json::Map<String, Value>) -> Result<Vec<EditedPath>, String>;

/// One file an edit tool's arguments name, and what the edit did to it (`None`: the caller
/// tells from the file system).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedPath {
    /// As the agent wrote it: absolute, or relative to the payload's `cwd`.
    pub path: String,
    /// Added, updated or deleted, when the arguments say.
    pub kind: Option<cp_base::ChangeKind>,
}
