//! Text-scanning helpers the runner parsers share: literal regexes, ANSI stripping, numbers,
//! `N passed, M failed` lists and de-duplicated names.

use std::sync::LazyLock;

use regex::Regex;

pub(super) fn re(pattern: &str) -> Regex {
    #[expect(
        clippy::expect_used,
        reason = "literal patterns, each exercised by the unit tests"
    )]
    Regex::new(pattern).expect("valid literal regex")
}

static ANSI: LazyLock<Regex> = LazyLock::new(|| re(r"\x1b\[[0-9;?]*[A-Za-z]"));
pub(super) static COUNT: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+) ([a-z]+)"));

/// Removes ANSI colour and cursor sequences.
pub(crate) fn strip_ansi(text: &str) -> String {
    ANSI.replace_all(text, "").into_owned()
}

pub(super) fn num<T: std::str::FromStr>(m: Option<regex::Match<'_>>) -> Option<T> {
    m.and_then(|m| m.as_str().parse().ok())
}

/// A time the runner printed as a number and a unit (`850` `ms`, `1.2` `s`), in seconds.
pub(super) fn seconds(
    value: Option<regex::Match<'_>>,
    unit: Option<regex::Match<'_>>,
) -> Option<f64> {
    let value: f64 = num(value)?;
    Some(if unit.is_some_and(|u| u.as_str() == "ms") {
        value / 1000.0
    } else {
        value
    })
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

/// Skipped and expected-failure counts in a list like `3 passed, 2 skipped, 1 xfailed`
/// (`pending` is mocha's and jest's word, `todo` jest's and node's).
pub(super) fn skips(list: &str) -> (Option<u64>, Option<u64>) {
    let (mut skipped, mut xfailed) = (None::<u64>, None::<u64>);
    for c in COUNT.captures_iter(list) {
        let n: u64 = num(c.get(1)).unwrap_or(0);
        match c.get(2).map(|w| w.as_str()) {
            Some("skipped" | "skip" | "pending" | "ignored" | "todo") => {
                skipped = Some(skipped.unwrap_or(0) + n);
            }
            Some("xfailed") => xfailed = Some(xfailed.unwrap_or(0) + n),
            _ => {}
        }
    }
    (skipped, xfailed)
}

/// Adds `name` unless it is already listed (reporters often repeat failures at the end).
pub(super) fn push_unique(names: &mut Vec<String>, name: &str) {
    let name = name.trim();
    if !name.is_empty() && !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}
