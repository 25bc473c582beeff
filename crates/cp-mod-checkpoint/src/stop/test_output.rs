//! Reading pass counts and times out of common test runners' output.
//!
//! The exit status decides pass or fail; a summary only makes the message informative. Output
//! no parser recognizes is fine: the message then reports the exit status alone.

use std::fmt::Write;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Which tool produced the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestFramework {
    /// `cargo test` (summed over every test binary and doc-tests).
    Cargo,
    /// `cargo nextest run`.
    Nextest,
    /// `pytest`.
    Pytest,
    /// `go test`; counts are packages, not tests.
    GoTest,
    /// `jest` (also via `npm test`).
    Jest,
}

impl TestFramework {
    fn label(self) -> &'static str {
        match self {
            Self::Cargo => "cargo test",
            Self::Nextest => "cargo nextest",
            Self::Pytest => "pytest",
            Self::GoTest => "go test",
            Self::Jest => "jest",
        }
    }
}

/// What the output says about the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// The recognized tool.
    pub framework: TestFramework,
    /// Passed tests (packages for `go test`), when stated.
    pub passed: Option<u64>,
    /// Failed tests (packages for `go test`), when stated.
    pub failed: Option<u64>,
    /// Time the tool reports, in seconds.
    pub seconds: Option<f64>,
}

impl TestSummary {
    /// e.g. `12 passed in 0.84s (cargo test)` or `1 failed, 4 passed in 0.20s (pytest)`.
    pub fn describe(&self) -> String {
        let unit = if self.framework == TestFramework::GoTest {
            " packages"
        } else {
            ""
        };
        let mut parts = Vec::new();
        if let Some(failed) = self.failed.filter(|n| *n > 0) {
            parts.push(format!("{failed}{unit} failed"));
        }
        if let Some(passed) = self.passed {
            parts.push(format!("{passed}{unit} passed"));
        }
        let mut text = if parts.is_empty() {
            "finished".to_owned()
        } else {
            parts.join(", ")
        };
        if let Some(seconds) = self.seconds {
            let _ = write!(text, " in {seconds:.2}s");
        }
        let _ = write!(text, " ({})", self.framework.label());
        text
    }
}

fn re(pattern: &str) -> Regex {
    #[expect(
        clippy::expect_used,
        reason = "literal patterns, each exercised by the unit tests below"
    )]
    Regex::new(pattern).expect("valid literal regex")
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| re(r"\x1b\[[0-9;?]*[A-Za-z]"));
static CARGO: LazyLock<Regex> = LazyLock::new(|| {
    re(r"test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;(?:.*?finished in ([0-9.]+)s)?")
});
static NEXTEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"Summary \[\s*([0-9.]+)s\]\s+\d+ tests? run: (\d+) passed(.*)"));
static JEST_TESTS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Tests:\s+(.*\d+ total)"));
static JEST_TIME: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^Time:\s+([0-9.]+)\s*(ms|s)\b"));
static GO_OK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^ok\s+\S+\s+(?:([0-9.]+)s|\(cached\))"));
static GO_FAIL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^FAIL\s+\S+\s+(?:([0-9.]+)s|\[)"));
static GO_PASS: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^PASS\s*$"));
static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?m)^=*\s*((?:\d+ [a-z]+|no tests ran)(?:, \d+ [a-z]+)*) in ([0-9.]+)s\b")
});
static COUNT: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+) ([a-z]+)"));

/// Removes ANSI colour and cursor sequences.
pub(crate) fn strip_ansi(text: &str) -> String {
    ANSI.replace_all(text, "").into_owned()
}

/// Recognizes the output of cargo test, cargo nextest, jest, go test or pytest.
pub fn parse_test_output(output: &str) -> Option<TestSummary> {
    let text = strip_ansi(output);
    // Order matters: cargo's "finished in Xs" would also satisfy the pytest pattern.
    parse_nextest(&text)
        .or_else(|| parse_cargo(&text))
        .or_else(|| parse_jest(&text))
        .or_else(|| parse_go(&text))
        .or_else(|| parse_pytest(&text))
}

fn num<T: std::str::FromStr>(m: Option<regex::Match<'_>>) -> Option<T> {
    m.and_then(|m| m.as_str().parse().ok())
}

fn parse_cargo(text: &str) -> Option<TestSummary> {
    let mut found = false;
    let (mut passed, mut failed, mut seconds) = (0u64, 0u64, None::<f64>);
    for caps in CARGO.captures_iter(text) {
        found = true;
        passed += num::<u64>(caps.get(1)).unwrap_or(0);
        failed += num::<u64>(caps.get(2)).unwrap_or(0);
        if let Some(s) = num::<f64>(caps.get(3)) {
            seconds = Some(seconds.unwrap_or(0.0) + s);
        }
    }
    found.then_some(TestSummary {
        framework: TestFramework::Cargo,
        passed: Some(passed),
        failed: Some(failed),
        seconds,
    })
}

fn parse_nextest(text: &str) -> Option<TestSummary> {
    let caps = NEXTEST.captures_iter(text).last()?;
    let rest = caps.get(3).map_or("", |m| m.as_str());
    let failed = COUNT
        .captures_iter(rest)
        .filter(|c| c.get(2).is_some_and(|w| w.as_str() == "failed"))
        .filter_map(|c| num::<u64>(c.get(1)))
        .sum();
    Some(TestSummary {
        framework: TestFramework::Nextest,
        passed: num(caps.get(2)),
        failed: Some(failed),
        seconds: num(caps.get(1)),
    })
}

fn counts(list: &str) -> (Option<u64>, Option<u64>) {
    let mut passed = None;
    let mut failed = None::<u64>;
    for c in COUNT.captures_iter(list) {
        let n: u64 = num(c.get(1)).unwrap_or(0);
        match c.get(2).map(|w| w.as_str()) {
            Some("passed") => passed = Some(n),
            Some("failed" | "error" | "errors") => failed = Some(failed.unwrap_or(0) + n),
            _ => {}
        }
    }
    (passed, failed)
}

fn parse_jest(text: &str) -> Option<TestSummary> {
    let caps = JEST_TESTS.captures_iter(text).last()?;
    let (passed, failed) = counts(caps.get(1).map_or("", |m| m.as_str()));
    let seconds = JEST_TIME.captures_iter(text).last().and_then(|t| {
        let value: f64 = num(t.get(1))?;
        Some(if t.get(2)?.as_str() == "ms" {
            value / 1000.0
        } else {
            value
        })
    });
    Some(TestSummary {
        framework: TestFramework::Jest,
        passed: Some(passed.unwrap_or(0)),
        failed: Some(failed.unwrap_or(0)),
        seconds,
    })
}

fn parse_go(text: &str) -> Option<TestSummary> {
    let mut seconds = None::<f64>;
    let mut passed = 0u64;
    for caps in GO_OK.captures_iter(text) {
        passed += 1;
        if let Some(s) = num::<f64>(caps.get(1)) {
            seconds = Some(seconds.unwrap_or(0.0) + s);
        }
    }
    let mut failed = 0u64;
    for caps in GO_FAIL.captures_iter(text) {
        failed += 1;
        if let Some(s) = num::<f64>(caps.get(1)) {
            seconds = Some(seconds.unwrap_or(0.0) + s);
        }
    }
    if passed + failed > 0 {
        return Some(TestSummary {
            framework: TestFramework::GoTest,
            passed: Some(passed),
            failed: Some(failed),
            seconds,
        });
    }
    // A single package run with `go test` in its directory may print only PASS.
    GO_PASS.is_match(text).then_some(TestSummary {
        framework: TestFramework::GoTest,
        passed: None,
        failed: None,
        seconds: None,
    })
}

fn parse_pytest(text: &str) -> Option<TestSummary> {
    let caps = PYTEST.captures_iter(text).last()?;
    let (passed, failed) = counts(caps.get(1).map_or("", |m| m.as_str()));
    Some(TestSummary {
        framework: TestFramework::Pytest,
        passed: Some(passed.unwrap_or(0)),
        failed: Some(failed.unwrap_or(0)),
        seconds: num(caps.get(2)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse_test_output(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn cargo_sums_every_test_binary() {
        let out = "\
   Compiling demo v0.1.0
     Running unittests src/lib.rs (target/debug/deps/demo-1)

running 3 tests
test a ... ok
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
        assert_eq!(s.describe(), "6 passed in 1.75s (cargo test)");
    }

    #[test]
    fn cargo_failure_counts() {
        let s = summary(
            "test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n",
        );
        assert_eq!((s.passed, s.failed), (Some(4), Some(1)));
        assert_eq!(s.describe(), "1 failed, 4 passed in 0.02s (cargo test)");
    }

    #[test]
    fn nextest_summary() {
        let s = summary(
            "        PASS [   0.004s] demo tests::a\n------------\n     Summary [   0.012s] 4 tests run: 3 passed, 1 failed, 0 skipped\n",
        );
        assert_eq!(s.framework, TestFramework::Nextest);
        assert_eq!((s.passed, s.failed), (Some(3), Some(1)));
        assert_eq!(s.seconds, Some(0.012));
        let ok = summary("     Summary [   1.500s] 1 test run: 1 passed, 0 skipped\n");
        assert_eq!((ok.passed, ok.failed), (Some(1), Some(0)));
    }

    #[test]
    fn pytest_quiet_and_verbose_summaries() {
        let q = summary("....\n4 passed in 0.12s\n");
        assert_eq!(q.framework, TestFramework::Pytest);
        assert_eq!(
            (q.passed, q.failed, q.seconds),
            (Some(4), Some(0), Some(0.12))
        );
        let v = summary(
            "FAILED tests/test_x.py::test_b - assert 1 == 2\n========= 1 failed, 4 passed, 2 warnings in 0.20s =========\n",
        );
        assert_eq!((v.passed, v.failed), (Some(4), Some(1)));
        assert_eq!(v.describe(), "1 failed, 4 passed in 0.20s (pytest)");
        let e = summary("=== 3 passed, 1 error in 65.43s (0:01:05) ===\n");
        assert_eq!(
            (e.passed, e.failed, e.seconds),
            (Some(3), Some(1), Some(65.43))
        );
        let none = summary("no tests ran in 0.01s\n");
        assert_eq!(none.passed, Some(0));
    }

    #[test]
    fn go_test_packages() {
        let s = summary(
            "ok  \texample.com/a\t0.003s\nok  \texample.com/b\t(cached)\n?   \texample.com/c\t[no test files]\n",
        );
        assert_eq!(s.framework, TestFramework::GoTest);
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(2), Some(0), Some(0.003))
        );
        assert_eq!(s.describe(), "2 packages passed in 0.00s (go test)");
        let f = summary(
            "--- FAIL: TestX (0.00s)\nFAIL\nFAIL\texample.com/a\t0.010s\nok  \texample.com/b\t0.020s\n",
        );
        assert_eq!((f.passed, f.failed), (Some(1), Some(1)));
        let pass_only = summary("PASS\n");
        assert_eq!((pass_only.passed, pass_only.seconds), (None, None));
    }

    #[test]
    fn jest_summary_with_seconds_or_milliseconds() {
        let s = summary(
            "Test Suites: 1 failed, 2 passed, 3 total\nTests:       1 failed, 5 passed, 6 total\nSnapshots:   0 total\nTime:        1.234 s, estimated 2 s\n",
        );
        assert_eq!(s.framework, TestFramework::Jest);
        assert_eq!(
            (s.passed, s.failed, s.seconds),
            (Some(5), Some(1), Some(1.234))
        );
        let ms = summary("Tests:       2 passed, 2 total\nTime:        850 ms\n");
        assert_eq!((ms.passed, ms.seconds), (Some(2), Some(0.85)));
    }

    #[test]
    fn colours_are_ignored() {
        let s = summary("\x1b[32m\x1b[1m5 passed\x1b[0m\x1b[32m in 0.05s\x1b[0m\n");
        assert_eq!(s.passed, Some(5));
    }

    #[test]
    fn unknown_output_is_not_guessed() {
        assert_eq!(parse_test_output("all good\nexit 0\n"), None);
        assert_eq!(parse_test_output(""), None);
    }
}
