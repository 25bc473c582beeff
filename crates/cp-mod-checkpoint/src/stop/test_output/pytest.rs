//! pytest: the closing `=== 1 failed, 4 passed in 0.20s ===` line and the short test summary
//! (`FAILED path::test - reason`, `ERROR path`).
//!
//! `error`/`errors` are collection or fixture errors, not test failures, and `no tests ran`
//! is zero tests: both are reported as errors, never as failed tests.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{counts, num, push_unique, re};
use super::summary::{TestFramework, TestSummary};

static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?m)^=*\s*((?:\d+ [a-z]+|no tests ran)(?:, \d+ [a-z]+)*) in ([0-9.]+)s\b")
});
static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?:FAILED|ERROR) (\S+)"));

pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let caps = SUMMARY.captures_iter(text).last()?;
    let (passed, failed, errors) = counts(caps.get(1).map_or("", |m| m.as_str()));
    let mut summary = TestSummary::new(TestFramework::Pytest);
    summary.passed = Some(passed.unwrap_or(0));
    summary.failed = failed;
    summary.errors = errors;
    summary.seconds = num(caps.get(2));
    for caps in FAILED.captures_iter(text) {
        push_unique(&mut summary.failing, caps.get(1).map_or("", |m| m.as_str()));
    }
    Some(summary)
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
    }
}
