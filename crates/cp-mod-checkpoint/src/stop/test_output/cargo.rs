//! `cargo test` (libtest's `test result:` line, summed over every test binary) and
//! `cargo nextest run` (its `Summary` line).
//!
//! With `--no-fail-fast` every target runs and prints its own line, doctests included; their
//! names hold spaces (`src/lib.rs - add (line 19)`).
//!
//! A build that fails prints no `test result:` line; its ``error: could not compile `calc` ``
//! lines make it an error (no test could run) naming the crates that did not build.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{COUNT, num, push_unique, re, skips};
use super::summary::{TestFramework, TestSummary};

static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;(?: (\d+) ignored;)?(?:.*?finished in ([0-9.]+)s)?",
    )
});
static NOT_BUILT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^error: could not compile `([^`]+)`"));
// Doctests are named after their file and line, with spaces: `src/lib.rs - add (line 19)`.
static FAILED_TEST: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^test (\S.*?) \.\.\. FAILED\s*$"));
static NEXTEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"Summary \[\s*([0-9.]+)s\]\s+\d+ tests? run: (\d+) passed(.*)"));
static NEXTEST_FAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^\s*(?:FAIL|SIGSEGV|SIGABRT|TIMEOUT) \[\s*[0-9.]+s\] (.+?)\s*$"));

pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut found = false;
    let (mut passed, mut failed, mut ignored, mut seconds) = (0u64, 0u64, 0u64, None::<f64>);
    for caps in RESULT.captures_iter(text) {
        found = true;
        passed += num::<u64>(caps.get(1)).unwrap_or(0);
        failed += num::<u64>(caps.get(2)).unwrap_or(0);
        ignored += num::<u64>(caps.get(3)).unwrap_or(0);
        if let Some(s) = num::<f64>(caps.get(4)) {
            seconds = Some(seconds.unwrap_or(0.0) + s);
        }
    }
    let mut not_built = Vec::new();
    for caps in NOT_BUILT.captures_iter(text) {
        push_unique(&mut not_built, caps.get(1).map_or("", |m| m.as_str()));
    }
    if !found && not_built.is_empty() {
        return None;
    }
    let mut summary = TestSummary::new(TestFramework::Cargo);
    if found {
        summary.passed = Some(passed);
        summary.failed = Some(failed);
        summary.skipped = (ignored > 0).then_some(ignored);
        summary.seconds = seconds;
    }
    if !not_built.is_empty() {
        summary.errors = u64::try_from(not_built.len()).ok();
        summary.failing = not_built;
    }
    for caps in FAILED_TEST.captures_iter(text) {
        push_unique(&mut summary.failing, caps.get(1).map_or("", |m| m.as_str()));
    }
    Some(summary)
}

pub(super) fn parse_nextest(text: &str) -> Option<TestSummary> {
    let caps = NEXTEST.captures_iter(text).last()?;
    let rest = caps.get(3).map_or("", |m| m.as_str());
    let failed = COUNT
        .captures_iter(rest)
        .filter(|c| c.get(2).is_some_and(|w| w.as_str() == "failed"))
        .filter_map(|c| num::<u64>(c.get(1)))
        .sum();
    let mut summary = TestSummary::new(TestFramework::Nextest);
    summary.passed = num(caps.get(2));
    summary.failed = Some(failed);
    summary.skipped = skips(rest).0.filter(|n| *n > 0);
    summary.seconds = num(caps.get(1));
    for caps in NEXTEST_FAIL.captures_iter(text) {
        push_unique(&mut summary.failing, caps.get(1).map_or("", |m| m.as_str()));
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::super::parse_test_output;
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse_test_output(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn sums_every_test_binary() {
        let out = "\
     Running unittests src/lib.rs (target/debug/deps/demo-1)
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.25s
     Running tests/it.rs (target/debug/deps/it-2)
test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 1.50s
   Doc-tests demo
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let s = summary(out);
        assert_eq!(s.framework, TestFramework::Cargo);
        assert_eq!((s.passed, s.failed), (Some(6), Some(0)));
        assert!((s.seconds.unwrap() - 1.75).abs() < 1e-9);
        // The one ignored test is counted as skipped.
        assert_eq!(s.describe(), "6 passed, 1 skipped in 1.75s (cargo test)");
    }

    #[test]
    fn real_failure_names_the_test() {
        let s = summary(include_str!("samples/cargo_fail.txt"));
        assert_eq!((s.passed, s.failed), (Some(1), Some(1)));
        assert_eq!(s.failing, ["tests::adds_more"]);
        assert!(!s.is_error());
        assert_eq!(
            s.describe(),
            "1 failed, 1 passed in 0.10s (cargo test); failing: tests::adds_more"
        );
    }

    #[test]
    fn real_build_failure_is_an_error_naming_the_crate() {
        let s = summary(include_str!("samples/cargo_compile_error.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (None, None, Some(1)));
        assert!(s.is_error());
        assert_eq!(s.describe(), "1 error (cargo test); errors in: calc");
    }

    #[test]
    fn doctest_names_keep_their_spaces() {
        let s = summary(
            "running 1 test\ntest tests::adds ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   Doc-tests calc\n\nrunning 2 tests\ntest src/lib.rs - add (line 3) ... FAILED\ntest src/lib.rs - sub (line 9) ... ok\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s\n",
        );
        assert_eq!((s.passed, s.failed), (Some(1), Some(2)));
        assert_eq!(s.failing, ["tests::adds", "src/lib.rs - add (line 3)"]);
    }

    #[test]
    fn nextest_summary() {
        let s = summary(
            "        PASS [   0.004s] demo tests::a\n        FAIL [   0.005s] demo tests::b\n------------\n     Summary [   0.012s] 4 tests run: 3 passed, 1 failed, 0 skipped\n        FAIL [   0.005s] demo tests::b\n",
        );
        assert_eq!(s.framework, TestFramework::Nextest);
        assert_eq!((s.passed, s.failed), (Some(3), Some(1)));
        assert_eq!(s.seconds, Some(0.012));
        assert_eq!(s.failing, ["demo tests::b"]);
        let ok = summary("     Summary [   1.500s] 1 test run: 1 passed, 0 skipped\n");
        assert_eq!((ok.passed, ok.failed), (Some(1), Some(0)));
    }
}
