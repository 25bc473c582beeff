//! What an agent CLI's events (`cp_agent_cli::ProgressEvent`) become in the TUI: the same
//! conversation events the built-in agent sends, or a notice for the hooks' verdicts.

use cp_agent::AgentEvent;
use cp_agent_cli::ProgressEvent;
use cp_base::{Level, ToolResult};
use cp_llm::Usage;

/// One CLI event, as the UI shows it.
#[derive(Debug, Clone)]
pub enum Shown {
    /// A conversation event, as from the built-in agent.
    Agent(AgentEvent),
    /// A notice in the Conversation panel: a hook's verdict (the callbacks' outcome after an
    /// edit, the stop gate's), or that the agent compacted its context.
    Notice(Level, String),
}

/// Maps `event` of the CLI named `agent` (e.g. "Claude Code").
pub fn show(agent: &str, event: &ProgressEvent) -> Shown {
    match event {
        ProgressEvent::SessionStarted { session_id } => {
            Shown::Agent(AgentEvent::Status(format!("{agent} session {session_id}")))
        }
        ProgressEvent::Text(text) => Shown::Agent(AgentEvent::Text(text.clone())),
        ProgressEvent::ToolCall { id, name, summary } => {
            Shown::Agent(AgentEvent::ToolCalls(vec![(
                id.clone(),
                name.clone(),
                summary.clone(),
            )]))
        }
        ProgressEvent::ToolResult {
            id, is_error, text, ..
        } => {
            let result = ToolResult::new(text.clone(), *is_error);
            Shown::Agent(AgentEvent::ToolResults(vec![(id.clone(), result)]))
        }
        // The CLI reports the prompt size of each request (input + cache creation + cache
        // read), not its split: it counts as input.
        ProgressEvent::Usage { prompt_tokens, .. } => Shown::Agent(AgentEvent::Usage(Usage {
            input_tokens: *prompt_tokens,
            ..Usage::default()
        })),
        ProgressEvent::Compacted => Shown::Notice(
            Level::Warning,
            format!("{agent} compacted its context by itself"),
        ),
        // A passing stop gate says nothing in the conversation, as for the built-in
        // agent.
        ProgressEvent::Hook { event, summary, .. } if event == "Stop" && summary == "passed" => {
            Shown::Agent(AgentEvent::Status("stop gate passed".to_owned()))
        }
        // In full: a callback's report ends with its last lines of output.
        ProgressEvent::Hook { event, detail, .. } => {
            let level = if detail.starts_with("blocked") {
                Level::Warning
            } else {
                Level::Info
            };
            Shown::Notice(level, format!("{event} hook: {detail}"))
        }
        ProgressEvent::Stopping => Shown::Agent(AgentEvent::Status(
            "stopping after the tool in flight".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_and_its_result_pair_by_id() {
        let call = ProgressEvent::ToolCall {
            id: "toolu_1".into(),
            name: "Write".into(),
            summary: "{\"file_path\":\"a.sh\"}".into(),
        };
        assert!(matches!(
            show("Claude Code", &call),
            Shown::Agent(AgentEvent::ToolCalls(calls))
                if calls == [("toolu_1".to_owned(), "Write".to_owned(), "{\"file_path\":\"a.sh\"}".to_owned())]
        ));
        let result = ProgressEvent::ToolResult {
            id: "toolu_1".into(),
            is_error: true,
            summary: "no".into(),
            text: "no\nsuch file".into(),
        };
        assert!(matches!(
            show("Claude Code", &result),
            Shown::Agent(AgentEvent::ToolResults(results))
                if results == [("toolu_1".to_owned(), ToolResult::error("no\nsuch file"))]
        ));
    }

    #[test]
    fn hook_verdicts_become_notices_and_a_block_is_a_warning() {
        let blocked = ProgressEvent::Hook {
            event: "Stop".into(),
            summary: "blocked: Stop gate: verify".into(),
            detail: "blocked: Stop gate: verify".into(),
        };
        assert!(matches!(
            show("Claude Code", &blocked),
            Shown::Notice(Level::Warning, text) if text == "Stop hook: blocked: Stop gate: verify"
        ));
        let callback = ProgressEvent::Hook {
            event: "PostToolUse".into(),
            summary: "Callback 'lint' passed. Last lines of output:".into(),
            detail: "Callback 'lint' passed. Last lines of output:\nclean".into(),
        };
        assert!(matches!(
            show("Claude Code", &callback),
            Shown::Notice(Level::Info, text)
                if text == "PostToolUse hook: Callback 'lint' passed. Last lines of output:\nclean"
        ));
    }
}
