//! Node's built-in runner (`node --test`): the `# pass N` / `# fail N` footer of the TAP
//! reporter or the `ℹ pass N` footer of the spec reporter; `not ok N - name` (TAP) or
//! `✖ name (1.2ms)` (spec) per failure.
//!
//! A test file that crashes before its tests is reported by node as one failing "test" named
//! after the file, with an `exitCode`; that is an error, not a test failure.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{num, push_unique, re};
use super::summary::{TestFramework, TestSummary, add};

static FOOTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^(?:#|ℹ) (tests|pass|fail|skipped|todo|duration_ms) ([0-9.]+)\s*$"));
static TAP_NOT_OK: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*not ok \d+ - (.+?)\s*$"));
static SPEC_FAIL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*✖ (.+?) \([0-9.]+m?s\)\s*$"));

/// Every run's footer (`npm test --workspaces` runs node's runner once a package), summed.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let mut summary = TestSummary::new(TestFramework::NodeTest);
    for caps in FOOTER.captures_iter(text) {
        let value = caps.get(2);
        match caps.get(1).map(|m| m.as_str()) {
            Some("tests") => {}
            Some("pass") => summary.passed = add(summary.passed, num(value)),
            Some("fail") => summary.failed = add(summary.failed, num(value)),
            Some("skipped" | "todo") => {
                let n: Option<u64> = num(value);
                summary.skipped = add(summary.skipped, n.filter(|n| *n > 0));
            }
            _ => {
                let seconds = num::<f64>(value).map(|ms| ms / 1000.0);
                summary.seconds = add(summary.seconds, seconds);
            }
        }
    }
    summary.passed?;
    let mut crashed_files = Vec::new();
    tap_failures(text, &mut summary.failing, &mut crashed_files);
    spec_failures(text, &mut summary.failing, &mut crashed_files);
    let crashed = u64::try_from(crashed_files.len()).unwrap_or(u64::MAX);
    if crashed > 0 {
        summary.failed = Some(summary.failed.unwrap_or(0).saturating_sub(crashed));
        summary.errors = Some(crashed);
    }
    Some(summary)
}

/// Collects TAP `not ok` names; a file that crashed is one whose YAML block carries the
/// child's `exitCode`.
fn tap_failures(text: &str, names: &mut Vec<String>, crashed: &mut Vec<String>) {
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(caps) = TAP_NOT_OK.captures(line) else {
            continue;
        };
        let name = caps.get(1).map_or("", |m| m.as_str());
        push_unique(names, name);
        // The diagnostic block follows, between `---` and `...`.
        while let Some(next) = lines.peek() {
            let trimmed = next.trim();
            if trimmed.starts_with("exitCode:") && !trimmed.ends_with('~') {
                push_unique(crashed, name);
            }
            lines.next();
            if trimmed == "..." {
                break;
            }
        }
    }
}

/// Collects spec `✖ name (…ms)` names; a file that crashed is followed by node's generic
/// `'test failed'` instead of an assertion.
fn spec_failures(text: &str, names: &mut Vec<String>, crashed: &mut Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(caps) = SPEC_FAIL.captures(line) else {
            continue;
        };
        let name = caps.get(1).map_or("", |m| m.as_str());
        push_unique(names, name);
        if lines
            .get(i + 1)
            .is_some_and(|next| next.trim() == "'test failed'")
        {
            push_unique(crashed, name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn real_tap_pass() {
        let s = summary(include_str!("samples/node_pass.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(2), Some(0), None));
        assert!(s.failing.is_empty());
    }

    #[test]
    fn real_tap_failure_names_the_test() {
        let s = summary(include_str!("samples/node_fail.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(1), Some(1), None));
        assert_eq!(s.failing, ["adds more"]);
        assert!(!s.is_error());
        assert!(
            s.describe()
                .starts_with("1 failed, 1 passed in 0.16s (node --test)")
        );
    }

    #[test]
    fn real_spec_failure_names_the_test() {
        let s = summary(include_str!("samples/node_spec_fail.txt"));
        assert_eq!((s.passed, s.failed), (Some(1), Some(1)));
        assert_eq!(s.failing, ["adds more"]);
    }

    #[test]
    fn real_crash_before_any_test_is_an_error() {
        let s = summary(include_str!("samples/node_crash.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), Some(0), Some(1)));
        assert!(s.is_error());
        assert_eq!(s.failing, ["/tmp/nodefix/test/calc.test.js"]);
    }

    #[test]
    fn real_spec_crash_before_any_test_is_an_error() {
        let s = summary(include_str!("samples/node_spec_crash.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(0), Some(0), Some(1)));
        assert!(s.is_error());
        assert_eq!(s.failing, ["/tmp/nodefix/test/calc.test.js"]);
    }

    #[test]
    fn every_run_is_summed() {
        let one = include_str!("samples/node_fail.txt");
        let two = include_str!("samples/node_pass.txt");
        let s = summary(&format!("{one}\n{two}"));
        assert_eq!((s.passed, s.failed), (Some(3), Some(1)));
    }

    #[test]
    fn real_no_tests() {
        let s = summary(include_str!("samples/node_no_tests.txt"));
        assert!(s.ran_nothing());
    }
}
