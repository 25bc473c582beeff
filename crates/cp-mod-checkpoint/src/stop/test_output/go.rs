//! `go test`: one `ok`/`FAIL` line per package, `--- FAIL: TestName` per failing test.
//!
//! Counts are packages. A package that does not build (`FAIL pkg [build failed]`, or
//! `[setup failed]`) is an error, not a test failure. No Go toolchain was on the machine when
//! this was written, so the samples below follow the documented output format of `go test`.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{num, push_unique, re};
use super::summary::{TestFramework, TestSummary};

static OK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^ok\s+\S+\s+(?:([0-9.]+)s|\(cached\))"));
static FAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^FAIL\s+\S+\s+(?:([0-9.]+)s|\[(build|setup) failed\])"));
static FAILED_TEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*--- FAIL: (\S+)"));
static PASS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^PASS\s*$"));

pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut seconds = None::<f64>;
    let mut add = |m: Option<regex::Match<'_>>| {
        if let Some(s) = num::<f64>(m) {
            seconds = Some(seconds.unwrap_or(0.0) + s);
        }
    };
    let mut passed = 0u64;
    for caps in OK.captures_iter(text) {
        passed += 1;
        add(caps.get(1));
    }
    let (mut failed, mut errors) = (0u64, 0u64);
    for caps in FAIL.captures_iter(text) {
        if caps.get(2).is_some() {
            errors += 1;
        } else {
            failed += 1;
        }
        add(caps.get(1));
    }
    if passed + failed + errors == 0 {
        return None;
    }
    let mut summary = TestSummary::new(TestFramework::GoTest);
    summary.passed = Some(passed);
    summary.failed = Some(failed);
    summary.errors = (errors > 0).then_some(errors);
    summary.seconds = seconds;
    for caps in FAILED_TEST.captures_iter(text) {
        push_unique(&mut summary.failing, caps.get(1).map_or("", |m| m.as_str()));
    }
    Some(summary)
}

/// A single package run with `go test` in its directory may print only `PASS`; asked only
/// when no runner's summary was found.
pub(super) fn parse_pass_only(text: &str) -> Option<TestSummary> {
    PASS.is_match(text)
        .then(|| TestSummary::new(TestFramework::GoTest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn packages_pass() {
        let s = summary(
            "ok  \texample.com/a\t0.003s\nok  \texample.com/b\t(cached)\n?   \texample.com/c\t[no test files]\n",
        );
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(2), Some(0), Some(0.003))
        );
        assert_eq!(s.describe(), "2 packages passed in 0.00s (go test)");
        let pass_only = super::super::parse_test_output("PASS\n").unwrap();
        assert_eq!((pass_only.passed, pass_only.seconds), (None, None));
    }

    #[test]
    fn failure_names_the_test() {
        let s = summary(
            "--- FAIL: TestAddMore (0.00s)\n    calc_test.go:12: Add(2, 2) = 4, want 5\nFAIL\nFAIL\texample.com/calc\t0.010s\nok  \texample.com/b\t0.020s\nFAIL\n",
        );
        assert_eq!((s.passed, s.failed), (Some(1), Some(1)));
        assert_eq!(s.failing, ["TestAddMore"]);
        assert!(!s.is_error());
    }

    #[test]
    fn build_failure_is_an_error() {
        let s = summary(
            "# example.com/calc [example.com/calc.test]\n./calc_test.go:5:2: undefined: Nope\nFAIL\texample.com/calc [build failed]\nFAIL\n",
        );
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), Some(0), Some(1)));
        assert!(s.is_error());
    }
}
