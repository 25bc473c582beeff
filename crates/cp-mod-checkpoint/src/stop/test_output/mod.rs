//! Reading counts, times and failing test names out of common test runners' output.
//!
//! The exit status decides pass or fail; the summary line of the runner says how many tests
//! passed, failed or could not run, and which ones failed. Output no parser recognizes is
//! fine: the message then reports the exit status and the output tail. Each runner has its
//! own file; `samples/` holds outputs captured from the real tools, which the tests read.

mod cargo;
mod go;
mod jest;
mod mocha;
mod node;
mod pytest;
mod vitest;

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
    /// `vitest run`.
    Vitest,
    /// Node's built-in runner, `node --test` (TAP or spec reporter).
    NodeTest,
    /// `mocha`.
    Mocha,
}

impl TestFramework {
    fn label(self) -> &'static str {
        match self {
            Self::Cargo => "cargo test",
            Self::Nextest => "cargo nextest",
            Self::Pytest => "pytest",
            Self::GoTest => "go test",
            Self::Jest => "jest",
            Self::Vitest => "vitest",
            Self::NodeTest => "node --test",
            Self::Mocha => "mocha",
        }
    }
}

/// Failing test names listed in a description; the rest are counted.
const NAMES_SHOWN: usize = 10;

/// What the output says about the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    /// The recognized tool.
    pub framework: TestFramework,
    /// Passed tests (packages for `go test`), when stated.
    pub passed: Option<u64>,
    /// Failed tests (packages for `go test`), when stated.
    pub failed: Option<u64>,
    /// Errors outside any test: collection or import errors, files that crashed before
    /// their tests ran, packages that did not build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// Time the tool reports, in seconds.
    pub seconds: Option<f64>,
    /// Names of the failing tests (or erroring files), as the tool prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
}

impl TestSummary {
    pub(crate) fn new(framework: TestFramework) -> Self {
        Self {
            framework,
            passed: None,
            failed: None,
            errors: None,
            seconds: None,
            failing: Vec::new(),
        }
    }

    /// True when no test failed but the run had errors, or ran no test at all: a
    /// collection error, an import error or a crash before any test, not a test failure.
    pub fn is_error(&self) -> bool {
        let failed = self.failed.unwrap_or(0);
        let errors = self.errors.unwrap_or(0);
        failed == 0 && (errors > 0 || self.ran_nothing())
    }

    /// True when the tool says it ran no test.
    pub fn ran_nothing(&self) -> bool {
        self.passed == Some(0) && self.failed.unwrap_or(0) == 0 && self.errors.unwrap_or(0) == 0
    }

    /// e.g. `12 passed in 0.84s (cargo test)`, `1 failed, 4 passed in 0.20s (pytest);
    /// failing: tests/test_x.py::test_b` or `1 error, 0 passed in 0.15s (pytest)`.
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
        if let Some(errors) = self.errors.filter(|n| *n > 0) {
            let noun = if errors == 1 { "error" } else { "errors" };
            parts.push(format!("{errors} {noun}"));
        }
        if self.ran_nothing() {
            parts.push("no tests ran".to_owned());
        } else if let Some(passed) = self
            .passed
            .filter(|n| *n > 0 || self.failed.unwrap_or(0) > 0)
        {
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
        if !self.failing.is_empty() {
            let shown: Vec<&str> = self
                .failing
                .iter()
                .take(NAMES_SHOWN)
                .map(String::as_str)
                .collect();
            let label = if self.failed.unwrap_or(0) > 0 {
                "failing"
            } else {
                "errors in"
            };
            let _ = write!(text, "; {label}: {}", shown.join(", "));
            let more = self.failing.len().saturating_sub(NAMES_SHOWN);
            if more > 0 {
                let _ = write!(text, " and {more} more");
            }
        }
        text
    }
}

pub(super) fn re(pattern: &str) -> Regex {
    #[expect(
        clippy::expect_used,
        reason = "literal patterns, each exercised by the unit tests"
    )]
    Regex::new(pattern).expect("valid literal regex")
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| re(r"\x1b\[[0-9;?]*[A-Za-z]"));
static COUNT: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+) ([a-z]+)"));

/// Removes ANSI colour and cursor sequences.
pub(crate) fn strip_ansi(text: &str) -> String {
    ANSI.replace_all(text, "").into_owned()
}

/// Recognizes the output of cargo test, cargo nextest, jest, vitest, node's test runner,
/// mocha, go test or pytest.
pub fn parse_test_output(output: &str) -> Option<TestSummary> {
    let text = strip_ansi(output);
    // Order matters: cargo's "finished in Xs" would also satisfy the pytest pattern, and
    // jest's "Tests:" line is more specific than vitest's.
    cargo::parse_nextest(&text)
        .or_else(|| cargo::parse(&text))
        .or_else(|| jest::parse(&text))
        .or_else(|| vitest::parse(&text))
        .or_else(|| node::parse(&text))
        .or_else(|| mocha::parse(&text))
        .or_else(|| go::parse(&text))
        .or_else(|| pytest::parse(&text))
}

pub(super) fn num<T: std::str::FromStr>(m: Option<regex::Match<'_>>) -> Option<T> {
    m.and_then(|m| m.as_str().parse().ok())
}

/// Counts in a list like `1 failed, 4 passed, 2 errors`: (passed, failed, errors).
pub(super) fn counts(list: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let (mut passed, mut failed, mut errors) = (None, None, None::<u64>);
    for c in COUNT.captures_iter(list) {
        let n: u64 = num(c.get(1)).unwrap_or(0);
        match c.get(2).map(|w| w.as_str()) {
            Some("passed" | "passing" | "pass") => passed = Some(n),
            Some("failed" | "failing" | "fail") => failed = Some(n),
            Some("error" | "errors") => errors = Some(errors.unwrap_or(0) + n),
            _ => {}
        }
    }
    (passed, failed, errors)
}

/// Adds `name` unless it is already listed (reporters often repeat failures at the end).
pub(super) fn push_unique(names: &mut Vec<String>, name: &str) {
    let name = name.trim();
    if !name.is_empty() && !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_lists_errors_and_failing_names() {
        let mut s = TestSummary::new(TestFramework::Pytest);
        s.passed = Some(0);
        s.errors = Some(1);
        s.seconds = Some(0.15);
        s.failing = vec!["tests/test_calc.py".into()];
        assert!(s.is_error());
        assert_eq!(
            s.describe(),
            "1 error in 0.15s (pytest); errors in: tests/test_calc.py"
        );
        let mut many = TestSummary::new(TestFramework::Cargo);
        many.passed = Some(1);
        many.failed = Some(12);
        many.failing = (0..12).map(|i| format!("t{i}")).collect();
        assert!(!many.is_error());
        assert!(
            many.describe().ends_with("t8, t9 and 2 more"),
            "{}",
            many.describe()
        );
    }

    #[test]
    fn colours_are_ignored() {
        let s =
            parse_test_output("\x1b[32m\x1b[1m5 passed\x1b[0m\x1b[32m in 0.05s\x1b[0m\n").unwrap();
        assert_eq!(s.passed, Some(5));
    }

    #[test]
    fn unknown_output_is_not_guessed() {
        assert_eq!(parse_test_output("all good\nexit 0\n"), None);
        assert_eq!(parse_test_output(""), None);
    }

    #[test]
    fn summaries_without_failing_tests_are_not_reported_as_failures() {
        // The bug of issue 15: a collection error read as "1 failed, 0 passed".
        let s = parse_test_output(include_str!("samples/pytest_collection_error.txt")).unwrap();
        assert_eq!((s.failed, s.errors), (None, Some(1)));
        assert!(s.is_error());
        assert!(!s.describe().contains("failed"), "{}", s.describe());
    }
}
