//! The model list, asked at start off the UI thread: its answer may replace the default model,
//! set the context window, or warn about a configured name the endpoint does not list.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use cp_base::Level;

use crate::tui::conversation::Entry;
use crate::tui::events::AppEvent;
use cp_llm::{ModelCheck, ProviderConfig, check_model, connect, list_models};

use super::App;

/// Lists the provider's models on a worker thread and reports the check to the event loop.
/// An endpoint that cannot be read keeps the configured (or built-in) model; it is logged.
pub fn spawn_model_check(config: ProviderConfig, tx: Sender<AppEvent>) {
    let spawned = std::thread::Builder::new()
        .name("cp-model-list".into())
        .spawn(move || match list_models(&config) {
            Ok(models) => {
                let _ = tx.send(AppEvent::ModelCheck(check_model(&config, &models)));
            }
            Err(e) => tracing::warn!("{e}; keeping model {}", config.model),
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the model list thread: {e}");
    }
}

impl App {
    /// Applies the model list's verdict: a running turn keeps its provider; the next turn uses
    /// the checked configuration.
    pub(super) fn apply_model_check(&mut self, check: ModelCheck) {
        let Some(current) = &self.agent.provider else {
            return;
        };
        if let Some(text) = check.notice {
            let level = if check.unknown_model {
                Level::Warning
            } else {
                Level::Info
            };
            self.conversation.push(Entry::Notice { level, text });
        }
        if *current.config() == check.config {
            return;
        }
        self.agent.usage.context_window = check.config.context_window;
        self.agent.usage.price = check.config.effective_price();
        self.agent.provider = Some(Arc::from(connect(check.config)));
    }
}
