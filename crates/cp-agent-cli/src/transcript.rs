//! The conversation of the current agent session as Context Pilot saw it in the stream: the
//! prompts it sent, the agent's text, its tool calls and their results. A fresh session is
//! given it in place of `--resume` when the agent CLI cannot resume safely (see
//! [`AgentCli::resume_since`](crate::AgentCli)).

use std::collections::VecDeque;
use std::fmt::Write as _;

use cp_base::text::fit_end;

/// How much of the conversation is kept, in characters of its entries: the oldest go first.
const KEEP_CHARS: usize = 24_000;
/// Longest prompt or agent text kept whole.
const TEXT_CHARS: usize = 4_000;
/// Longest tool argument list or result kept.
const TOOL_CHARS: usize = 600;

/// One step of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A prompt Context Pilot sent (the person's message, the task, a handoff).
    Prompt(String),
    /// What the agent wrote.
    Text(String),
    /// A tool call: the tool and its arguments.
    ToolCall { name: String, input: String },
    /// A tool's result.
    ToolResult { is_error: bool, text: String },
}

impl Entry {
    fn chars(&self) -> usize {
        match self {
            Self::Prompt(text) | Self::Text(text) | Self::ToolResult { text, .. } => {
                text.chars().count()
            }
            Self::ToolCall { name, input } => name.chars().count() + input.chars().count(),
        }
    }
}

/// The bounded conversation of one session.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    entries: VecDeque<Entry>,
    chars: usize,
    /// Entries dropped from the front to stay within [`KEEP_CHARS`].
    dropped: usize,
}

impl Transcript {
    /// Forgets everything: a new session starts.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records a prompt sent to the agent.
    pub fn prompt(&mut self, text: &str) {
        self.push(Entry::Prompt(fit_end(text.trim(), TEXT_CHARS)));
    }

    /// Records a piece of the agent's text; pieces streamed one after another join.
    pub fn text(&mut self, piece: &str) {
        if let Some(Entry::Text(text)) = self.entries.back_mut() {
            if text.chars().count() < TEXT_CHARS {
                text.push_str(piece);
                self.chars += piece.chars().count();
            }
            return;
        }
        self.push(Entry::Text(piece.to_owned()));
    }

    /// Records a tool call.
    pub fn tool_call(&mut self, name: &str, input: &serde_json::Value) {
        self.push(Entry::ToolCall {
            name: name.to_owned(),
            input: fit_end(&input.to_string(), TOOL_CHARS),
        });
    }

    /// Records a tool's result.
    pub fn tool_result(&mut self, is_error: bool, text: &str) {
        self.push(Entry::ToolResult {
            is_error,
            text: fit_end(text.trim(), TOOL_CHARS),
        });
    }

    fn push(&mut self, entry: Entry) {
        self.chars += entry.chars();
        self.entries.push_back(entry);
        while self.chars > KEEP_CHARS && self.entries.len() > 1 {
            if let Some(old) = self.entries.pop_front() {
                self.chars = self.chars.saturating_sub(old.chars());
                self.dropped += 1;
            }
        }
    }

    /// The conversation as markdown, oldest first, for a fresh session's prompt.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        if self.dropped > 0 {
            let _ = writeln!(
                out,
                "(the first {} steps are left out; this is the latest part)\n",
                self.dropped
            );
        }
        for entry in &self.entries {
            let _ = match entry {
                Entry::Prompt(text) => writeln!(out, "**Prompt:**\n{}\n", text.trim()),
                Entry::Text(text) => writeln!(out, "**Agent:**\n{}\n", text.trim()),
                Entry::ToolCall { name, input } => writeln!(out, "- tool call `{name}` {input}"),
                Entry::ToolResult { is_error, text } => {
                    let label = if *is_error { "failed" } else { "result" };
                    let text = text.replace('\n', "\n    ");
                    writeln!(out, "  - {label}: {text}")
                }
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_joins_and_tools_read_in_order() {
        let mut t = Transcript::default();
        t.prompt("Add src/a.sh.");
        t.text("I will ");
        t.text("write it.");
        t.tool_call("write_file", &serde_json::json!({"file_path": "src/a.sh"}));
        t.tool_result(false, "Wrote src/a.sh");
        let md = t.to_markdown();
        assert!(md.contains("**Prompt:**\nAdd src/a.sh."), "{md}");
        assert!(md.contains("**Agent:**\nI will write it."), "{md}");
        let call = md.find("tool call `write_file`").unwrap();
        assert!(call < md.find("result: Wrote src/a.sh").unwrap(), "{md}");
    }

    #[test]
    fn the_oldest_steps_go_first_when_it_grows_too_long() {
        let mut t = Transcript::default();
        t.prompt("FIRST");
        for i in 0..100 {
            t.tool_result(false, &format!("{i}{}", "x".repeat(1_000)));
        }
        let md = t.to_markdown();
        assert!(!md.contains("FIRST"), "the oldest step was kept");
        assert!(md.contains("99xxx"), "the newest step was lost");
        assert!(md.starts_with("(the first "), "{}", &md[..80]);
        assert!(md.chars().count() < KEEP_CHARS + 2_000);
    }
}
