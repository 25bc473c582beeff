//! The lines the Checkpoint panel draws from a stop report: the limit, the summary by
//! category, the test runs (and how a stop used the warm run), and what the session
//! committed.

use std::time::Duration;

use cp_base::ratatui::style::{Modifier, Style};
use cp_base::ratatui::text::{Line, Span};
use cp_base::theme;

use crate::stop::{StopReport, TestOutcome, WarmUse};

/// How a stop used the warm run, for people.
pub(super) fn warm_use(used: &WarmUse) -> String {
    match used {
        WarmUse::Reused { .. } => "the stop took its verdict: this very tree, no wait".into(),
        WarmUse::Waited { waited_ms } => format!(
            "the stop waited {:.1}s for it: this very tree",
            Duration::from_millis(*waited_ms).as_secs_f64()
        ),
        WarmUse::StillRunning { waited_secs } => format!(
            "still running after the stop waited {waited_secs}s; the next stop on this tree \
             takes its verdict"
        ),
    }
}

/// The test runs, or why none ran.
pub(super) fn runs_lines(report: &StopReport) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme::MUTED);
    let mut out = Vec::new();
    if report.tests.is_empty() {
        out.push(Line::styled(
            report
                .tests_note
                .clone()
                .unwrap_or_else(|| "Tests: not run".into()),
            dim,
        ));
    }
    for tests in &report.tests {
        out.extend(test_lines(tests));
    }
    if report.tests_reused {
        out.push(Line::styled("  (earlier run; nothing changed since)", dim));
    }
    out
}

/// What the session committed since it began, and what git lists that is not this
/// repository's change (nested repositories, worktrees, untracked-only submodules).
pub(super) fn scope_lines(report: &StopReport) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(theme::MUTED);
    let mut out = Vec::new();
    if !report.committed.is_empty() || report.scope_note.is_some() {
        out.push(Line::default());
        out.push(Line::styled(
            format!("Committed in this session ({})", report.committed.len()),
            bold,
        ));
        if let Some(note) = &report.scope_note {
            out.push(Line::styled(format!("  {note}"), dim));
        }
        for file in &report.committed {
            out.push(Line::from(format!("  {}", file.file.describe())));
        }
    }
    if !report.outside.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            "Not counted (not this repository's own files)",
            bold,
        ));
        for entry in &report.outside {
            out.push(Line::styled(format!("  {}", entry.describe()), dim));
        }
    }
    out
}

/// How many files changed, by category, and that every one is listed below (a long list,
/// which the stop gate's message bounds).
pub(super) fn summary_line(report: &StopReport) -> Line<'static> {
    let counts: Vec<String> = report
        .categories
        .iter()
        .map(|c| format!("{} {}", c.name, cp_git::thousands(c.files.len())))
        .collect();
    let by_category = if counts.is_empty() {
        String::new()
    } else {
        format!(" ({})", counts.join(" · "))
    };
    Line::from(vec![
        Span::styled(
            format!(
                "{} changed files{by_category}",
                cp_git::thousands(report.files.len())
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " · the agent's message lists {}; every file is below (scroll)",
                cp_git::LISTED_FILES
            ),
            Style::default().fg(theme::MUTED),
        ),
    ])
}

/// The block count, or the failure when the limit let the agent stop with work left.
pub(super) fn limit_lines(report: &StopReport) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let red = Style::default()
        .fg(theme::FAILURE)
        .add_modifier(Modifier::BOLD);
    if let Some(notice) = &report.gave_up {
        out.push(Line::styled(
            format!(
                "✗ FAILED: the agent stopped with work left after {} blocks in a row",
                report.max_blocks
            ),
            red,
        ));
        for line in notice.lines().skip(1) {
            out.push(Line::styled(
                format!("  {line}"),
                Style::default().fg(theme::FAILURE),
            ));
        }
    } else if report.blocks > 0 {
        out.push(Line::styled(
            format!("Stop blocked ({} of {})", report.blocks, report.max_blocks),
            Style::default().fg(theme::ATTENTION),
        ));
    }
    out
}

pub(super) fn test_lines(tests: &TestOutcome) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let seconds = tests
        .summary
        .as_ref()
        .and_then(|s| s.seconds)
        .unwrap_or_else(|| Duration::from_millis(tests.elapsed_ms).as_secs_f64());
    let label = crate::stop::tests_label(tests);
    if tests.passed {
        let count = tests
            .summary
            .as_ref()
            .and_then(|s| s.passed)
            .map_or_else(|| "passed".into(), |n| format!("{n} passed"));
        out.push(Line::from(vec![
            Span::styled(
                format!("{label} ✓ "),
                Style::default()
                    .fg(theme::SUCCESS)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!("{count} in {seconds:.1}s")),
            Span::styled(
                format!(" · {}", tests.command),
                Style::default().fg(theme::MUTED),
            ),
        ]));
    } else {
        let why = format!(
            "{} ({})",
            crate::stop::headline(tests),
            crate::stop::failure_reason(tests)
        );
        out.push(Line::from(vec![
            Span::styled(
                format!("{label} ✗ "),
                Style::default()
                    .fg(theme::FAILURE)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(why),
            Span::styled(
                format!(" · {}", tests.command),
                Style::default().fg(theme::MUTED),
            ),
        ]));
        if let Some(missing) = &tests.missing {
            let install = missing.install.as_deref().unwrap_or("install it");
            out.push(Line::styled(
                format!("  not installed: {} — {install}", missing.tool),
                Style::default().fg(theme::ATTENTION),
            ));
        }
        for line in &tests.tail {
            out.push(Line::styled(
                format!("  {line}"),
                Style::default().fg(theme::FAILURE),
            ));
        }
    }
    if let Some(used) = &tests.warm {
        out.push(Line::styled(
            format!("  (warm run: {})", warm_use(used)),
            Style::default().fg(theme::MUTED),
        ));
    }
    out
}
