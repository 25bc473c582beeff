//! `ConsoleModule`: the console tools and panels as a `cp_base::Module`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cp_base::{Module, Notifier, Panel, ToolDef, ToolEnv, ToolOutcome, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::panel::console_panel_id;
use crate::tools::{TOOLS, start_watch};
use crate::{ClientConfig, ConsoleClient, ConsoleError, ConsolePanel, SessionHandle};

/// Default time limit of `console_easy_bash`.
pub const EASY_BASH_TIMEOUT: Duration = Duration::from_secs(10);

/// A `console_watch` in progress; saved with the module state so a restarted host resumes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Watch {
    pub(crate) console: Uuid,
    /// `None`: wait for exit.
    pub(crate) pattern: Option<String>,
}

/// Watches in progress, keyed by a number so a finished watch removes exactly itself.
pub(crate) type Watches = Arc<Mutex<BTreeMap<u64, Watch>>>;

#[derive(Serialize, Deserialize, Default)]
struct SavedState {
    consoles: Vec<Uuid>,
    #[serde(default)]
    watches: Vec<Watch>,
}

/// The console module: tools `console_*` and one panel per console.
pub struct ConsoleModule {
    config: Option<ClientConfig>,
    client: Option<ConsoleClient>,
    /// Shared with the published views, which keep drawing a closed console until replaced.
    pub(crate) panels: Vec<Arc<ConsolePanel>>,
    pub(crate) watches: Watches,
    pub(crate) next_watch: u64,
    pub(crate) easy_timeout: Duration,
}

impl Default for ConsoleModule {
    fn default() -> Self {
        Self::new()
    }
}

impl ConsoleModule {
    /// Stable module id.
    pub const ID: &'static str = "console";

    /// A module whose client uses the default server command (this executable's
    /// `console-server` subcommand, or `$CP_CONSOLE_SERVER_EXE`).
    pub fn new() -> Self {
        Self {
            config: None,
            client: None,
            panels: Vec::new(),
            watches: Arc::default(),
            next_watch: 0,
            easy_timeout: EASY_BASH_TIMEOUT,
        }
    }

    /// A module with this client configuration (its `project_root` is replaced by the tool
    /// environment's project).
    pub fn with_client_config(config: ClientConfig) -> Self {
        Self {
            config: Some(config),
            ..Self::new()
        }
    }

    /// Changes the time limit of `console_easy_bash`.
    #[must_use]
    pub fn easy_bash_timeout(mut self, timeout: Duration) -> Self {
        self.easy_timeout = timeout;
        self
    }

    /// The console client for `root`, created on first use.
    pub fn client(&mut self, root: &Path) -> Result<ConsoleClient, ConsoleError> {
        if let Some(c) = &self.client
            && std::fs::canonicalize(root).is_ok_and(|r| r == c.project_root())
        {
            return Ok(c.clone());
        }
        let mut config = self
            .config
            .clone()
            .unwrap_or_else(|| ClientConfig::new(root));
        config.project_root = root.to_path_buf();
        let client = ConsoleClient::new(config)?;
        self.client = Some(client.clone());
        Ok(client)
    }

    /// Opens (or finds) the panel of `handle`'s session and returns its panel id.
    pub fn ensure_panel(
        &mut self,
        handle: &SessionHandle,
        notifier: &Notifier,
    ) -> Result<String, ConsoleError> {
        let id = handle.id();
        if !self.panels.iter().any(|p| p.session_id() == id) {
            let info = handle.info()?;
            self.panels.push(Arc::new(ConsolePanel::open(
                handle.clone(),
                info,
                notifier.clone(),
            )));
        }
        Ok(console_panel_id(id))
    }

    /// The consoles this module shows, oldest first.
    pub fn console_ids(&self) -> Vec<Uuid> {
        self.panels.iter().map(|p| p.session_id()).collect()
    }

    pub(crate) fn add_watch(&mut self, watch: Watch) -> u64 {
        self.next_watch += 1;
        let key = self.next_watch;
        self.watches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, watch);
        key
    }
}

impl Module for ConsoleModule {
    fn id(&self) -> &'static str {
        Self::ID
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS
            .iter()
            .map(|t| ToolDef::new(t.name, t.description, (t.schema)()))
            .collect()
    }

    fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome {
        match TOOLS.iter().find(|t| t.name == name) {
            Some(tool) => (tool.handler)(self, args, env),
            None => {
                ToolResult::error(format!("the console module has no tool named `{name}`")).into()
            }
        }
    }

    fn panels(&self) -> Vec<Arc<dyn Panel>> {
        self.panels
            .iter()
            .map(|p| Arc::clone(p) as Arc<dyn Panel>)
            .collect()
    }

    fn panel_input(&mut self, panel_id: &str, input: &[u8]) -> bool {
        self.panels
            .iter()
            .find(|p| p.id() == panel_id)
            .and_then(|p| p.handle())
            .is_some_and(|h| h.send(input).is_ok())
    }

    fn close_panel(&mut self, panel_id: &str) -> bool {
        let before = self.panels.len();
        self.panels.retain(|p| p.id() != panel_id);
        self.panels.len() != before
    }

    fn on_tick(&mut self, _env: &ToolEnv) -> bool {
        // A running console's header shows its runtime, which changes every second.
        self.panels.iter().any(|p| p.info().status.is_running())
    }

    fn save_state(&self) -> Option<Value> {
        let state = SavedState {
            consoles: self.console_ids(),
            watches: self
                .watches
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
                .cloned()
                .collect(),
        };
        serde_json::to_value(state).ok()
    }

    fn load_state(&mut self, state: &Value, env: &ToolEnv) {
        let saved: SavedState = match serde_json::from_value(state.clone()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("console module: ignoring saved state {state}: {e}");
                return;
            }
        };
        let client = match self.client(env.project.root()) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("console module: cannot restore consoles: {e}");
                return;
            }
        };
        for id in saved.consoles {
            match client.attach(id) {
                Ok(handle) => {
                    if let Err(e) = self.ensure_panel(&handle, &env.notifier) {
                        tracing::warn!("console module: cannot reopen console {id}: {e}");
                    }
                }
                Err(e) => tracing::warn!("console module: cannot reattach console {id}: {e}"),
            }
        }
        for watch in saved.watches {
            if let Ok(handle) = client.attach(watch.console) {
                let key = self.add_watch(watch.clone());
                start_watch(
                    handle,
                    watch,
                    key,
                    Arc::clone(&self.watches),
                    env.notifier.clone(),
                );
            }
        }
    }
}
