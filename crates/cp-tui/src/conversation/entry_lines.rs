//! How each kind of conversation entry becomes terminal lines: labelled blocks for what the
//! person and the agent said, report blocks for notices, and tool calls with their progress,
//! collapsed results and file changes. The Conversation panel (`conversation/mod.rs`) keeps the
//! entries and their view state; this file only draws one entry at a time.

use std::time::Instant;

use cp_base::ToolResult;
use cp_base::ratatui::style::{Color, Modifier, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::theme;

use crate::conversation::outcome_style::{Outcome, collapsed, line_style};
use crate::conversation::tabs::expand_tabs;

/// Lines of a collapsed tool result.
const COLLAPSED_LINES: usize = 6;

/// Columns that continuation lines of an entry are indented by.
pub(crate) const INDENT: u16 = 2;

/// A tool call's arguments as a tool entry keeps them: cut to a readable length.
pub(crate) fn shorten_args(text: &str) -> String {
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(119).collect::<String>())
    } else {
        text.to_owned()
    }
}

/// Lines under a label: the first beside `who ›`, the rest indented.
pub(crate) fn labelled(
    out: &mut Vec<Line<'static>>,
    who: &str,
    color: Color,
    body: Vec<Line<'static>>,
) {
    let label = Span::styled(
        format!("{who} › "),
        Style::default().fg(color).add_modifier(Modifier::BOLD),
    );
    let mut body = body.into_iter();
    let mut first = body.next().unwrap_or_default();
    first.spans.insert(0, label);
    out.push(first);
    for mut line in body {
        line.spans.insert(0, Span::raw("  "));
        out.push(line);
    }
}

/// Plain text under a label, as written.
pub(crate) fn block(out: &mut Vec<Line<'static>>, who: &str, color: Color, text: &str) {
    styled_block(out, who, color, text, |_| Style::default());
}

/// A host message under a label, its report lines (`Callback 'x' FAILED`, `Tests passed`, …)
/// in their outcome's colour; in an error or warning, the failure's key lines red too.
pub(crate) fn report_block(
    out: &mut Vec<Line<'static>>,
    who: &str,
    color: Color,
    text: &str,
    bad: bool,
) {
    let outcome = if bad {
        Outcome::Failed
    } else {
        Outcome::Passed
    };
    styled_block(out, who, color, text, |line| line_style(line, outcome));
}

fn styled_block(
    out: &mut Vec<Line<'static>>,
    who: &str,
    color: Color,
    text: &str,
    style: impl Fn(&str) -> Style,
) {
    let label = Style::default().fg(color).add_modifier(Modifier::BOLD);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    out.push(Line::from(vec![
        Span::styled(format!("{who} › "), label),
        Span::styled(expand_tabs(first), style(first)),
    ]));
    for line in lines {
        out.push(Line::styled(
            format!("  {}", expand_tabs(line)),
            style(line),
        ));
    }
}

/// A running call's progress: since when, as of when, and what it waits for.
#[derive(Clone, Copy)]
pub(crate) struct Progress<'a> {
    pub(crate) started: Instant,
    pub(crate) now: Instant,
    pub(crate) waiting_for: &'a [String],
}

pub(crate) fn tool_lines(
    out: &mut Vec<Line<'static>>,
    name: &str,
    args: &str,
    result: Option<&ToolResult>,
    expanded: bool,
    progress: Option<Progress<'_>>,
) {
    let outcome = Outcome::of(result);
    out.push(Line::from(vec![
        outcome.mark(),
        Span::styled(
            name.to_owned(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(" {args}"), Style::default().fg(theme::MUTED)),
    ]));
    let Some(result) = result else {
        match progress {
            Some(Progress {
                started,
                now,
                waiting_for,
            }) => {
                let mut line = crate::conversation::progress::line(name, started, now);
                if !waiting_for.is_empty() {
                    line.spans.push(Span::styled(
                        format!(" · {}", waiting_for.join(", ")),
                        Style::default().fg(theme::ATTENTION),
                    ));
                }
                line.spans.insert(0, Span::raw("  "));
                out.push(line);
            }
            // Restored from a saved session: when it started is not known.
            None => out.push(Line::styled(
                "  running…",
                Style::default().fg(theme::MUTED),
            )),
        }
        return;
    };
    let dim = Style::default().fg(theme::MUTED);
    let lines: Vec<&str> = result.text.lines().collect();
    let (shown, hidden) = if expanded {
        ((0..lines.len()).collect(), 0)
    } else {
        collapsed(&result.text, COLLAPSED_LINES)
    };
    let mut next = 0;
    for index in shown {
        if index > next {
            out.push(Line::styled("  ⋯", dim));
        }
        next = index + 1;
        let line = lines[index];
        let style = if result.is_error {
            Style::default().fg(theme::FAILURE)
        } else {
            line_style(line, outcome)
        };
        // Tabs take their columns (a `File_read` line number is followed by one).
        out.push(Line::styled(format!("  {}", expand_tabs(line)), style));
    }
    if hidden > 0 {
        out.push(Line::styled(
            format!("  … {hidden} more lines (Ctrl-O expands)"),
            dim,
        ));
    }
    // A change the result's text already names ("Created notes.txt …") is not repeated.
    for change in result
        .changes
        .iter()
        .filter(|c| !result.text.contains(&c.path))
    {
        out.push(Line::styled(
            format!("  {} {}", change.kind, change.path),
            Style::default().fg(theme::INFO),
        ));
    }
}
