//! Context Pilot's wiring for one run, in a private temp directory: the MCP server entry, the
//! hook settings with the probe hook that proves they were loaded (see [`crate::wired`]), and
//! the file the hooks and the MCP server report to. Nothing is written into the user's
//! project or settings.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use cp_base::{WORKER_ENV, WorkerId};
use serde_json::{Value, json};

use crate::AgentError;
use crate::hook_report::HOOK_REPORT_ENV;
use crate::wired::PROBE_COMMAND;

/// The MCP server's name, as the agents prefix its tools (`mcp__context-pilot__…`).
pub const MCP_SERVER: &str = "context-pilot";

/// What the driver passes to the agent: how to start `context-pilot` for the project and the
/// worker (the hooks come from the agent's descriptor, built as `context-pilot init` builds
/// them).
#[derive(Debug, Clone)]
pub struct WiringSpec {
    /// The `context-pilot` binary the agent starts (`mcp`, `hook …`).
    pub program: String,
    /// The project root.
    pub root: PathBuf,
    /// The run's worker: the MCP server and the hooks act as it.
    pub worker: WorkerId,
}

impl WiringSpec {
    /// The MCP server entry: `context-pilot mcp` for the project, as the run's worker,
    /// reporting to `report` that the agent started it (agents may filter the environment
    /// they pass to MCP servers, so the report file is named explicitly).
    pub fn mcp_server(&self, report: &Path) -> Value {
        json!({
            "command": self.program,
            "args": ["--project", self.root, "--worker", self.worker.as_str(), "mcp"],
            "env": {WORKER_ENV: self.worker.as_str(), HOOK_REPORT_ENV: report},
        })
    }

    /// The hook settings `hooks` (`{"hooks": {…}}`) with the probe hook (`context-pilot
    /// wiring-probe`) added on the agent's `event` that runs before the model is asked.
    pub fn hooks_with_probe(&self, hooks: Value, event: &str) -> Value {
        let mut settings = hooks;
        if !settings["hooks"].is_object() {
            settings["hooks"] = json!({});
        }
        // Only the fields both agents read alike (their timeouts differ in unit; the
        // default, a minute, is plenty for a probe that takes milliseconds).
        let probe = json!({"hooks": [{
            "type": "command",
            "command": format!("{} {PROBE_COMMAND}", cp_base::shell_word(&self.program)),
        }]});
        match settings["hooks"][event].as_array_mut() {
            Some(list) => list.push(probe),
            None => settings["hooks"][event] = json!([probe]),
        }
        settings
    }
}

/// The wiring's file the hooks and the MCP server report to.
const HOOK_REPORTS: &str = "hook-reports.jsonl";

/// The written files; removed when dropped.
#[derive(Debug)]
pub struct Wiring {
    dir: tempfile::TempDir,
}

impl Wiring {
    /// A new private temp directory under the system's temp directory.
    pub fn create() -> Result<Self, AgentError> {
        Self::create_in(&std::env::temp_dir())
    }

    /// Like [`create`](Self::create), under the user's own runtime or cache directory
    /// (`$XDG_RUNTIME_DIR`, else `$XDG_CACHE_HOME`, else `~/.cache`, then
    /// `context-pilot/agents/`): for wiring that holds links to the user's own files, which
    /// should not sit below a directory everyone can list.
    pub fn create_private() -> Result<Self, AgentError> {
        let base = private_base();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&base)
            .map_err(|source| AgentError::Wiring {
                path: base.clone(),
                source,
            })?;
        Self::create_in(&base)
    }

    fn create_in(base: &Path) -> Result<Self, AgentError> {
        let dir = tempfile::Builder::new()
            .prefix("context-pilot-agent-")
            .tempdir_in(base)
            .map_err(|source| AgentError::Wiring {
                path: base.to_owned(),
                source,
            })?;
        Ok(Self { dir })
    }

    /// Writes `value` as the file `name` of the directory.
    pub fn write(&self, name: &str, value: &Value) -> Result<(), AgentError> {
        let path = self.path(name);
        std::fs::write(&path, format!("{value:#}\n"))
            .map_err(|source| AgentError::Wiring { path, source })
    }

    /// The file the hooks and the MCP server report to (`CP_HOOK_REPORT`).
    pub fn report_path(&self) -> PathBuf {
        self.path(HOOK_REPORTS)
    }

    /// The file `name` in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// `$XDG_RUNTIME_DIR`, else `$XDG_CACHE_HOME`, else `~/.cache` (else the temp directory),
/// then `context-pilot/agents`.
fn private_base() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("XDG_RUNTIME_DIR")
        .or_else(|| var("XDG_CACHE_HOME"))
        .or_else(|| var("HOME").map(|home| home.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("context-pilot")
        .join("agents")
}
