//! Context Pilot's wiring for one run, in a private temp directory: the MCP server entry and
//! the hook settings. Nothing is written into the user's project or settings.

use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use cp_base::{WORKER_ENV, WorkerId};
use serde_json::{Value, json};

use crate::AgentError;

/// The MCP server's name, as the agents prefix its tools (`mcp__context-pilot__…`).
pub const MCP_SERVER: &str = "context-pilot";

/// What the runner passes to the agent: how to start `context-pilot`, and the hook settings
/// (built by the caller with the same builders `context-pilot init` uses).
#[derive(Debug, Clone)]
pub struct WiringSpec {
    /// The `context-pilot` binary the agent starts (`mcp`, `hook …`).
    pub program: String,
    /// The project root.
    pub root: PathBuf,
    /// The run's worker: the MCP server and the hooks act as it.
    pub worker: WorkerId,
    /// The agent's settings holding Context Pilot's hooks (`{"hooks": {…}}`).
    pub hook_settings: Value,
}

impl WiringSpec {
    /// The MCP server entry: `context-pilot mcp` for the project, as the run's worker.
    pub fn mcp_server(&self) -> Value {
        json!({
            "command": self.program,
            "args": ["--project", self.root, "--worker", self.worker.as_str(), "mcp"],
            "env": {WORKER_ENV: self.worker.as_str()},
        })
    }
}

/// The written files; removed when dropped.
#[derive(Debug)]
pub struct Wiring {
    dir: tempfile::TempDir,
}

impl Wiring {
    /// Writes `files` (name → JSON) into a new private temp directory under the system's
    /// temp directory.
    pub fn write(files: &[(&str, &Value)]) -> Result<Self, AgentError> {
        Self::write_in(&std::env::temp_dir(), files)
    }

    /// Like [`write`](Self::write), under the user's own runtime or cache directory
    /// (`$XDG_RUNTIME_DIR`, else `$XDG_CACHE_HOME`, else `~/.cache`, then
    /// `context-pilot/agents/`): for agents that refuse settings files below a directory
    /// others can write to, as Gemini CLI does for `/tmp`.
    pub fn write_private(files: &[(&str, &Value)]) -> Result<Self, AgentError> {
        let base = private_base();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&base)
            .map_err(|source| AgentError::Wiring {
                path: base.clone(),
                source,
            })?;
        Self::write_in(&base, files)
    }

    fn write_in(base: &Path, files: &[(&str, &Value)]) -> Result<Self, AgentError> {
        let dir = tempfile::Builder::new()
            .prefix("context-pilot-agent-")
            .tempdir_in(base)
            .map_err(|source| AgentError::Wiring {
                path: base.to_owned(),
                source,
            })?;
        for (name, value) in files {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("{value:#}\n"))
                .map_err(|source| AgentError::Wiring { path, source })?;
        }
        Ok(Self { dir })
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
