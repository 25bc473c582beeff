//! The UI's side of the agent: provider, history, usage, and the turn in flight.

pub(crate) mod cli_agent;
pub(crate) mod cli_events;
pub(crate) mod cli_session_file;
pub(crate) mod restartable;
pub(crate) mod running_turn;

use std::collections::HashMap;
use std::sync::Arc;

use cp_agent::{AgentInbox, UsageMeter};

use crate::agent::running_turn::RunningTurn;

use crate::agent::cli_agent::CliAgent;
use cp_llm::{Message, Provider};

/// Everything the UI keeps about the agent between events.
#[derive(Default)]
pub struct AgentState {
    pub provider: Option<Arc<dyn Provider>>,
    /// Why no provider could be configured (a bad config), shown to the user.
    pub provider_error: Option<String>,
    /// The conversation as the model sees it.
    pub messages: Vec<Message>,
    pub usage: UsageMeter,
    pub inbox: AgentInbox,
    pub turn: Option<RunningTurn>,
    /// Conversation entry receiving streamed text, if any.
    pub streaming_entry: Option<usize>,
    /// Conversation entry of each tool call, by call id.
    pub tool_entries: HashMap<String, usize>,
    /// Short status of the running turn for the status bar.
    pub status: Option<String>,
    /// When the agent loop reported `status` (e.g. the stop gate's test run started),
    /// so the status bar can show how long it has been running.
    pub status_since: Option<std::time::Instant>,
    /// Set when the stop gate's block limit let the agent stop with work left; shown
    /// in the status bar until the next turn starts.
    pub work_left: Option<String>,
    /// The person's own agent CLI runs the turns instead of the built-in loop
    /// (`--agent claude|gemini|codex`); `provider` is then `None`.
    pub cli: Option<CliAgent>,
}

impl AgentState {
    pub fn new(provider: Option<Arc<dyn Provider>>, provider_error: Option<String>) -> Self {
        let window = provider.as_ref().map_or(0, |p| p.config().context_window);
        let price = provider.as_ref().and_then(|p| p.config().effective_price());
        Self {
            provider,
            provider_error,
            usage: UsageMeter::priced(window, price),
            ..Self::default()
        }
    }

    /// The provider from the environment and the `llm` section of config.json. A bad
    /// configuration is reported, not fatal: the TUI still works without an agent.
    pub fn from_config(project: &cp_base::Project) -> Self {
        match cp_llm::configured_provider(project) {
            Ok(provider) => Self::new(provider, None),
            Err(e) => Self::new(None, Some(e.to_string())),
        }
    }

    /// The TUI with an agent CLI (`--agent claude|gemini|codex`) instead of the built-in loop.
    pub fn with_cli(cli: CliAgent) -> Self {
        Self {
            usage: UsageMeter::new(cli.window()),
            cli: Some(cli),
            ..Self::default()
        }
    }

    /// Whether there is an agent to talk to: a provider, or an agent CLI.
    pub fn has_agent(&self) -> bool {
        self.provider.is_some() || self.cli.is_some()
    }

    pub fn running(&self) -> bool {
        self.turn.is_some()
    }

    /// `Anthropic claude-… ` for the status bar.
    pub fn label(&self) -> Option<String> {
        if let Some(cli) = &self.cli {
            return Some(cli.label());
        }
        self.provider
            .as_ref()
            .map(|p| format!("{} {}", p.config().label(), p.config().model))
    }
}
