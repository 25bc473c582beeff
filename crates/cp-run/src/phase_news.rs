//! What a phase's agent reports and where it goes: lines on the terminal prefixed with the
//! phase (`[phase]`, or `[phase@host]` for a phase on a host), or [`PhaseNews`] for a screen,
//! which files it in the phase's own conversation. A phase on a host sends the same news
//! over its connection, so both are shown alike.

use std::io::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use cp_base::text::fit_end;
use cp_base::{Level, ToolResult};
use serde::{Deserialize, Serialize};

/// Where the progress lines of the phases' agents go.
#[derive(Clone)]
pub enum PhaseOutput {
    /// Printed on stdout, each line prefixed with `[phase]` (headless).
    Stdout,
    /// Handed, as [`PhaseNews`], to a receiver with the phase's id (the TUI).
    News(Arc<PhaseNewsSink>),
}

/// Receives the news of a phase: its id, the news.
pub type PhaseNewsSink = dyn Fn(&str, PhaseNews) + Send + Sync;

/// What a phase's agent reports, for the TUI's Phases panel, which files it in the phase's
/// own conversation (the same entries as the main Conversation panel's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseNews {
    /// The phase's agent starts: in a worktree of its own (`true`) or in the project's tree.
    Started { worktree: bool },
    /// The phase runs on this host of the `hosts` configuration.
    Placed { host: String },
    /// A piece of the agent's answer, as it streams in.
    Text(String),
    /// The agent called a tool; `id` pairs it with its result.
    ToolCall {
        id: String,
        name: String,
        args: String,
    },
    /// A tool call's result.
    ToolResult { id: String, result: ToolResult },
    /// The stop gate's block or giving up, a restart, a hook's report, the turn's failure.
    Notice { level: Level, text: String },
    /// A request's usage: the prompt's size against the window (0: not known), and its
    /// tokens.
    Usage {
        context: u64,
        window: u64,
        tokens: u64,
    },
    /// The stop gate runs the tests.
    Testing,
    /// The stop gate sent the agent back to work.
    Blocked,
}

/// Prints whole lines prefixed with `[phase]` (headless); text that streams in pieces is
/// held until its line ends, so phases running at once never split each other's lines.
pub(crate) struct Lines {
    phase: String,
    partial: Mutex<String>,
}

impl Lines {
    pub(crate) fn new(phase: &str) -> Self {
        Self {
            phase: phase.to_owned(),
            partial: Mutex::new(String::new()),
        }
    }

    pub(crate) fn text(&self, text: &str) {
        let mut partial = self.partial.lock().unwrap_or_else(PoisonError::into_inner);
        partial.push_str(text);
        while let Some(end) = partial.find('\n') {
            let line: String = partial.drain(..=end).collect();
            self.line(line.trim_end());
        }
    }

    pub(crate) fn flush(&self) {
        let rest =
            std::mem::take(&mut *self.partial.lock().unwrap_or_else(PoisonError::into_inner));
        if !rest.trim().is_empty() {
            self.line(rest.trim_end());
        }
    }

    pub(crate) fn line(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "[{}] {line}", self.phase);
        let _ = out.flush();
    }

    /// A line for the person's attention: on stderr.
    pub(crate) fn warning(&self, line: &str) {
        eprintln!("[{}] {line}", self.phase);
    }
}

/// A phase's news on the terminal, as its agent's events would be printed here (a phase on
/// a host sends news).
pub(crate) fn news_lines(lines: &Lines, news: PhaseNews) {
    match news {
        PhaseNews::Text(text) => lines.text(&text),
        PhaseNews::ToolCall { name, args, .. } => {
            lines.flush();
            lines.line(&format!("  → {name} {}", fit_end(&args, 100)));
        }
        PhaseNews::ToolResult { result, .. } => {
            let mark = if result.is_error { "✗" } else { "✓" };
            lines.line(&format!(
                "    {mark} {}",
                fit_end(result.text.lines().next().unwrap_or(""), 100)
            ));
        }
        PhaseNews::Notice { level, text } => {
            lines.flush();
            // "Stop gate:" and its reason's first line, as one line.
            let mut said = text.lines().filter(|l| !l.trim().is_empty());
            let head = said.next().unwrap_or("");
            let head = match said.next() {
                Some(next) if head.ends_with(':') => format!("{head} {}", next.trim()),
                _ => head.to_owned(),
            };
            let first = fit_end(&head, 160);
            if level == Level::Error {
                lines.warning(&text.trim_end().replace('\n', " "));
            } else {
                lines.line(&format!("  {first}"));
            }
        }
        PhaseNews::Testing => lines.line(&format!("  … {}", cp_agent::STOP_GATE_RUNNING)),
        PhaseNews::Usage { .. } => lines.flush(),
        PhaseNews::Started { .. } | PhaseNews::Placed { .. } | PhaseNews::Blocked => {}
    }
}
