//! What failed in a test command that was not a test: a coverage threshold, a type check, a
//! linter. A `npm test` of `node --test && tsc`, or `pytest --cov-fail-under=90`, fails with
//! every test passing; the agent must hear what did fail, in the tool's own words, and not be
//! sent to fix tests that passed.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{push_unique, re};

/// (pattern on one line, what it is). The pattern's first group, or the whole match, is
/// quoted after the description.
static KNOWN: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    vec![
        // c8, nyc, istanbul, vitest's coverage providers.
        (
            re(r"(?m)^\s*ERROR: (Coverage for \w+ \([0-9.]+%\) does not meet .*threshold.*?)\s*$"),
            "coverage threshold not met",
        ),
        // jest.
        (
            re(
                r#"(?m)^\s*(?:Jest: )?("[^"]+" coverage threshold for \w+ \([0-9.]+%\) not met: .*?)\s*$"#,
            ),
            "coverage threshold not met",
        ),
        // pytest-cov.
        (
            re(r"(?m)^\s*FAIL (Required test coverage of [0-9.]+% not reached.*?)\s*$"),
            "coverage threshold not met",
        ),
        // coverage.py's `report --fail-under`.
        (
            re(r"(?m)^\s*(Coverage failure: total of .*? is less than fail-under=.*?)\s*$"),
            "coverage threshold not met",
        ),
        // mypy.
        (
            re(r"(?m)^(Found \d+ errors? in \d+ files? \(checked .*?\))\s*$"),
            "type check failed (mypy)",
        ),
        // pyright.
        (
            re(r"(?m)^\s*([1-9]\d* errors?, \d+ warnings?, \d+ informations?)\s*$"),
            "type check failed (pyright)",
        ),
        // eslint.
        (
            re(r"(?m)^\s*✖ (\d+ problems? \([1-9]\d* errors?.*?\))\s*$"),
            "lint failed (eslint)",
        ),
        // ruff.
        (
            re(r"(?m)^(Found [1-9]\d* errors?\.)\s*$"),
            "lint failed (ruff)",
        ),
    ]
});

/// TypeScript's compiler: `src/a.ts(3,7): error TS2322: …` or `src/a.ts:3:7 - error TS2322`.
static TSC: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(.*?error TS\d+: .*?)\s*$"));

/// Each non-test failure the output names, once, with the tool's own line.
pub(super) fn scan(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (pattern, what) in KNOWN.iter() {
        for caps in pattern.captures_iter(text) {
            let quoted = caps
                .get(1)
                .or_else(|| caps.get(0))
                .map_or("", |m| m.as_str());
            push_unique(&mut found, &format!("{what}: {}", quoted.trim()));
        }
    }
    let tsc: Vec<&str> = TSC
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    if let Some(first) = tsc.first() {
        let more = match tsc.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        push_unique(
            &mut found,
            &format!("type check failed (tsc): {}{more}", first.trim()),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_type_checks_and_linters_are_named() {
        let out = "\
ℹ pass 36
ERROR: Coverage for lines (79.5%) does not meet global threshold (90%)
Jest: \"global\" coverage threshold for branches (80%) not met: 75%
FAIL Required test coverage of 90% not reached. Total coverage: 85.00%
src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/b.ts(1,1): error TS2304: Cannot find name 'x'.
Found 2 errors in 1 file (checked 3 source files)
✖ 3 problems (2 errors, 1 warning)
";
        assert_eq!(
            scan(out),
            [
                "coverage threshold not met: Coverage for lines (79.5%) does not meet global threshold (90%)",
                "coverage threshold not met: \"global\" coverage threshold for branches (80%) not met: 75%",
                "coverage threshold not met: Required test coverage of 90% not reached. Total coverage: 85.00%",
                "type check failed (mypy): Found 2 errors in 1 file (checked 3 source files)",
                "lint failed (eslint): 3 problems (2 errors, 1 warning)",
                "type check failed (tsc): src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'. (and 1 more)",
            ]
        );
        assert!(scan("ℹ pass 3\n0 errors, 0 warnings, 0 informations\n").is_empty());
    }
}
