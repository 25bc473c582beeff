//! What a test runner's output says about the run: [`TestSummary`], and the one-line
//! description the agent reads.

use std::fmt::Write;

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
