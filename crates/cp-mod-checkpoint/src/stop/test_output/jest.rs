//! jest: `Tests:       1 failed, 5 passed, 6 total`, `Time:        1.2 s`, and a `● Suite ›
//! test` heading per failure.
//!
//! A test file that cannot load prints `● Test suite failed to run` and adds no test, so the
//! run counts as an error. The block starts at `Test Suites:`, which tells it from look-alike
//! `Tests:` lines of other tools (tstyche's type tests print `Test files:` above theirs).

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{counts, push_unique, re, seconds, skips};
use super::summary::{TestFramework, TestSummary, add};

static SUITES: LazyLock<Regex> = LazyLock::new(|| re(r"^Test Suites:\s+(.*\d+ total)"));
static TESTS: LazyLock<Regex> = LazyLock::new(|| re(r"^Tests:\s+(.*\d+ total)"));
static TIME: LazyLock<Regex> = LazyLock::new(|| re(r"^Time:\s+([0-9.]+)\s*(ms|s)\b"));
static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*● (.+?)\s*$"));

/// Lines after `Test Suites:` that belong to the same summary block.
const BLOCK: usize = 4;

/// Every jest run's summary block (`Test Suites:`, `Tests:`, `Snapshots:`, `Time:`), summed:
/// `npm test --workspaces` runs jest once a package.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let lines: Vec<&str> = text.lines().collect();
    let mut summary = TestSummary::new(TestFramework::Jest);
    let mut found = false;
    let mut broken_by_count = 0u64;
    for (i, line) in lines.iter().enumerate() {
        let Some(suites) = SUITES.captures(line) else {
            continue;
        };
        found = true;
        let block = lines.iter().skip(i + 1).take(BLOCK);
        let mut tests = None;
        for next in block {
            if let Some(caps) = TESTS.captures(next) {
                tests = Some(caps.get(1).map_or("", |m| m.as_str()));
            } else if let Some(t) = TIME.captures(next) {
                summary.seconds = add(summary.seconds, seconds(t.get(1), t.get(2)));
            }
        }
        let (passed, failed, _) = counts(tests.unwrap_or(""));
        let (skipped, _) = skips(tests.unwrap_or(""));
        summary.skipped = add(summary.skipped, skipped);
        summary.passed = add(summary.passed, Some(passed.unwrap_or(0)));
        summary.failed = add(summary.failed, Some(failed.unwrap_or(0)));
        if tests.is_none() {
            // Every suite failed to load: no Tests line at all.
            broken_by_count += counts(suites.get(1).map_or("", |m| m.as_str()))
                .1
                .unwrap_or(0);
        }
    }
    if !found {
        return None;
    }
    let mut broken_suites = 0u64;
    for caps in FAILED.captures_iter(text) {
        let name = caps.get(1).map_or("", |m| m.as_str());
        if name == "Test suite failed to run" {
            broken_suites += 1;
        } else {
            push_unique(&mut summary.failing, name);
        }
    }
    let broken = broken_suites.max(broken_by_count);
    summary.errors = (broken > 0).then_some(broken);
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn summary_with_seconds_or_milliseconds() {
        let s = summary(
            "  ● Calc › adds more\n\n    expect(received).toBe(expected)\n\nTest Suites: 1 failed, 2 passed, 3 total\nTests:       1 failed, 5 passed, 6 total\nSnapshots:   0 total\nTime:        1.234 s, estimated 2 s\n",
        );
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(5), Some(1), Some(1.234))
        );
        assert_eq!(s.failing, ["Calc › adds more"]);
        let ms = summary(
            "Test Suites: 1 passed, 1 total\nTests:       2 passed, 2 total\nTime:        850 ms\n",
        );
        assert_eq!((ms.passed, ms.seconds), (Some(2), Some(0.85)));
    }

    #[test]
    fn every_run_is_summed() {
        let s = summary(
            "Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 passed, 3 total\nTime:        1 s\n\nTest Suites: 1 passed, 1 total\nTests:       4 passed, 4 total\nTime:        500 ms\n",
        );
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(6), Some(1), Some(1.5))
        );
        // tstyche's block is not jest's.
        assert!(
            parse("Test files:  1 passed, 1 total\nTests:       3 passed, 3 total\n").is_none()
        );
    }

    #[test]
    fn suite_that_fails_to_load_is_an_error() {
        let s = summary(
            " FAIL  test/calc.test.js\n  ● Test suite failed to run\n\n    Cannot find module '../calc' from 'test/calc.test.js'\n\nTest Suites: 1 failed, 1 total\nTests:       0 total\nSnapshots:   0 total\nTime:        0.5 s\n",
        );
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), Some(0), Some(1)));
        assert!(s.is_error());
        assert!(s.failing.is_empty());
    }
}
