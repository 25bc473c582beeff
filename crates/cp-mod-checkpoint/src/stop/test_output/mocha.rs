//! mocha: `  2 passing (5ms)`, `  1 failing`, `  1 pending`, then `  1) Suite` followed by the
//! test title on the next, deeper-indented line ending in `:`.
//!
//! A spec file that throws while loading stops mocha before the summary, so such output is
//! not recognized and the stop gate reports it as an error with its tail. Written from
//! mocha's documented output (mocha was not installed).

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{num, push_unique, re, seconds};
use super::summary::{TestFramework, TestSummary, add};

static PASSING: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\d+) passing(?: \((\d+)(ms|s)\))?\s*$"));
static FAILING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(\d+) failing\s*$"));
static PENDING: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(\d+) pending\s*$"));
static FAILURE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s{2}\d+\) (.+?)\s*$"));

/// Every run's `N passing` with the `N failing` that follows it, summed.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut summary = TestSummary::new(TestFramework::Mocha);
    let all: Vec<&str> = text.lines().collect();
    for (i, line) in all.iter().enumerate() {
        let Some(passing) = PASSING.captures(line) else {
            continue;
        };
        summary.passed = add(summary.passed, num(passing.get(1)));
        let failing = all
            .iter()
            .skip(i + 1)
            .take(3)
            .find_map(|l| FAILING.captures(l))
            .and_then(|c| num(c.get(1)));
        summary.failed = add(summary.failed, Some(failing.unwrap_or(0)));
        let pending = all
            .iter()
            .skip(i + 1)
            .take(3)
            .find_map(|l| PENDING.captures(l))
            .and_then(|c| num(c.get(1)));
        summary.skipped = add(summary.skipped, pending);
        summary.seconds = add(summary.seconds, seconds(passing.get(2), passing.get(3)));
    }
    summary.passed?;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(caps) = FAILURE.captures(line) else {
            continue;
        };
        let mut name = caps.get(1).map_or("", |m| m.as_str()).to_owned();
        // The title continues on deeper-indented lines until one ends with ':'.
        for next in lines.iter().skip(i + 1).take(8) {
            let part = next.trim();
            if part.is_empty() || !next.starts_with("     ") {
                break;
            }
            name.push(' ');
            name.push_str(part.trim_end_matches(':'));
            if part.ends_with(':') {
                break;
            }
        }
        push_unique(&mut summary.failing, name.trim_end_matches(':'));
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_names_the_test() {
        let s = parse(
            "\n  Calc\n    ✔ adds\n    1) adds more\n\n\n  1 passing (7ms)\n  1 failing\n\n  1) Calc\n       adds more:\n\n      AssertionError [ERR_ASSERTION]: 4 == 5\n      at Context.<anonymous> (test/calc.test.js:9:12)\n\n",
        )
        .unwrap();
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(1), Some(1), Some(0.007))
        );
        assert_eq!(s.failing, ["Calc adds more"]);
        assert!(!s.is_error());
    }

    #[test]
    fn all_passing() {
        let s = parse("  Calc\n    ✔ adds\n\n  3 passing (1s)\n  1 pending\n").unwrap();
        assert_eq!(s.skipped, Some(1));
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(3), Some(0), Some(1.0))
        );
    }
}
