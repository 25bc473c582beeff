//! pytest: the closing `=== 1 failed, 4 passed in 0.20s ===` line and the short test summary
//! (`FAILED path::test - reason`, `ERROR path`).
//!
//! `error`/`errors` are collection or fixture errors, not test failures, and `no tests ran`
//! is zero tests: both are reported as errors, never as failed tests.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{counts, num, push_unique, re, skips};
use super::summary::{TestFramework, TestSummary, add as sum};

static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?m)^=*\s*((?:\d+ [a-z]+|no tests ran)(?:, \d+ [a-z]+)*) in ([0-9.]+)s\b")
});
static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?:FAILED|ERROR) (\S.*?)\s*$"));

/// Every run's summary line (tox, nox or a Makefile may run pytest more than once), summed.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut summary = TestSummary::new(TestFramework::Pytest);
    let mut found = false;
    for caps in SUMMARY.captures_iter(text) {
        found = true;
        let list = caps.get(1).map_or("", |m| m.as_str());
        let (passed, failed, errors) = counts(list);
        let (skipped, xfailed) = skips(list);
        summary.skipped = sum(summary.skipped, skipped);
        summary.xfailed = sum(summary.xfailed, xfailed);
        summary.passed = Some(summary.passed.unwrap_or(0) + passed.unwrap_or(0));
        summary.failed = sum(summary.failed, failed);
        summary.errors = sum(summary.errors, errors);
        summary.seconds = sum(summary.seconds, num(caps.get(2)));
    }
    if !found {
        return None;
    }
    for caps in FAILED.captures_iter(text) {
        push_unique(
            &mut summary.failing,
            node_id(caps.get(1).map_or("", |m| m.as_str())),
        );
    }
    Some(summary)
}

/// The test id of a short summary line, `path::test[params] - message`: parameters may
/// hold spaces and ` - ` themselves (`test_evaluates[extra == 'a b']`), so an id with
/// parameters ends at the first `]` that the message separator or the line's end follows.
fn node_id(line: &str) -> &str {
    let head = line.split(" - ").next().unwrap_or(line);
    if let Some(open) = head.find('[') {
        for (i, _) in line[open..].match_indices(']') {
            let end = open + i + 1;
            let after = &line[end..];
            if after.trim().is_empty() || after.starts_with(" - ") {
                return &line[..end];
            }
        }
    }
    head.trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn real_pass() {
        let s = summary(include_str!("samples/pytest_pass.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(2), None, None));
        assert_eq!(s.describe(), "2 passed in 0.01s (pytest)");
    }

    #[test]
    fn real_failure_names_the_test() {
        let s = summary(include_str!("samples/pytest_fail.txt"));
        assert_eq!((s.passed, s.failed), (Some(1), Some(1)));
        assert_eq!(s.failing, ["tests/test_calc.py::test_more"]);
        assert!(!s.is_error());
        assert_eq!(
            s.describe(),
            "1 failed, 1 passed in 0.05s (pytest); failing: tests/test_calc.py::test_more"
        );
    }

    #[test]
    fn real_collection_error_is_an_error() {
        let s = summary(include_str!("samples/pytest_collection_error.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), None, Some(1)));
        assert!(s.is_error());
        assert_eq!(
            s.describe(),
            "1 error in 0.15s (pytest); errors in: tests/test_calc.py"
        );
    }

    #[test]
    fn real_no_tests_ran_is_an_error() {
        let s = summary(include_str!("samples/pytest_no_tests.txt"));
        assert!(s.ran_nothing() && s.is_error());
        assert_eq!(s.describe(), "no tests ran in 0.01s (pytest)");
    }

    #[test]
    fn ids_with_spaces_are_kept_whole() {
        let s = summary(
            "FAILED tests/test_m.py::test_evaluates[extra == 'security'] - AssertionError: no\nFAILED tests/test_m.py::test_evaluates[extra == 'security-fix'] - assert 1\nFAILED tests/test_m.py::test_evaluates[a - b] - x\nFAILED tests/test_m.py::test_plain - y\nFAILED tests/test_m.py::test_no_message[one two]\nERROR tests/test_broken.py - ModuleNotFoundError\n==== 5 failed, 3 passed, 1 error in 0.40s ====\n",
        );
        assert_eq!(
            s.failing,
            [
                "tests/test_m.py::test_evaluates[extra == 'security']",
                "tests/test_m.py::test_evaluates[extra == 'security-fix']",
                "tests/test_m.py::test_evaluates[a - b]",
                "tests/test_m.py::test_plain",
                "tests/test_m.py::test_no_message[one two]",
                "tests/test_broken.py",
            ]
        );
    }

    #[test]
    fn every_run_is_counted() {
        let s = summary("=== 2 passed in 0.10s ===\n...\n=== 1 failed, 3 passed in 0.20s ===\n");
        assert_eq!((s.passed, s.failed), (Some(5), Some(1)));
    }

    #[test]
    fn quiet_and_long_summaries() {
        let q = summary("....\n4 passed in 0.12s\n");
        assert_eq!((q.passed, q.seconds), (Some(4), Some(0.12)));
        let e = summary("=== 3 passed, 1 error in 65.43s (0:01:05) ===\n");
        assert_eq!(
            (e.passed, e.failed, e.errors, e.seconds),
            (Some(3), None, Some(1), Some(65.43))
        );
        assert!(e.is_error());
        let w = summary("== 1 failed, 4 passed, 2 warnings in 0.20s ==\n");
        assert_eq!((w.passed, w.failed), (Some(4), Some(1)));
        assert_eq!((w.skipped, w.xfailed), (None, None));
    }

    #[test]
    fn skipped_and_xfailed_are_counted_and_shown() {
        let s = summary(
            "FAILED tests/test_a.py::test_x - assert 0\n= 64 failed, 4999 passed, 264 skipped, 17 xfailed, 3 warnings in 81.20s (0:01:21) =\n",
        );
        assert_eq!(
            (s.passed, s.failed, s.skipped, s.xfailed),
            (Some(4999), Some(64), Some(264), Some(17))
        );
        assert_eq!(
            s.describe(),
            "64 failed, 4999 passed, 264 skipped, 17 xfailed in 81.20s (pytest); failing: \
             tests/test_a.py::test_x"
        );
        // Everything skipped is not "no tests ran".
        let all = summary("2 skipped in 0.01s\n");
        assert!(!all.ran_nothing() && !all.is_error(), "{all:?}");
    }
}
