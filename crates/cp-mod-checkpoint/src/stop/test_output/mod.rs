//! Reading counts, times and failing test names out of common test runners' output.
//!
//! The exit status decides pass or fail; the summary lines of the runners say how many tests
//! passed, failed or could not run, and which ones failed. One output may hold several
//! runners' summaries (`npm test --workspaces`, a Makefile running two suites, a Rust crate
//! with Python tests): every one is counted, and the totals are their sums. What failed that
//! is not a test (a coverage threshold, a type check) is named as what it is
//! ([`problems`]). Output no parser recognizes is fine: the message then reports the exit
//! status and the output tail. Each runner has its own file; `samples/` holds outputs
//! captured from the real tools, which the tests read.

mod cargo;
mod go;
mod jest;
mod missing;
mod mocha;
mod node;
mod problems;
mod pytest;
mod scan;
mod summary;
mod tap;
mod unittest;
mod vitest;

pub use missing::MissingTool;
pub(crate) use missing::missing_tool;
pub(crate) use scan::strip_ansi;
pub use summary::{RunnerCounts, TestFramework, TestSummary};

/// Recognizes the output of cargo test, cargo nextest, jest, vitest, node's test runner,
/// mocha, go test, pytest, unittest, any TAP stream (tape, node-tap) and `prove`, each as
/// often as it appears, summed.
pub fn parse_test_output(output: &str) -> Option<TestSummary> {
    let text = strip_ansi(output);
    // Node's runner prints TAP too, with its own footer and crash rules: read as node's.
    let node = node::parse(&text);
    let prove = tap::parse_prove(&text);
    let tap = if node.is_none() && prove.is_none() {
        tap::parse(&text)
    } else {
        None
    };
    let parts: Vec<TestSummary> = [
        cargo::parse_nextest(&text).or_else(|| cargo::parse(&text)),
        jest::parse(&text),
        vitest::parse(&text),
        node,
        tap,
        prove,
        mocha::parse(&text),
        go::parse(&text),
        pytest::parse(&text),
        unittest::parse(&text),
    ]
    .into_iter()
    .flatten()
    .collect();
    let other_failures = problems::scan(&text);
    // A single package run with `go test` in its directory may print only PASS.
    let mut summary = TestSummary::combine(parts).or_else(|| go::parse_pass_only(&text))?;
    summary.other_failures = other_failures;
    Some(summary)
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
