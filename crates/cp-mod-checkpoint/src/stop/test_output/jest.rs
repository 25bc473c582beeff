//! jest: `Tests:       1 failed, 5 passed, 6 total`, `Time:        1.2 s`, and a `● Suite ›
//! test` heading per failure.
//!
//! A test file that cannot load prints `● Test suite failed to run` and adds no test, so the
//! run counts as an error. Written from jest's documented output (jest was not installed).

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{counts, num, push_unique, re};
use super::summary::{TestFramework, TestSummary};

static TESTS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Tests:\s+(.*\d+ total)"));
static SUITES: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Test Suites:\s+(.*\d+ total)"));
static TIME: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Time:\s+([0-9.]+)\s*(ms|s)\b"));
static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*● (.+?)\s*$"));

pub(super) fn parse(text: &str) -> Option<TestSummary> {
    // Every suite failed to load: jest prints `Tests: 0 total` or no Tests line at all.
    let (list, suites) = if let Some(caps) = TESTS.captures_iter(text).last() {
        (caps.get(1).map_or("", |m| m.as_str()).to_owned(), None)
    } else {
        let caps = SUITES.captures_iter(text).last()?;
        (
            String::new(),
            Some(caps.get(1).map_or("", |m| m.as_str()).to_owned()),
        )
    };
    let (passed, failed, _) = counts(&list);
    let mut summary = TestSummary::new(TestFramework::Jest);
    summary.passed = Some(passed.unwrap_or(0));
    summary.failed = Some(failed.unwrap_or(0));
    summary.seconds = TIME.captures_iter(text).last().and_then(|t| {
        let value: f64 = num(t.get(1))?;
        Some(if t.get(2)?.as_str() == "ms" {
            value / 1000.0
        } else {
            value
        })
    });
    let mut broken_suites = 0u64;
    for caps in FAILED.captures_iter(text) {
        let name = caps.get(1).map_or("", |m| m.as_str());
        if name == "Test suite failed to run" {
            broken_suites += 1;
        } else {
            push_unique(&mut summary.failing, name);
        }
    }
    if broken_suites == 0 {
        broken_suites = suites.map_or(0, |s| counts(&s).1.unwrap_or(0));
    }
    summary.errors = (broken_suites > 0).then_some(broken_suites);
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
        let ms = summary("Tests:       2 passed, 2 total\nTime:        850 ms\n");
        assert_eq!((ms.passed, ms.seconds), (Some(2), Some(0.85)));
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
