//! The hook events Context Pilot handles, each one of an agent's (its descriptor's
//! `hook_events`), and how the command line names them.

use cp_agent_cli::{AgentCli, EventKind, HookEventSpec, HookReport, HookReportKind};

/// A hook event Context Pilot handles: one of an agent's events (its descriptor's
/// `hook_events`), named on the command line by our name or the agent's own.
#[derive(Debug, Clone, Copy)]
pub struct HookEvent {
    /// The agent whose hook this is.
    pub agent: &'static dyn AgentCli,
    event: &'static HookEventSpec,
}

impl HookEvent {
    /// The event named `name` (e.g. `post-tool-use` or `PostToolUse`), of whichever agent.
    pub fn named(name: &str) -> Option<Self> {
        cp_agent_cli::hook_event(name).map(|(agent, event)| Self { agent, event })
    }

    /// Every agent's events, in the table's order.
    pub fn all() -> impl Iterator<Item = Self> {
        cp_agent_cli::AGENT_CLIS.iter().flat_map(|agent| {
            agent.spec().hook_events.iter().map(|event| Self {
                agent: *agent,
                event,
            })
        })
    }

    /// What Context Pilot does at it.
    pub fn kind(self) -> EventKind {
        self.event.kind
    }

    /// The agent's own name of the event, e.g. `PostToolUse`.
    pub fn agent_name(self) -> &'static str {
        self.event.name
    }

    /// The report of `verdict` with `text` at this event.
    pub(crate) fn report(self, verdict: HookReportKind, text: String) -> HookReport {
        HookReport {
            event: self.agent_name().to_owned(),
            verdict,
            text,
            prompt_tokens: None,
        }
    }

    /// The name used on the command line, e.g. `post-tool-use`.
    pub fn cli_name(self) -> &'static str {
        self.event.cli_name
    }

    /// The command line's parser: every agent's events, with help, and the agents' own names
    /// as aliases.
    pub fn parser() -> impl clap::builder::TypedValueParser<Value = Self> {
        use clap::builder::TypedValueParser as _;
        // An agent's own name is an alias for the first agent that has it (Codex CLI's
        // `PostToolUse` and `Stop` are Claude Code's names too: Codex uses ours).
        let mut aliased = std::collections::HashSet::new();
        let values: Vec<_> = cp_agent_cli::AGENT_CLIS
            .iter()
            .flat_map(|agent| {
                let spec = agent.spec();
                spec.hook_events.iter().map(move |event| (spec, event))
            })
            .map(|(spec, event)| {
                let does = event.kind.does();
                let value = clap::builder::PossibleValue::new(event.cli_name)
                    .help(format!("{} `{}`: {does}", spec.display_name, event.name));
                if aliased.insert(event.name) {
                    value.alias(event.name)
                } else {
                    value
                }
            })
            .collect();
        clap::builder::PossibleValuesParser::new(values)
            .try_map(|name: String| Self::named(&name).ok_or(UnknownHookEvent(name)))
    }
}

/// A hook event no agent has (the parser's possible values keep it from happening).
#[derive(Debug, thiserror::Error)]
#[error("no agent has the hook event {0:?}")]
pub struct UnknownHookEvent(String);
