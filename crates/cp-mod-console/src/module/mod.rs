//! The console module: tools `console_*` and one panel per console, as a
//! `cp_base::Module`.
//!
//! Dependencies point one way: this file → [`tools`] → [`consoles`] → [`panel`] →
//! [`panel_feed`], with [`watch`], [`keys`] and [`cancellable`] beside them, all on top of
//! the client.

mod cancellable;
mod consoles;
mod keys;
mod panel;
mod panel_feed;
mod tool_args;
mod tools;
mod watch;

use std::sync::{Arc, PoisonError};

use cp_base::{Module, Panel, ToolDef, ToolEnv, ToolOutcome, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

pub use self::consoles::{ConsoleModule, EASY_BASH_TIMEOUT};
pub use self::keys::{BadKeyEscape, decode_keys};
pub use self::panel::{ConsolePanel, console_panel_id};
use self::tools::TOOLS;
use self::watch::{Watch, start_watch};

/// What the module saves for a restarted host: the consoles it shows and the watches in
/// progress.
#[derive(Serialize, Deserialize, Default)]
struct SavedState {
    consoles: Vec<Uuid>,
    #[serde(default)]
    watches: Vec<Watch>,
}

impl Module for ConsoleModule {
    fn id(&self) -> &'static str {
        Self::ID
    }

    fn tools(&self) -> Vec<ToolDef> {
        TOOLS.defs()
    }

    fn call_tool(&mut self, name: &str, args: &Value, env: &ToolEnv) -> ToolOutcome {
        match TOOLS.get(name) {
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
        // Quick commands that passed need no panel: their result already said everything.
        let before = self.panels.len();
        self.panels.retain(|p| !passed_quick_command(&p.info()));
        // A running console's header shows its runtime, which changes every second.
        self.panels.len() != before || self.panels.iter().any(|p| p.info().status.is_running())
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

/// A `console_easy_bash` run that exited 0 with output short enough to be returned whole:
/// its panel goes away by itself, so passing commands do not pile up in the sidebar. One
/// that failed, timed out, or whose result points to its panel for the rest, stays.
fn passed_quick_command(info: &crate::console_info::ConsoleInfo) -> bool {
    info.label.as_deref() == Some(tools::EASY_BASH_LABEL)
        && info.status.is_success()
        && info.output_len <= tools::INLINE_LIMIT as u64
}

/// `text` in a fenced block for a tool result, or `(no output)` when it is empty.
fn fenced(text: &str) -> String {
    if text.is_empty() {
        "(no output)".to_owned()
    } else {
        format!("```\n{text}\n```")
    }
}
