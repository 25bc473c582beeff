//! The Checkpoint panel: the last stop gate's changed files by category, the test
//! result and the instructions, for the person and (as markdown) for the model.
//!
//! The stop gate's message lists at most [`cp_git::LISTED_FILES`] files; this panel lists
//! every one (scroll for them), under a summary of the counts by category on top.

use std::fmt::Write as _;
#[cfg(feature = "draw")]
use std::time::Duration;

#[cfg(feature = "draw")]
use cp_base::ratatui::buffer::Buffer;
#[cfg(feature = "draw")]
use cp_base::ratatui::layout::Rect;
#[cfg(feature = "draw")]
use cp_base::ratatui::style::{Modifier, Style};
#[cfg(feature = "draw")]
use cp_base::ratatui::text::{Line, Span};
#[cfg(feature = "draw")]
use cp_base::ratatui::widgets::{Paragraph, Widget, Wrap};
#[cfg(feature = "draw")]
use cp_base::theme;
use cp_base::{Panel, PanelKind};
#[cfg(feature = "draw")]
use cp_base::{PanelView, ScrollExtent};

use chrono::FixedOffset;
#[cfg(feature = "draw")]
use chrono::{DateTime, Local};

#[cfg(feature = "draw")]
use crate::stop::{StopPhase, WarmPhase};
use crate::stop::{StopReport, WarmRun};

#[cfg(feature = "draw")]
mod report_lines;
#[cfg(feature = "draw")]
use report_lines::{limit_lines, runs_lines, scope_lines, summary_line, warm_use};

/// Shows the most recent [`StopReport`] of this worker until the next one, and the project's
/// warm run.
#[derive(Debug, Clone, Default)]
pub struct StopGatePanel {
    report: Option<StopReport>,
    warm: Option<WarmRun>,
    /// Shows times at this offset instead of the machine's local time (for tests).
    utc_offset: Option<FixedOffset>,
}

impl StopGatePanel {
    pub fn new(report: Option<StopReport>) -> Self {
        Self {
            report,
            warm: None,
            utc_offset: None,
        }
    }

    /// Shows `warm` as the project's newest warm run.
    pub fn set_warm(&mut self, warm: Option<WarmRun>) {
        self.warm = warm;
    }

    /// A time in milliseconds since the Unix epoch, as local time of day.
    #[cfg(feature = "draw")]
    fn clock(&self, ms: u64) -> String {
        const FORMAT: &str = "%H:%M:%S";
        let Some(at) = i64::try_from(ms)
            .ok()
            .and_then(DateTime::from_timestamp_millis)
        else {
            return String::new();
        };
        match self.utc_offset {
            Some(offset) => at.with_timezone(&offset).format(FORMAT).to_string(),
            None => at.with_timezone(&Local).format(FORMAT).to_string(),
        }
    }

    /// The warm run's line: on which change, and where it is.
    #[cfg(feature = "draw")]
    fn warm_lines(&self) -> Vec<Line<'static>> {
        let Some(warm) = &self.warm else {
            return Vec::new();
        };
        let dim = Style::default().fg(theme::MUTED);
        let (state, style) = match &warm.phase {
            WarmPhase::Waiting => ("waiting for the edits to settle".to_owned(), dim),
            WarmPhase::Running {
                commands,
                started_at_ms,
                ..
            } => (
                format!(
                    "running `{}` since {} (low priority)",
                    commands.join("; "),
                    self.clock(*started_at_ms)
                ),
                Style::default().fg(theme::ACCENT),
            ),
            WarmPhase::Done {
                passed, elapsed_ms, ..
            } => (
                format!(
                    "done, {} in {:.1}s",
                    if *passed { "passed" } else { "not passed" },
                    Duration::from_millis(*elapsed_ms).as_secs_f64()
                ),
                Style::default().fg(if *passed {
                    theme::SUCCESS
                } else {
                    theme::FAILURE
                }),
            ),
            WarmPhase::NoVerdict { why } => (format!("no verdict: {why}"), dim),
            WarmPhase::Skipped { why } => (format!("nothing to run: {why}"), dim),
            WarmPhase::Cancelled { why } => (format!("ended: {why}"), dim),
        };
        let mut out = vec![Line::from(vec![
            Span::styled("Warm run: ", Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(state, style),
            Span::styled(
                format!(
                    " · after {} at {}",
                    warm.change,
                    self.clock(warm.requested_at_ms)
                ),
                dim,
            ),
        ])];
        if let Some(used) = &warm.used {
            out.push(Line::styled(format!("  {}", warm_use(used)), dim));
        }
        out
    }

    /// Shows times at a fixed offset from UTC instead of local time.
    #[must_use]
    pub fn with_utc_offset(mut self, offset: FixedOffset) -> Self {
        self.utc_offset = Some(offset);
        self
    }

    /// `created_at` (RFC 3339, UTC) as local date and time; the raw text if it does not parse.
    #[cfg(feature = "draw")]
    fn time(&self, created_at: &str) -> String {
        const FORMAT: &str = "%Y-%m-%d %H:%M:%S";
        let Ok(at) = DateTime::parse_from_rfc3339(created_at) else {
            return created_at.to_owned();
        };
        match self.utc_offset {
            Some(offset) => at.with_timezone(&offset).format(FORMAT).to_string(),
            None => at.with_timezone(&Local).format(FORMAT).to_string(),
        }
    }

    pub fn report(&self) -> Option<&StopReport> {
        self.report.as_ref()
    }

    pub fn set_report(&mut self, report: Option<StopReport>) {
        self.report = report;
    }

    #[cfg(feature = "draw")]
    fn lines(&self) -> Vec<Line<'static>> {
        let mut out = self.warm_lines();
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.extend(self.report_lines());
        out
    }

    #[cfg(feature = "draw")]
    fn report_lines(&self) -> Vec<Line<'static>> {
        let Some(report) = &self.report else {
            return vec![
                Line::styled("No stop gate run yet.", Style::default().fg(theme::MUTED)),
                Line::default(),
                Line::from("When the agent ends its turn, the stop gate lists what changed,"),
                Line::from("runs the tests when code changed, and says what to verify."),
            ];
        };
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().fg(theme::MUTED);
        let phase = match report.phase {
            StopPhase::First => "first stop",
            StopPhase::Second => "later stop (commit gate)",
        };
        let mut out = vec![Line::from(vec![
            Span::styled("Last stop gate: ", bold),
            Span::raw(phase),
            Span::styled(format!(" · {}", self.time(&report.created_at)), dim),
        ])];
        out.extend(limit_lines(report));
        if report.files.len() > cp_git::LISTED_FILES {
            out.push(summary_line(report));
        }
        if let Some(skipped) = &report.skipped {
            out.push(Line::styled(
                format!("Skipped (fail-open): {skipped}"),
                Style::default().fg(theme::ATTENTION),
            ));
            return out;
        }
        if report.unchanged {
            out.push(Line::styled(
                "Nothing changed since the previous stop.",
                dim,
            ));
        }
        out.push(Line::default());
        out.extend(runs_lines(report));
        out.push(Line::default());
        out.push(Line::styled(
            if report.committed.is_empty() {
                "Changed files"
            } else {
                "Not committed"
            },
            bold,
        ));
        for category in &report.categories {
            let gate = if category.gated { " · gated" } else { "" };
            out.push(Line::from(vec![
                Span::styled(
                    format!("  {}", category.name),
                    Style::default().fg(theme::ACCENT),
                ),
                Span::styled(format!(" ({}{gate})", category.files.len()), dim),
            ]));
            for file in &category.files {
                out.push(Line::from(format!("    {file}")));
            }
        }
        out.extend(scope_lines(report));
        if !report.instructions.is_empty() {
            out.push(Line::default());
            out.push(Line::styled("Instructions", bold));
            for instruction in &report.instructions {
                out.push(Line::from(format!("  • {instruction}")));
            }
        }
        if !report.uncommitted_gated.is_empty() {
            out.push(Line::default());
            out.push(Line::styled(
                format!(
                    "Uncommitted gated files ({})",
                    report.uncommitted_gated.len()
                ),
                Style::default()
                    .fg(theme::ATTENTION)
                    .add_modifier(Modifier::BOLD),
            ));
            for file in &report.uncommitted_gated {
                out.push(Line::from(format!("  {file}")));
            }
        }
        out
    }
}

impl Panel for StopGatePanel {
    fn id(&self) -> String {
        "checkpoint".into()
    }

    fn title(&self) -> String {
        "Checkpoint".into()
    }

    fn kind(&self) -> PanelKind {
        PanelKind::Fixed
    }

    fn badge(&self) -> Option<String> {
        let report = self.report.as_ref()?;
        if report.gave_up.is_some() || report.tests.iter().any(|t| !t.passed) {
            Some("✗".into())
        } else if !report.uncommitted_gated.is_empty() {
            Some(format!("{}!", report.uncommitted_gated.len()))
        } else if report.tests.is_empty() {
            None
        } else {
            Some("✓".into())
        }
    }

    #[cfg(feature = "draw")]
    fn scroll_extent(&self, area: Rect) -> ScrollExtent {
        let rows = ScrollExtent::wrapped_rows(&self.lines(), area.width);
        ScrollExtent::top(ScrollExtent::overflow(rows, area.height))
    }

    #[cfg(feature = "draw")]
    fn render(&self, area: Rect, buf: &mut Buffer, view: &PanelView) {
        let scroll = u16::try_from(view.scroll).unwrap_or(u16::MAX);
        Paragraph::new(self.lines())
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .render(area, buf);
    }

    fn llm_context(&self) -> String {
        let Some(report) = &self.report else {
            return "## Checkpoint\nNo checkpoint yet.\n".into();
        };
        let mut md = String::from("## Checkpoint (last stop)\n");
        if let Some(notice) = &report.gave_up {
            let _ = writeln!(md, "{notice}");
        } else if let Some(message) = &report.message {
            let _ = writeln!(md, "{message}");
        } else if let Some(skipped) = &report.skipped {
            let _ = writeln!(md, "Skipped: {skipped}");
        } else {
            let _ = writeln!(md, "Changed files: {}", report.files.len());
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use cp_base::ratatui::Terminal;
    use cp_base::ratatui::backend::TestBackend;

    use super::*;
    use crate::stop::{CategoryFiles, WarmUse};

    fn draw(panel: &StopGatePanel) -> String {
        draw_wide(panel, 80)
    }

    fn draw_wide(panel: &StopGatePanel, width: u16) -> String {
        let panel = panel
            .clone()
            .with_utc_offset(FixedOffset::east_opt(3600).unwrap());
        let mut terminal = Terminal::new(TestBackend::new(width, 20)).unwrap();
        terminal
            .draw(|f| panel.render(f.area(), f.buffer_mut(), &PanelView::default()))
            .unwrap();
        terminal.backend().to_string()
    }

    fn report() -> StopReport {
        let json = serde_json::json!({
            "phase": "first",
            "created_at": "2026-11-22T03:00:00Z",
            "repo_root": "/home/dev/demo",
            "files": [],
            "categories": [],
            "code_changed": true,
            "tests": {
                "command": "cargo test",
                "passed": false,
                "exit": {"kind": "code", "code": 101},
                "error": null,
                "summary": null,
                "elapsed_ms": 2400,
                "tail": ["test parser::tests::empty ... FAILED", "test result: FAILED. 3 passed; 1 failed"]
            },
            "tests_note": null,
            "instructions": ["Fix failing tests before proceeding", "Rebuild and send SIGUSR2 to reload the TUI"],
            "uncommitted_gated": ["src/parser.rs"],
            "unchanged": false,
            "skipped": null,
            "message": "Tests FAILED"
        });
        let mut report: StopReport = serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
        report.categories = vec![
            CategoryFiles {
                name: "code".into(),
                instruction: None,
                gated: true,
                files: vec!["src/parser.rs".into(), "src/main.rs".into()],
            },
            CategoryFiles {
                name: "docs".into(),
                instruction: None,
                gated: false,
                files: vec!["README.md".into()],
            },
        ];
        report
    }

    #[test]
    fn checkpoint_panel_with_a_failed_test_run() {
        insta::assert_snapshot!(draw(&StopGatePanel::new(Some(report()))));
    }

    #[test]
    fn checkpoint_panel_when_the_limit_let_the_agent_stop() {
        let mut report = report();
        report.phase = StopPhase::Second;
        report.max_blocks = 3;
        report.gave_up = Some(
            "Context Pilot: the agent stopped with work left after the stop gate blocked \
             it 3 time(s) in a row (checkpoint.max_blocks = 3).\n\
             Uncommitted files (1): src/parser.rs\n\
             Last test run: Tests FAILED (exit code 101) — `cargo test`\n"
                .into(),
        );
        report.categories.clear();
        report.instructions.clear();
        let panel = StopGatePanel::new(Some(report));
        assert_eq!(panel.badge().as_deref(), Some("✗"));
        insta::assert_snapshot!(draw(&panel));
    }

    #[test]
    fn committed_work_and_what_is_not_counted_are_shown_apart() {
        let mut report = report();
        report.committed = vec![crate::stop::CategorizedFile {
            file: cp_git::ChangedFile::new("src/lexer.rs", cp_git::FileStatus::Modified),
            categories: vec!["code".into()],
            gated: true,
            code: true,
            triggers_tests: true,
        }];
        report.outside = vec![cp_git::ChangedFile {
            kind: cp_git::EntryKind::Worktree,
            ..cp_git::ChangedFile::new("wt", cp_git::FileStatus::Untracked)
        }];
        let panel = StopGatePanel::new(Some(report));
        let text: Vec<String> = panel.lines().iter().map(ToString::to_string).collect();
        let at = |line: &str| text.iter().position(|l| l == line);
        let committed = at("Committed in this session (1)").unwrap();
        assert_eq!(text[committed + 1], "  modified src/lexer.rs");
        assert!(at("Not committed").unwrap() < committed, "{text:?}");
        let outside = at("Not counted (not this repository's own files)").unwrap();
        assert_eq!(text[outside + 1], "  worktree wt/");
    }

    #[test]
    fn a_passed_earlier_run_is_shown_until_the_next_one() {
        let mut report = report();
        let tests = report.tests.first_mut().unwrap();
        tests.passed = true;
        tests.tail.clear();
        report.tests_reused = true;
        report.uncommitted_gated.clear();
        let panel = StopGatePanel::new(Some(report));
        assert_eq!(panel.badge().as_deref(), Some("✓"));
        let text = draw(&panel);
        assert!(text.contains("Tests ✓"), "{text}");
        assert!(text.contains("earlier run"), "{text}");
        // 03:00 UTC shown at UTC+1.
        assert!(text.contains("2026-11-22 04:00:00"), "{text}");
    }

    #[test]
    fn the_warm_run_is_shown_running_then_done_and_reused() {
        // 2026-11-22 03:00:00 UTC, shown at UTC+1.
        let at = 1_795_316_400_000;
        let mut panel = StopGatePanel::new(Some(report()));
        assert!(!draw(&panel).contains("Warm run"));
        let mut warm = WarmRun {
            console: None,
            change: "Edit src/app.py".into(),
            requested_at_ms: at,
            phase: WarmPhase::Running {
                key: "k".into(),
                commands: vec!["pytest -q".into()],
                started_at_ms: at + 1_000,
            },
            used: None,
        };
        panel.set_warm(Some(warm.clone()));
        let text = draw_wide(&panel, 120);
        assert!(
            text.contains("Warm run: running `pytest -q` since 04:00:01 (low priority)"),
            "{text}"
        );
        assert!(text.contains("after Edit src/app.py at 04:00:00"), "{text}");
        warm.phase = WarmPhase::Done {
            key: "k".into(),
            passed: true,
            elapsed_ms: 6_200,
        };
        warm.used = Some(WarmUse::Reused {
            finished_at_ms: at + 7_200,
        });
        panel.set_warm(Some(warm));
        let text = draw_wide(&panel, 120);
        assert!(text.contains("Warm run: done, passed in 6.2s"), "{text}");
        assert!(text.contains("the stop took its verdict"), "{text}");
    }

    #[test]
    fn every_one_of_2000_files_is_reachable_under_a_summary() {
        let mut report = report();
        let files: Vec<String> = (0..2_000).map(|i| format!("notes/n{i:04}.md")).collect();
        report.files = files
            .iter()
            .map(|path| crate::stop::CategorizedFile {
                file: cp_git::ChangedFile::new(path.clone(), cp_git::FileStatus::Added),
                categories: vec!["docs".into()],
                gated: false,
                code: false,
                triggers_tests: false,
            })
            .collect();
        report.categories = vec![CategoryFiles {
            name: "docs".into(),
            instruction: None,
            gated: false,
            files: files.clone(),
        }];
        let panel = StopGatePanel::new(Some(report));
        let top = draw(&panel);
        assert!(top.contains("2,000 changed files (docs 2,000)"), "{top}");
        // Scrolled to the end, the last file is on screen; every file has a line.
        let area = Rect::new(0, 0, 80, 20);
        let extent = panel.scroll_extent(area);
        let text = |scroll: usize| {
            let mut buf = Buffer::empty(area);
            panel.render(
                area,
                &mut buf,
                &PanelView {
                    scroll,
                    ..PanelView::default()
                },
            );
            (0..area.height)
                .map(|y| {
                    (0..area.width)
                        .map(|x| buf[(x, y)].symbol())
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let end = text(extent.max);
        assert!(end.contains("notes/n1999.md"), "{end}");
        let listed: std::collections::HashSet<String> = (0..=extent.max)
            .step_by(usize::from(area.height))
            .chain([extent.max])
            .flat_map(|scroll| {
                text(scroll)
                    .lines()
                    .map(|row| row.trim().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect();
        for path in &files {
            assert!(listed.contains(path), "{path} is not listed");
        }
    }

    #[test]
    fn checkpoint_panel_empty() {
        let panel = StopGatePanel::default();
        assert_eq!(panel.badge(), None);
        insta::assert_snapshot!(draw(&panel));
    }
}
