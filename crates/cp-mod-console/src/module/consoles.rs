//! `ConsoleModule` itself: its client, the consoles it shows and the watches in progress.
//! The tools act on it; `mod.rs` makes it a `cp_base::Module`.

use std::path::Path;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use cp_base::Notifier;
use uuid::Uuid;

use super::panel::{ConsolePanel, console_panel_id};
use super::watch::{Watch, Watches};
use crate::ConsoleError;
use crate::client::{ClientConfig, ConsoleClient, ConsoleHandle};

/// Default time limit of `console_easy_bash`.
pub const EASY_BASH_TIMEOUT: Duration = Duration::from_secs(10);

/// The console module: tools `console_*` and one panel per console.
pub struct ConsoleModule {
    config: Option<ClientConfig>,
    client: Option<ConsoleClient>,
    /// Shared with the published views, which keep drawing a closed console until replaced.
    pub(super) panels: Vec<Arc<ConsolePanel>>,
    pub(super) watches: Watches,
    next_watch: u64,
    pub(super) easy_timeout: Duration,
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

    /// Opens (or finds) the panel of `handle`'s console and returns its panel id.
    pub fn ensure_panel(
        &mut self,
        handle: &ConsoleHandle,
        notifier: &Notifier,
    ) -> Result<String, ConsoleError> {
        let id = handle.id();
        if !self.panels.iter().any(|p| p.console_id() == id) {
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
        self.panels.iter().map(|p| p.console_id()).collect()
    }

    pub(super) fn add_watch(&mut self, watch: Watch) -> u64 {
        self.next_watch += 1;
        let key = self.next_watch;
        self.watches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, watch);
        key
    }
}
