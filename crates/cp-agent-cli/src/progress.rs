//! What a running agent reports, for headless progress lines and conversation views.

use std::fmt;

/// One thing an agent CLI did, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgressEvent {
    /// The session started (the agent's session id).
    SessionStarted {
        /// The id `--resume` takes.
        session_id: String,
    },
    /// Assistant text.
    Text(String),
    /// The agent called a tool.
    ToolCall {
        /// The call's id (pairs it with its result).
        id: String,
        /// The tool, e.g. `Write` or `mcp__context-pilot__File_edit`.
        name: String,
        /// Its arguments, shortened.
        summary: String,
    },
    /// A tool call finished.
    ToolResult {
        /// The call's id.
        id: String,
        /// Whether it failed.
        is_error: bool,
        /// The first line of its result.
        summary: String,
        /// The whole result.
        text: String,
    },
    /// The prompt size of one model request.
    Usage {
        /// Prompt tokens (input + cache creation + cache read).
        prompt_tokens: u64,
        /// The window, when known.
        window: Option<u64>,
    },
    /// The agent compacted its context by itself.
    Compacted,
    /// A hook answered: the stop gate's verdict, the callbacks' outcome.
    Hook {
        /// The agent's hook event, e.g. `Stop`.
        event: String,
        /// What it decided or reported, one line.
        summary: String,
        /// The same in full (e.g. a callback's last lines of output), for a view with room.
        detail: String,
    },
    /// A stop was requested; the agent is interrupted after the tool in flight.
    Stopping,
}

impl fmt::Display for ProgressEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SessionStarted { session_id } => write!(f, "session {session_id}"),
            Self::Text(text) => f.write_str(text),
            Self::ToolCall { name, summary, .. } => write!(f, "→ {name} {summary}"),
            Self::ToolResult {
                is_error, summary, ..
            } => {
                write!(f, "{} {summary}", if *is_error { "✗" } else { "✓" })
            }
            Self::Usage {
                prompt_tokens,
                window: Some(window),
            } if *window > 0 => {
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "token counts are far below 2^52; a percentage needs no more"
                )]
                let percent = *prompt_tokens as f64 * 100.0 / *window as f64;
                write!(f, "context {percent:.1}% ({prompt_tokens}/{window} tokens)")
            }
            Self::Usage { prompt_tokens, .. } => {
                write!(f, "context {prompt_tokens} tokens (window unknown)")
            }
            Self::Compacted => f.write_str("the agent compacted its context"),
            Self::Hook { event, summary, .. } => write!(f, "{event} hook: {summary}"),
            Self::Stopping => f.write_str("stopping after the tool in flight"),
        }
    }
}

/// Receives [`ProgressEvent`]s as they happen (from the thread running the session).
pub type Progress = Box<dyn FnMut(&ProgressEvent) + Send>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_reads_as_a_percentage_of_the_window() {
        let usage = ProgressEvent::Usage {
            prompt_tokens: 19_000,
            window: Some(20_000),
        };
        assert_eq!(usage.to_string(), "context 95.0% (19000/20000 tokens)");
    }
}
