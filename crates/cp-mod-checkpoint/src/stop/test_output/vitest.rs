//! vitest: `      Tests  1 failed | 3 passed (4)`, `   Duration  1.20s (…)`, and
//! ` FAIL  file > suite > test` per failure.
//!
//! A file that cannot load is listed as ` FAIL  file [ file ]` under "Failed Suites" and the
//! Tests line reads `no tests`: an error.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{counts, num, push_unique, re, seconds, skips};
use super::summary::{TestFramework, TestSummary, add};

static TESTS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*Tests\s{2,}(.+?)\s*$"));
static ERRORS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*Errors\s{2,}(\d+) errors?"));
static DURATION: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*Duration\s{2,}([0-9.]+)(ms|s)\b"));
static FAILED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*FAIL\s+(.+?)\s*$"));

/// Every run's `Tests` line, summed (a Makefile or a workspace may run vitest twice).
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut summary = TestSummary::new(TestFramework::Vitest);
    for caps in TESTS.captures_iter(text) {
        let list = caps.get(1).map_or("", |m| m.as_str());
        if !(list == "no tests" || list.ends_with(')')) {
            continue;
        }
        let (passed, failed, _) = counts(list);
        let (skipped, _) = skips(list);
        summary.skipped = add(summary.skipped, skipped);
        summary.passed = add(summary.passed, Some(passed.unwrap_or(0)));
        summary.failed = add(summary.failed, Some(failed.unwrap_or(0)));
    }
    summary.passed?;
    for t in DURATION.captures_iter(text) {
        summary.seconds = add(summary.seconds, seconds(t.get(1), t.get(2)));
    }
    let mut errors: u64 = ERRORS
        .captures_iter(text)
        .last()
        .and_then(|c| num(c.get(1)))
        .unwrap_or(0);
    for caps in FAILED.captures_iter(text) {
        let name = caps.get(1).map_or("", |m| m.as_str());
        if name.starts_with("Tests failed.") {
            // Watch mode's status line (`FAIL  Tests failed. Watching for file changes...`),
            // not a test; the gate runs vitest as CI does, where it never prints it.
            continue;
        }
        if name.contains(" > ") {
            push_unique(&mut summary.failing, name);
        } else {
            // A whole file failed before its tests: `file [ file ]`.
            let file = name.split(" [").next().unwrap_or(name);
            if !summary.failing.iter().any(|n| n == file) {
                errors += 1;
            }
            push_unique(&mut summary.failing, file);
        }
    }
    summary.errors = (errors > 0).then_some(errors);
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn failure_names_the_test() {
        let s = summary(
            " ❯ test/calc.test.js (2 tests | 1 failed) 5ms\n   × adds more 3ms\n\n⎯⎯⎯ Failed Tests 1 ⎯⎯⎯\n\n FAIL  test/calc.test.js > calc > adds more\nAssertionError: expected 4 to be 5\n\n Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n   Start at  11:30:00\n   Duration  250ms (transform 10ms, setup 0ms)\n",
        );
        assert_eq!(
            (s.passed, s.failed, s.errors, s.seconds),
            (Some(1), Some(1), None, Some(0.25))
        );
        assert_eq!(s.failing, ["test/calc.test.js > calc > adds more"]);
        let ok =
            summary(" Test Files  2 passed (2)\n      Tests  4 passed (4)\n   Duration  1.20s\n");
        assert_eq!(
            (ok.passed, ok.failed, ok.seconds),
            (Some(4), Some(0), Some(1.2))
        );
    }

    #[test]
    fn file_that_cannot_load_is_an_error() {
        let s = summary(
            "⎯⎯⎯ Failed Suites 1 ⎯⎯⎯\n\n FAIL  test/calc.test.js [ test/calc.test.js ]\nError: Cannot find module '../calc'\n\n Test Files  1 failed (1)\n      Tests  no tests\n   Duration  300ms\n",
        );
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), Some(0), Some(1)));
        assert!(s.is_error());
        assert_eq!(s.failing, ["test/calc.test.js"]);
    }
}
