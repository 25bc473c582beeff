//! The text the agent reads. Plain text, so it works as a Claude
//! `<system-reminder>` and as a Gemini retry prompt alike.

use std::fmt::Write;

use super::report::{StopReport, TestOutcome};
use super::runner::TestExit;

/// The full first-stop message: test line, changed files, follow-up instructions.
pub(crate) fn compose(report: &StopReport, capture_only: &str) -> String {
    let mut out = String::new();
    let red = report.tests.iter().any(|t| !t.passed);
    if !report.code_changed && !red {
        out.push_str(capture_only);
        out.push_str("\n\n");
        super::listing::scope(&mut out, report);
        return out;
    }
    out.push_str("Stop gate: verify this turn's changes before you stop.\n\n");
    if report.tests.is_empty() {
        if let Some(note) = &report.tests_note {
            let _ = writeln!(out, "Tests: not run ({note}).\n");
        }
    } else {
        for tests in &report.tests {
            test_section(&mut out, tests);
        }
        out.push('\n');
    }
    let error = report.tests.iter().any(TestOutcome::is_error);
    let failed = report.tests.iter().any(|t| !t.passed && !t.is_error());
    super::listing::scope(&mut out, report);
    if error {
        out.push_str(
            "\nThe tests did not run: fix the error shown above (or the test command) before \
             proceeding.\n",
        );
    }
    if failed {
        out.push_str("\nFix failing tests before proceeding.\n");
    }
    if !report.instructions.is_empty() {
        out.push_str(if red {
            "\nOnce the tests pass:\n"
        } else {
            "\nRequired follow-up:\n"
        });
        for instruction in &report.instructions {
            let _ = writeln!(out, "- {instruction}");
        }
    }
    if !report.uncommitted_gated.is_empty() {
        out.push_str("\nThen commit your changes.\n");
    }
    out
}

fn note_line(out: &mut String, tests: &TestOutcome) {
    if let Some(note) = &tests.note {
        let _ = writeln!(out, "(The tests {note}.)");
    }
}

/// `Tests`, or `Tests (backend)` for one project's tests among several.
pub(crate) fn tests_label(tests: &TestOutcome) -> String {
    match &tests.project {
        Some(project) => format!("Tests ({project})"),
        None => "Tests".to_owned(),
    }
}

/// One test results line, plus the output tail when the run did not pass.
pub(crate) fn test_section(out: &mut String, tests: &TestOutcome) {
    let summary = tests
        .summary
        .as_ref()
        .map(super::test_output::TestSummary::describe);
    let time = format!("{:.1}s", duration_secs(tests.elapsed_ms));
    let label = tests_label(tests);
    if tests.passed {
        let detail = summary.unwrap_or_else(|| format!("exit code 0 in {time}"));
        let _ = writeln!(out, "{label} passed: {detail} — `{}`", tests.command);
        note_line(out, tests);
        return;
    }
    let why = failure_reason(tests);
    let headline = if tests.is_error() { "ERROR" } else { "FAILED" };
    let _ = write!(out, "{label} {headline} ({why}) — `{}`", tests.command);
    match summary {
        Some(summary) => {
            let _ = write!(out, ": {summary}");
        }
        // Only the exit status is known: say so, and let the tail show what happened.
        None if matches!(tests.exit, Some(TestExit::Code { .. })) => {
            out.push_str(": no test summary line recognised in the output");
        }
        None => {}
    }
    out.push('\n');
    note_line(out, tests);
    if !tests.tail.is_empty() {
        let _ = writeln!(out, "Last {} lines of output:", tests.tail.len());
        for line in &tests.tail {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// Why a run did not pass, e.g. `exit code 1` or `timed out after 30s and was stopped`.
pub(crate) fn failure_reason(tests: &TestOutcome) -> String {
    match (&tests.exit, &tests.error) {
        (Some(TestExit::TimedOut { after_secs }), _) => {
            format!("timed out after {after_secs}s and was stopped")
        }
        (Some(TestExit::Code { code }), _) => format!("exit code {code}"),
        (Some(TestExit::Signal { signal }), _) => format!("killed by signal {signal}"),
        (Some(TestExit::Stopped { reason }), _) => format!("stopped before it finished: {reason}"),
        (None, Some(error)) => format!("could not start: {error}"),
        (None, None) => "did not run".to_owned(),
    }
}

fn duration_secs(ms: u64) -> f64 {
    // Lossless for any realistic duration (below 2^52 ms).
    #[expect(clippy::cast_precision_loss, reason = "milliseconds of a test run")]
    let secs = ms as f64 / 1000.0;
    secs
}
