//! What an agent CLI is, as data: its names, binary, minimum version and install hint, when
//! its `--resume` can be trusted, its hook events, the tools that edit files (and where their
//! arguments name the files), its shell tools, its stream parser and model table. Each
//! agent's folder fills one [`AgentSpec`]; its behaviour is the [`AgentCli`](crate::AgentCli)
//! trait's.

use serde_json::Value;

use crate::hook_reply::EventKind;
use crate::item::Item;

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
    /// Whether the agent names its sessions itself (Codex's thread id): the id of the stream's
    /// first event is the one to resume, not the `--session-id` the driver chose.
    pub names_its_sessions: bool,
    /// The agent's own record of a session, read while it runs, when its stream does not
    /// carry the prompt size of each request (Codex's session file).
    pub session_log: Option<SessionLogSpec>,
}

/// Finds the record of session `id`, given the extra environment of the invocation.
pub type LocateLog = fn(env: &[(String, String)], id: &str) -> Option<std::path::PathBuf>;

/// Where an agent records a session as it runs, and how to read its lines.
#[derive(Debug, Clone, Copy)]
pub struct SessionLogSpec {
    /// The file of session `id`, given the extra environment of the invocation (e.g.
    /// `CODEX_HOME`); `None` while it does not exist.
    pub locate: LocateLog,
    /// The items of one line of it (prompt sizes, the window, compactions).
    pub parse_line: fn(&str) -> Vec<Item>,
}

impl AgentSpec {
    /// The events the wiring of `version` has (`None`: the newest release's).
    pub fn wired_events(
        &self,
        version: Option<Version>,
    ) -> impl Iterator<Item = &'static HookEventSpec> + use<> {
        let events: &'static [HookEventSpec] = self.hook_events;
        events.iter().filter(move |event| event.wired_for(version))
    }

    /// The matcher of `event`'s hook group, if it has one.
    pub fn matcher_of(&self, event: &HookEventSpec) -> Option<String> {
        match event.matcher {
            HookMatcher::All => None,
            HookMatcher::EditTools => Some(self.edit_matcher()),
            HookMatcher::Exact(value) => Some(value.to_owned()),
        }
    }

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

/// An agent CLI's version, `(major, minor, patch)`.
pub type Version = (u64, u64, u64);

/// One hook event of an agent that `context-pilot hook` handles, and the versions whose
/// wiring has it.
///
/// Agent CLIs grow new events every few weeks, and a newer event may take over an older
/// one's job (Claude Code's `PostToolBatch` fires callbacks once per batch where
/// `PostToolUse` fired them once per edit): each event says from which version it is wired
/// (`since`) and from which version it no longer is (`until`), so an older version keeps the
/// wiring it had. `context-pilot hook` answers every event of the table, whatever the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEventSpec {
    /// The name on our command line, e.g. `post-tool-use`.
    pub cli_name: &'static str,
    /// The agent's own name of the event, e.g. `PostToolUse` (accepted on the command line
    /// too).
    pub name: &'static str,
    /// What Context Pilot does at it.
    pub kind: EventKind,
    /// Which of the event's firings run our hook.
    pub matcher: HookMatcher,
    /// The first version wired with it (`None`: every supported version).
    pub since: Option<Version>,
    /// The first version no longer wired with it (`None`: still wired in the newest).
    pub until: Option<Version>,
}

impl HookEventSpec {
    /// Whether the wiring of `version` has this event; an unknown version (`None`, e.g. an
    /// agent not installed yet) gets the newest release's wiring.
    pub fn wired_for(&self, version: Option<Version>) -> bool {
        match version {
            None => self.until.is_none(),
            Some(v) => {
                self.since.is_none_or(|since| v >= since)
                    && self.until.is_none_or(|until| v < until)
            }
        }
    }
}

/// Which firings of an event run our hook: the hook group's `matcher`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookMatcher {
    /// Every firing (no matcher).
    All,
    /// The agent's edit and shell tools ([`AgentSpec::edit_matcher`]).
    EditTools,
    /// Exactly this value, e.g. `compact` for a `SessionStart` after compaction.
    Exact(&'static str),
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
