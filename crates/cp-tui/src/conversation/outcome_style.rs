//! How a tool result looks: its outcome (passed, failed, timed out or cancelled, running),
//! the mark and colour of that outcome, which lines of its text are key lines, and which of
//! them a collapsed result keeps.
//!
//! The outcome reads the host's own report lines (`Callback 'x' FAILED`, `Tests FAILED`, …),
//! never arbitrary output, so a file that merely contains the word FAILED is not a failure.

use cp_base::ToolResult;
use cp_base::ratatui::style::{Color, Modifier, Style};
use cp_base::ratatui::text::Span;
use cp_base::theme;

/// What happened to a tool call, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The call failed, or a blocking check it triggered failed.
    Failed,
    /// Something was cut short: a timeout or a cancellation.
    Interrupted,
    Running,
    Passed,
}

impl Outcome {
    /// The outcome of a call from its result (`None` while it runs).
    pub fn of(result: Option<&ToolResult>) -> Self {
        let Some(result) = result else {
            return Self::Running;
        };
        if result.is_error {
            return Self::Failed;
        }
        result
            .text
            .lines()
            .filter_map(report_outcome)
            .min()
            .unwrap_or(Self::Passed)
    }

    pub fn color(self) -> Color {
        match self {
            Self::Failed => theme::FAILURE,
            Self::Interrupted | Self::Running => theme::ATTENTION,
            Self::Passed => theme::SUCCESS,
        }
    }

    /// The mark before the call's name: ✗, ⚠, … or ✓, bold in the outcome's colour.
    pub fn mark(self) -> Span<'static> {
        let mark = match self {
            Self::Failed => "✗ ",
            Self::Interrupted => "⚠ ",
            Self::Running => "… ",
            Self::Passed => "✓ ",
        };
        Span::styled(
            mark,
            Style::default()
                .fg(self.color())
                .add_modifier(Modifier::BOLD),
        )
    }
}

/// The outcome a host report line states, if it is one: a callback's or the tests' result.
fn report_outcome(line: &str) -> Option<Outcome> {
    let line = line.trim_start();
    if let Some(rest) = line.strip_prefix("Callback '") {
        let after_name = rest.split_once("' ").map_or("", |(_, after)| after);
        return if after_name.starts_with("FAILED") || after_name.starts_with("could not start") {
            Some(Outcome::Failed)
        } else if after_name.starts_with("TIMED OUT") || after_name.starts_with("CANCELLED") {
            Some(Outcome::Interrupted)
        } else if after_name.starts_with("passed") {
            Some(Outcome::Passed)
        } else {
            None
        };
    }
    if let Some(rest) = line.strip_prefix("Tests ") {
        // `Tests (web) FAILED …`: one project's tests among several.
        let rest = match rest.strip_prefix('(') {
            Some(labelled) => labelled.split_once(") ").map_or(rest, |(_, after)| after),
            None => rest,
        };
        let failed = ["FAILED", "ERROR", "NOT RUN", "ran NO TESTS"];
        return if rest.starts_with("TIMED OUT") || rest.starts_with("STOPPED") {
            Some(Outcome::Interrupted)
        } else if failed.iter().any(|f| rest.starts_with(f)) {
            Some(
                if rest.contains("timed out") || rest.contains("stopped before") {
                    Outcome::Interrupted
                } else {
                    Outcome::Failed
                },
            )
        } else if rest.starts_with("passed") {
            Some(Outcome::Passed)
        } else {
            None
        };
    }
    let lower = line.to_lowercase();
    (lower.contains("cancelled") || lower.contains("canceled")).then_some(Outcome::Interrupted)
}

/// The colour of a sidebar badge: red for a failure (`✗`, `✘`, FAILED), green for a pass
/// (`✓`, `✔`), yellow for anything else (counts, running, needs attention).
pub fn badge_color(badge: &str) -> Color {
    if badge.contains(['✗', '✘']) || badge.contains("FAIL") || badge.contains("fail") {
        theme::FAILURE
    } else if badge.contains(['✓', '✔']) {
        theme::SUCCESS
    } else {
        theme::ATTENTION
    }
}

/// Whether `line` is one a reader of a failure looks for: a report line, a test runner's
/// failure summary, or an error message.
pub fn is_key_line(line: &str) -> bool {
    if report_outcome(line).is_some_and(|o| o != Outcome::Passed) {
        return true;
    }
    let t = line.trim_start();
    // pytest's short summary (`FAILED tests/x.py::t - …`), its `=== 1 failed … ===` line and
    // its `E   assert …` lines; cargo's `test x ... FAILED` and `test result: FAILED`; go's
    // `--- FAIL:`; compilers' `error:` / `error[E…]`; tracebacks and exceptions; panics.
    t.starts_with("FAILED ")
        || t.starts_with("ERROR ")
        || t.starts_with("E   ")
        || (t.starts_with('=') && (t.contains(" failed") || t.contains(" error")))
        || t.ends_with("... FAILED")
        || t.starts_with("test result: FAILED")
        || t.starts_with("--- FAIL")
        || t.starts_with("FAIL ")
        || t.starts_with("error:")
        || t.starts_with("error[")
        || t.starts_with("Traceback (most recent call last)")
        || t.contains("Error: ")
        || t.contains("panicked at")
}

/// The style of one line of a result whose outcome is `outcome`: report lines in their own
/// outcome's colour; in a failed or interrupted result, key lines red.
pub fn line_style(line: &str, outcome: Outcome) -> Style {
    match report_outcome(line) {
        Some(Outcome::Passed) => return Style::default().fg(theme::SUCCESS),
        Some(Outcome::Interrupted) => return Style::default().fg(theme::ATTENTION),
        Some(_) => {
            return Style::default()
                .fg(theme::FAILURE)
                .add_modifier(Modifier::BOLD);
        }
        None => {}
    }
    match outcome {
        Outcome::Failed | Outcome::Interrupted if is_key_line(line) => {
            Style::default().fg(theme::FAILURE)
        }
        _ => Style::default(),
    }
}

/// What a collapsed result shows: line numbers of `text` to keep, in order, and the count
/// hidden. Keeps the first `budget` lines, except that key lines further down (the failure
/// summary, the first error) take the place of ordinary ones, so they are never hidden.
pub fn collapsed(text: &str, budget: usize) -> (Vec<usize>, usize) {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= budget {
        return ((0..lines.len()).collect(), 0);
    }
    // The headline, then key lines (at most all but one of the budget), then the first lines.
    let mut keep = vec![0];
    let key: Vec<usize> = (1..lines.len())
        .filter(|&i| is_key_line(lines[i]))
        .take(budget.saturating_sub(2))
        .collect();
    keep.extend(&key);
    for i in 1..lines.len() {
        if keep.len() >= budget {
            break;
        }
        if !keep.contains(&i) {
            keep.push(i);
        }
    }
    keep.sort_unstable();
    keep.truncate(budget);
    let hidden = lines.len() - keep.len();
    (keep, hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAILED_EDIT: &str = "Edited calc.py (1 replacement).\n\
Callback 'pytest' FAILED (exited with code 1) after 0.4s, triggered by calc.py (run 1). Last lines of output:\n\
```\n\
E       assert 3 == 4\n\
tests/test_calc.py:5: AssertionError\n\
=========================== short test summary info ============================\n\
FAILED tests/test_calc.py::test_add - assert 3 == 4\n\
============================== 1 failed in 0.02s ===============================\n\
```\n\
Full output: panel `cb-run` (opened). The edit itself was applied.";

    #[test]
    fn a_failed_blocking_callback_fails_the_call_but_a_passing_one_does_not() {
        assert_eq!(
            Outcome::of(Some(&ToolResult::ok(FAILED_EDIT))),
            Outcome::Failed
        );
        let passed = "Edited a.rs.\nCallback 'check' passed (run 1, 0.2s)";
        assert_eq!(Outcome::of(Some(&ToolResult::ok(passed))), Outcome::Passed);
        let timed_out = "Edited a.rs.\nCallback 'check' TIMED OUT after 5s and its process group was killed (run 1).";
        assert_eq!(
            Outcome::of(Some(&ToolResult::ok(timed_out))),
            Outcome::Interrupted
        );
        let cancelled = "Edited a.rs.\nCallback 'check' CANCELLED by the user after 0.4s and its process group was killed (run 1).";
        assert_eq!(
            Outcome::of(Some(&ToolResult::ok(cancelled))),
            Outcome::Interrupted
        );
        assert_eq!(Outcome::Interrupted.color(), theme::ATTENTION);
        assert_eq!(
            Outcome::of(Some(&ToolResult::ok(
                "Tests FAILED (exit code 1) — `pytest`"
            ))),
            Outcome::Failed
        );
        for (line, outcome) in [
            (
                "Tests (web) FAILED (exit code 1) — `npm test`",
                Outcome::Failed,
            ),
            (
                "Tests NOT RUN (a tool is not installed) — `npm test`",
                Outcome::Failed,
            ),
            (
                "Tests ran NO TESTS (exit code 5) — `pytest`",
                Outcome::Failed,
            ),
            (
                "Tests TIMED OUT (after 30s; the whole run was stopped)",
                Outcome::Interrupted,
            ),
            ("Tests (api) passed: 3 passed (pytest)", Outcome::Passed),
        ] {
            assert_eq!(Outcome::of(Some(&ToolResult::ok(line))), outcome, "{line}");
        }
        // A file that merely mentions FAILED is not a failure.
        let read = "1\tprint('FAILED tests')\n2\tCallback 'x' FAILED";
        assert_eq!(Outcome::of(Some(&ToolResult::ok(read))), Outcome::Passed);
        assert_eq!(Outcome::of(None), Outcome::Running);
        assert_eq!(
            Outcome::of(Some(&ToolResult::error("nope"))),
            Outcome::Failed
        );
    }

    #[test]
    fn badges_say_failure_in_red_and_success_in_green() {
        assert_eq!(badge_color("✗"), theme::FAILURE);
        assert_eq!(badge_color("✘"), theme::FAILURE);
        assert_eq!(badge_color("1 failed"), theme::FAILURE);
        // The Callbacks panel's badge with a failing callback (cp-mod-callback `panel.rs`).
        assert_eq!(badge_color("2/3 ✗1 (1 running)"), theme::FAILURE);
        assert_eq!(badge_color("✓"), theme::SUCCESS);
        assert_eq!(badge_color("✔"), theme::SUCCESS);
        assert_eq!(badge_color("2/3"), theme::ATTENTION);
        assert_eq!(badge_color("●"), theme::ATTENTION);
    }

    #[test]
    fn collapsing_keeps_the_failure_summary_and_the_first_error() {
        let (keep, hidden) = collapsed(FAILED_EDIT, 6);
        let lines: Vec<&str> = FAILED_EDIT.lines().collect();
        let kept: Vec<&str> = keep.iter().map(|&i| lines[i]).collect();
        assert_eq!(keep.len(), 6);
        assert_eq!(hidden, lines.len() - 6);
        assert!(
            kept.iter().any(|l| l.starts_with("FAILED tests/")),
            "{kept:#?}"
        );
        assert!(
            kept.iter().any(|l| l.starts_with("E       assert")),
            "{kept:#?}"
        );
        assert!(kept.iter().any(|l| l.contains("1 failed in")), "{kept:#?}");
        assert!(kept[1].starts_with("Callback 'pytest' FAILED"), "{kept:#?}");
        // Short results are shown whole.
        assert_eq!(collapsed("a\nb", 6), (vec![0, 1], 0));
    }
}
