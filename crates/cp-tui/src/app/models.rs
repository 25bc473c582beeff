//! The model list, asked at start off the UI thread: its answer may replace the default model,
//! set the context window, or warn about a configured name the endpoint does not list.

use std::sync::Arc;
use std::sync::mpsc::Sender;

use cp_base::Level;

use crate::background::{self, Job, Reporter};
use crate::conversation::Entry;
use crate::events::AppEvent;
use cp_llm::{ModelCheck, ProviderConfig, check_model, connect, list_models};

use super::App;

/// Lists the provider's models in the background and reports the check to the event loop.
/// An endpoint that cannot be read keeps the configured (or built-in) model; it is logged.
pub fn spawn_model_check(config: ProviderConfig, tx: &Sender<AppEvent>) {
    // A failure to start is reported by `spawn`; the configured model stays.
    let _ = background::spawn(ModelListJob { config }, tx);
}

/// Reads the provider's model list; ends with [`AppEvent::ModelCheck`].
struct ModelListJob {
    config: ProviderConfig,
}

impl Job for ModelListJob {
    fn thread_name(&self) -> String {
        "cp-model-list".into()
    }

    fn what(&self) -> &'static str {
        "the model list check"
    }

    fn run(self, _progress: &Reporter) -> Option<AppEvent> {
        match list_models(&self.config) {
            Ok(models) => Some(AppEvent::ModelCheck(check_model(&self.config, &models))),
            Err(e) => {
                tracing::warn!("{e}; keeping model {}", self.config.model);
                None
            }
        }
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
