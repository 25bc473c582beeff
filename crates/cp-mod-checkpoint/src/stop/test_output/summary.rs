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
    /// Python's `unittest` (`python -m unittest`, also through a Makefile or tox).
    Unittest,
    /// A TAP stream (Test Anything Protocol, versions 13 and 14): tape, node-tap and others.
    Tap,
    /// Perl's `prove` (`TAP::Harness`), whose summary counts the TAP of every test file.
    Prove,
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
            Self::Unittest => "unittest",
            Self::Tap => "TAP",
            Self::Prove => "prove",
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
    /// Tests that did not run because they are marked so: pytest's and unittest's skipped,
    /// cargo's ignored, mocha's pending, TAP's `# SKIP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// Tests that failed as they are marked to: pytest's xfailed, unittest's expected
    /// failures, TAP's `not ok … # TODO`. Not failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfailed: Option<u64>,
    /// Time the tool reports, in seconds.
    pub seconds: Option<f64>,
    /// Names of the failing tests (or erroring files), as the tool prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// Each runner's own counts when the output held summaries of more than one
    /// (`npm test --workspaces` running jest in one package and node's runner in another);
    /// the counts above are their sums and `framework` is the first of them. Empty for one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunnerCounts>,
    /// What failed that was not a test, in the tool's words: a coverage threshold, a type
    /// check, a linter (`coverage threshold not met: …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_failures: Vec<String>,
}

/// One runner's counts, for a summary of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerCounts {
    /// The runner.
    pub framework: TestFramework,
    /// Passed tests.
    pub passed: Option<u64>,
    /// Failed tests.
    pub failed: Option<u64>,
    /// Errors outside any test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// Skipped tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// Expected failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfailed: Option<u64>,
    /// Time the runner reports, in seconds.
    pub seconds: Option<f64>,
}

impl RunnerCounts {
    fn of(summary: &TestSummary) -> Self {
        Self {
            framework: summary.framework,
            passed: summary.passed,
            failed: summary.failed,
            errors: summary.errors,
            skipped: summary.skipped,
            xfailed: summary.xfailed,
            seconds: summary.seconds,
        }
    }

    /// `8 failed, 42 passed in 1.20s (jest)`.
    fn describe(&self) -> String {
        let mut one = TestSummary::new(self.framework);
        one.passed = self.passed;
        one.failed = self.failed;
        one.errors = self.errors;
        one.skipped = self.skipped;
        one.xfailed = self.xfailed;
        one.seconds = self.seconds;
        one.describe()
    }
}

/// Adds two optional counts: absent only when both are.
pub(super) fn add<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

impl TestSummary {
    pub(crate) fn new(framework: TestFramework) -> Self {
        Self {
            framework,
            passed: None,
            failed: None,
            errors: None,
            skipped: None,
            xfailed: None,
            seconds: None,
            failing: Vec::new(),
            runs: Vec::new(),
            other_failures: Vec::new(),
        }
    }

    /// One summary of every runner's: counts and times summed, names of all, and each
    /// runner's own counts in [`TestSummary::runs`] when there is more than one.
    pub(crate) fn combine(parts: Vec<Self>) -> Option<Self> {
        let mut parts = parts.into_iter();
        let mut total = parts.next()?;
        let mut runs = vec![RunnerCounts::of(&total)];
        for part in parts {
            runs.push(RunnerCounts::of(&part));
            total.passed = add(total.passed, part.passed);
            total.failed = add(total.failed, part.failed);
            total.errors = add(total.errors, part.errors);
            total.skipped = add(total.skipped, part.skipped);
            total.xfailed = add(total.xfailed, part.xfailed);
            total.seconds = add(total.seconds, part.seconds);
            for name in part.failing {
                if !total.failing.contains(&name) {
                    total.failing.push(name);
                }
            }
        }
        if runs.len() > 1 {
            total.runs = runs;
        }
        Some(total)
    }

    /// Tests the output says ran: passed, failed and errored ones.
    pub fn tests_ran(&self) -> u64 {
        self.passed.unwrap_or(0) + self.failed.unwrap_or(0)
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
        self.passed == Some(0)
            && self.failed.unwrap_or(0) == 0
            && self.errors.unwrap_or(0) == 0
            && self.skipped.unwrap_or(0) == 0
            && self.xfailed.unwrap_or(0) == 0
    }

    /// e.g. `12 passed in 0.84s (cargo test)`, `1 failed, 4 passed, 2 skipped in 0.20s (pytest);
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
        if let Some(skipped) = self.skipped.filter(|n| *n > 0) {
            parts.push(format!("{skipped} skipped"));
        }
        if let Some(xfailed) = self.xfailed.filter(|n| *n > 0) {
            // TAP calls an expected failure a todo.
            let word = if matches!(self.framework, TestFramework::Tap | TestFramework::Prove) {
                "todo"
            } else {
                "xfailed"
            };
            parts.push(format!("{xfailed} {word}"));
        }
        let mut text = if parts.is_empty() {
            "finished".to_owned()
        } else {
            parts.join(", ")
        };
        if let Some(seconds) = self.seconds {
            let _ = write!(text, " in {seconds:.2}s");
        }
        if self.runs.len() > 1 {
            let each: Vec<String> = self.runs.iter().map(RunnerCounts::describe).collect();
            let _ = write!(text, ": {}", each.join("; "));
        } else {
            let _ = write!(text, " ({})", self.framework.label());
        }
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
        if !self.other_failures.is_empty() {
            let _ = write!(text, "; also failed: {}", self.other_failures.join("; "));
        }
        text
    }
}
