//! The text the agent reads. Plain text, so it works as a Claude
//! `<system-reminder>` and as a Gemini retry prompt alike.

use std::fmt::Write;

use super::report::{ExistingFailures, StopReport, TestOutcome, TestVerdict};
use super::runner::TestExit;
use super::warm::WarmUse;
use cp_git::GitError;

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
    let verdicts: Vec<TestVerdict> = report.tests.iter().map(TestOutcome::verdict).collect();
    let any = |v: TestVerdict| verdicts.contains(&v);
    super::listing::scope(&mut out, report);
    if any(TestVerdict::MissingTool) {
        out.push_str(
            "\nThe tests did not run because something is not installed: install it with the \
             command given above, then stop again. There is no test to fix yet.\n",
        );
    }
    let still_running = |t: &TestOutcome| matches!(t.warm, Some(WarmUse::StillRunning { .. }));
    if report.tests.iter().any(still_running) {
        out.push_str(
            "\nThe tests have not finished yet, which says nothing about whether they pass: \
             they go on in the background on this very tree, and stopping again without \
             changing anything takes their verdict (or raise the limit as shown above).\n",
        );
    } else if any(TestVerdict::TimedOut) {
        out.push_str(
            "\nThe tests did not finish in time, which says nothing about whether they pass: \
             raise the limit as shown above (or make the suite faster), then stop again.\n",
        );
    }
    if any(TestVerdict::Error) || any(TestVerdict::NoTests) {
        out.push_str(
            "\nThe tests did not run: fix the error shown above (or the test command) before \
             proceeding.\n",
        );
    }
    if any(TestVerdict::OtherFailure) {
        out.push_str(
            "\nThe tests passed, but the test command failed on something else, named above: \
             fix that before proceeding.\n",
        );
    }
    if any(TestVerdict::Failed) {
        out.push_str(failed_advice(report));
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
    match &tests.warm {
        Some(WarmUse::Reused { .. }) => {
            out.push_str("(A warm run tested this very tree while you worked: no wait.)\n");
        }
        Some(WarmUse::Waited { waited_ms }) => {
            let _ = writeln!(
                out,
                "(A warm run was testing this very tree when you stopped; the stop waited \
                 {:.1}s for the rest.)",
                duration_secs(*waited_ms)
            );
        }
        Some(WarmUse::StillRunning { waited_secs }) => {
            let _ = writeln!(
                out,
                "(A warm run of this very tree still runs at low priority after {waited_secs}s; \
                 the next stop on the same tree takes its verdict.)"
            );
        }
        None => {}
    }
}

/// `Tests`, or `Tests (backend)` for one project's tests among several.
pub(crate) fn tests_label(tests: &TestOutcome) -> String {
    match &tests.project {
        Some(project) => format!("Tests ({project})"),
        None => "Tests".to_owned(),
    }
}

/// The headline word of a run's result: `passed`, `FAILED`, `ERROR`, `TIMED OUT`, …
pub(crate) fn headline(tests: &TestOutcome) -> &'static str {
    match tests.verdict() {
        TestVerdict::Passed => "passed",
        TestVerdict::Failed | TestVerdict::OtherFailure => "FAILED",
        TestVerdict::Error => "ERROR",
        TestVerdict::NoTests => "ran NO TESTS",
        TestVerdict::TimedOut => "TIMED OUT",
        TestVerdict::MissingTool => "NOT RUN",
        TestVerdict::Stopped => "STOPPED",
    }
}

/// One test results line (with why this command ran), plus what the result means and the
/// output tail when the run did not pass.
pub(crate) fn test_section(out: &mut String, tests: &TestOutcome) {
    let summary = tests
        .summary
        .as_ref()
        .map(super::test_output::TestSummary::describe);
    let time = format!("{:.1}s", duration_secs(tests.elapsed_ms));
    let label = tests_label(tests);
    let verdict = tests.verdict();
    if verdict == TestVerdict::Passed {
        let detail = summary.unwrap_or_else(|| {
            format!("exit code 0 in {time}; no test summary line recognised in the output")
        });
        let _ = writeln!(out, "{label} passed: {detail} — `{}`", tests.command);
        why_line(out, tests);
        note_line(out, tests);
        return;
    }
    let why = failure_reason(tests);
    let _ = write!(
        out,
        "{label} {} ({why}) — `{}`",
        headline(tests),
        tests.command
    );
    match (&summary, verdict) {
        (_, TestVerdict::MissingTool | TestVerdict::TimedOut) => {}
        (Some(summary), _) => {
            let _ = write!(out, ": {summary}");
        }
        // Only the exit status is known: say so, and let the tail show what happened.
        (None, _) if matches!(tests.exit, Some(TestExit::Code { .. })) => {
            out.push_str(": no test summary line recognised in the output");
        }
        (None, _) => {}
    }
    out.push('\n');
    why_line(out, tests);
    note_line(out, tests);
    predating_lines(out, tests);
    meaning(out, tests, verdict);
    if !tests.tail.is_empty() {
        let _ = writeln!(out, "Last {} lines of output:", tests.tail.len());
        for line in &tests.tail {
            let _ = writeln!(out, "    {line}");
        }
    }
}

/// What to do about failed tests, as far as the session's base tells new failures from old.
fn failed_advice(report: &StopReport) -> &'static str {
    let failed = report
        .tests
        .iter()
        .filter(|t| t.verdict() == TestVerdict::Failed);
    let predating = failed
        .clone()
        .any(|t| t.predating.as_ref().is_some_and(|p| !p.is_empty()));
    if !predating {
        "\nFix failing tests before proceeding.\n"
    } else if report.existing_failures == ExistingFailures::Hold {
        "\nFix failing tests before proceeding, those already failing before this session too \
         (checkpoint.tests.hold_on_existing_failures is on).\n"
    } else if failed.clone().all(TestOutcome::only_predating) {
        "\nEvery failing test was already failing before this session (named above): they do \
         not hold your stop. Fix them only if your task asks for it.\n"
    } else {
        "\nFix the new failures before proceeding; the tests already failing before this \
         session do not hold your stop.\n"
    }
}

/// Which failures already failed at the session's base, and which are new, when the base's
/// verdict is known and some did.
fn predating_lines(out: &mut String, tests: &TestOutcome) {
    let Some(predating) = tests.predating.as_ref().filter(|p| !p.is_empty()) else {
        return;
    };
    let _ = writeln!(
        out,
        "Already failing before this session ({}): {}.",
        predating.len(),
        bounded_names(predating.iter().map(String::as_str))
    );
    let new = tests.new_failures();
    if !new.is_empty() {
        let _ = writeln!(
            out,
            "New since this session began ({}): {}.",
            new.len(),
            bounded_names(new.iter().copied())
        );
    }
}

/// Up to ten names, then how many more.
fn bounded_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    const SHOWN: usize = 10;
    let names: Vec<&str> = names.collect();
    let mut text = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        let _ = write!(text, " and {} more", names.len() - SHOWN);
    }
    text
}

/// `(Chosen: …)`: where the command came from.
fn why_line(out: &mut String, tests: &TestOutcome) {
    if let Some(why) = &tests.why {
        let _ = writeln!(out, "(Test command: {why}.)");
    }
}

/// What a result that is not a plain failure means, and what to do.
fn meaning(out: &mut String, tests: &TestOutcome, verdict: TestVerdict) {
    match verdict {
        TestVerdict::MissingTool => {
            if let Some(missing) = &tests.missing {
                let _ = writeln!(
                    out,
                    "Not installed: {} (`{}`).",
                    missing.tool, missing.evidence
                );
                match &missing.install {
                    Some(install) => {
                        let _ = writeln!(out, "To install it: {install}; then stop again.");
                    }
                    None => out.push_str("Install it, then stop again.\n"),
                }
            }
        }
        TestVerdict::TimedOut => {
            let limit = match tests.exit {
                Some(TestExit::TimedOut { after_secs }) => after_secs,
                _ => 0,
            };
            match tests.usual_ms {
                Some(ms) => {
                    let _ = writeln!(
                        out,
                        "The suite usually takes about {:.0}s (its last complete run).",
                        duration_secs(ms).ceil()
                    );
                }
                None => out.push_str(
                    "No earlier run of this command finished, so how long it takes is not known.\n",
                ),
            }
            let suggested = tests
                .usual_ms
                .map_or(limit.saturating_mul(4), |ms| {
                    (ms / 1000 + 1).saturating_mul(2)
                })
                .max(limit + 30);
            let _ = writeln!(
                out,
                "Raise the limit in .context-pilot/config.json: \
                 {{\"checkpoint\": {{\"tests\": {{\"timeout_secs\": {suggested}}}}}}} \
                 (now {limit}s; the default is {}s).",
                super::DEFAULT_TEST_TIMEOUT_SECS
            );
        }
        TestVerdict::NoTests => out.push_str(
            "No test ran, and zero tests is not a pass: check that the command finds the tests.\n",
        ),
        TestVerdict::OtherFailure => {
            let others = tests
                .summary
                .as_ref()
                .map(|s| s.other_failures.clone())
                .unwrap_or_default();
            if others.is_empty() {
                out.push_str(
                    "Every test that ran passed: what failed is another step of the test \
                     command (see the output below).\n",
                );
            }
        }
        _ => {}
    }
}

/// Why a run did not pass, e.g. `exit code 1` or `after 30s; the whole run was stopped`.
pub(crate) fn failure_reason(tests: &TestOutcome) -> String {
    match (&tests.exit, &tests.error) {
        (Some(TestExit::TimedOut { after_secs }), _)
            if matches!(tests.warm, Some(WarmUse::StillRunning { .. })) =>
        {
            format!("after {after_secs}s of waiting; it goes on in the background")
        }
        (Some(TestExit::TimedOut { after_secs }), _) => {
            format!("after {after_secs}s; the whole run was stopped")
        }
        _ if tests.missing.is_some() => "a tool is not installed".to_owned(),
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

/// What the person is told when git cannot read the repository and the stop gate is off:
/// `None` only outside a repository, where there is nothing to gate.
pub(crate) fn gate_off_notice(error: &GitError) -> Option<String> {
    match error {
        GitError::NotARepository(_) => None,
        GitError::Missing(e) => Some(format!(
            "Context Pilot: the stop gate is OFF: git cannot be started ({e}). Install git \
             (e.g. `apt-get install git`); until then no change is checked or tested when \
             the agent stops."
        )),
        GitError::Failed { dir, stderr, .. } if stderr.contains("dubious ownership") => {
            // Git names the repository's top: `… dubious ownership in repository at '/x'`.
            let at = stderr
                .split_once("repository at '")
                .and_then(|(_, rest)| rest.split_once('\''))
                .map_or_else(|| dir.display().to_string(), |(path, _)| path.to_owned());
            Some(format!(
                "Context Pilot: the stop gate is OFF in {}: git refuses the repository \
                 (\"dubious ownership\": it belongs to another user). Until that is fixed, no \
                 change is checked or tested when the agent stops. If you trust it, run \
                 `git config --global --add safe.directory {at}`.",
                dir.display(),
            ))
        }
        GitError::Failed { dir, stderr, .. } => Some(format!(
            "Context Pilot: the stop gate is OFF in {}: git failed: {}. Until that is fixed, \
             no change is checked or tested when the agent stops.",
            dir.display(),
            stderr.lines().next().unwrap_or("no message")
        )),
    }
}
