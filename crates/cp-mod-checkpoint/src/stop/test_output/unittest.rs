//! Python's `unittest`: `Ran 7 tests in 0.083s`, then `OK`, `OK (skipped=1)`, `FAILED
//! (failures=2, errors=2, skipped=1, expected failures=1)` or `NO TESTS RAN`, and a
//! `FAIL: test_more (test_calc.TestCalc.test_more)` heading per failure.
//!
//! Honest counts: unittest's `errors` are mostly tests that raised, which failed like any
//! other; but a module that cannot be imported is reported as an erroring "test" of
//! `unittest.loader._FailedTest`, and a failing `setUpClass` as one more error: those are
//! errors outside any test. Skipped tests and expected failures are not passes. Doctests
//! added by `load_tests` are named after their docstring (`doctest calc.add`).

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{num, push_unique, re};
use super::summary::{TestFramework, TestSummary, add};

static RAN: LazyLock<Regex> = LazyLock::new(|| re(r"^Ran (\d+) tests? in ([0-9.]+)s$"));
static STATUS: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?\s*$"));
static HEADING: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \((.+)\)\s*$"));
static PAIR: LazyLock<Regex> = LazyLock::new(|| re(r"([a-z ]+)=(\d+)"));

/// Names of erroring "tests" that are not tests: an import that failed, a class or module
/// fixture.
const NOT_TESTS: &[&str] = &[
    "unittest.loader._FailedTest",
    "unittest.loader.ModuleImportFailure",
    "setUpClass",
    "setUpModule",
    "tearDownClass",
    "tearDownModule",
];

/// Every run (`Ran N tests` and the status after it), summed.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut summary = TestSummary::new(TestFramework::Unittest);
    let mut outside = 0u64;
    let mut found = false;
    for (i, line) in lines.iter().enumerate() {
        if let Some(heading) = HEADING.captures(line) {
            let kind = heading.get(1).map_or("", |m| m.as_str());
            let name = heading.get(2).map_or("", |m| m.as_str());
            let id = heading.get(3).map_or("", |m| m.as_str());
            if kind == "ERROR" && NOT_TESTS.iter().any(|n| name == *n || id.contains(n)) {
                outside += 1;
                push_unique(
                    &mut summary.failing,
                    &format!("{} (not a test: {name})", module_of(id)),
                );
            } else {
                push_unique(&mut summary.failing, &test_name(name, id, lines.get(i + 1)));
            }
            continue;
        }
        let Some(ran) = RAN.captures(line) else {
            continue;
        };
        // The status follows after an empty line.
        let Some(status) = lines
            .iter()
            .skip(i + 1)
            .take(3)
            .find_map(|l| STATUS.captures(l))
        else {
            continue;
        };
        found = true;
        let total: u64 = num(ran.get(1)).unwrap_or(0);
        let count = |key: &str| -> u64 {
            status.get(2).map_or(0, |pairs| {
                PAIR.captures_iter(pairs.as_str())
                    .filter(|c| c.get(1).is_some_and(|k| k.as_str().trim() == key))
                    .filter_map(|c| num::<u64>(c.get(2)))
                    .sum()
            })
        };
        let failures = count("failures");
        let errors = count("errors");
        let unexpected = count("unexpected successes");
        let (skipped, expected) = (count("skipped"), count("expected failures"));
        let not_passed = failures + errors + skipped + expected + unexpected;
        summary.skipped = add(summary.skipped, Some(skipped).filter(|n| *n > 0));
        summary.xfailed = add(summary.xfailed, Some(expected).filter(|n| *n > 0));
        let in_tests = errors.saturating_sub(outside);
        summary.passed = add(summary.passed, Some(total.saturating_sub(not_passed)));
        summary.failed = add(summary.failed, Some(failures + in_tests + unexpected));
        let outside_here = errors.min(outside);
        if outside_here > 0 {
            summary.errors = add(summary.errors, Some(outside_here));
        }
        outside -= outside_here;
        summary.seconds = add(summary.seconds, num(ran.get(2)));
    }
    found.then_some(summary)
}

/// `test_calc.TestCalc.test_more` from `test_more (test_calc.TestCalc.test_more)` (3.11 and
/// later) or `test_more (test_calc.TestCalc)` (before); a doctest's from the `Doctest:` line
/// that follows its heading.
fn test_name(name: &str, id: &str, next: Option<&&str>) -> String {
    if let Some(doctest) = next.and_then(|l| l.strip_prefix("Doctest: ")) {
        return format!("doctest {}", doctest.trim());
    }
    if id.ends_with(&format!(".{name}")) {
        id.to_owned()
    } else {
        format!("{id}.{name}")
    }
}

/// The module of `unittest.loader._FailedTest.test_broken`: `test_broken`.
fn module_of(id: &str) -> &str {
    id.rsplit('.').next().unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn real_failures_errors_doctests_and_an_import_error() {
        let s = summary(include_str!("samples/unittest_fail.txt"));
        // 7 ran: 1 passed, 2 failures + 1 raising test failed, 1 module did not import,
        // 1 skipped and 1 expected failure are neither.
        assert_eq!(
            (s.passed, s.failed, s.errors, s.seconds),
            (Some(1), Some(3), Some(1), Some(0.083))
        );
        assert_eq!(
            s.failing,
            [
                "test_broken (not a test: test_broken)",
                "test_calc.TestCalc.test_err",
                "test_calc.TestCalc.test_more",
                "doctest calc.add",
            ]
        );
        assert!(!s.is_error());
        assert!(
            s.describe().starts_with(
                "3 failed, 1 error, 1 passed, 1 skipped, 1 xfailed in 0.08s (unittest)"
            ),
            "{}",
            s.describe()
        );
    }

    #[test]
    fn the_two_passing_forms_and_no_tests() {
        let s = summary(
            "..\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK\n",
        );
        assert_eq!((s.passed, s.failed, s.errors), (Some(2), Some(0), None));
        let skipped = summary("Ran 3 tests in 0.1s\n\nOK (skipped=1)\n");
        assert_eq!(skipped.passed, Some(2));
        assert_eq!((skipped.skipped, skipped.xfailed), (Some(1), None));
        let none = summary("Ran 0 tests in 0.000s\n\nOK\n");
        assert!(none.ran_nothing() && none.is_error());
        let none_312 = summary("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n");
        assert!(none_312.ran_nothing());
    }

    #[test]
    fn python_before_3_11_names_and_two_runs() {
        let s = summary(
            "FAIL: test_more (test_calc.TestCalc)\n----\nRan 2 tests in 0.010s\n\nFAILED (failures=1)\nRan 4 tests in 0.020s\n\nOK\n",
        );
        assert_eq!((s.passed, s.failed), (Some(5), Some(1)));
        assert_eq!(s.failing, ["test_calc.TestCalc.test_more"]);
    }
}
