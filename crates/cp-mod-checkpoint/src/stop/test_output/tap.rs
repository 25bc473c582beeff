//! TAP, the Test Anything Protocol (versions 13 and 14), read by its specification: tape,
//! node-tap, and any runner that prints it; and `prove`'s summary of the TAP it ran.
//!
//! A stream is a `TAP version N` line or a plan (`1..N`) with test points: `ok` or `not ok`,
//! an optional number, an optional ` - `, a description, and an optional `# SKIP` or
//! `# TODO` directive. A `not ok … # TODO` is an expected failure, not a failure; `# SKIP`
//! did not run. A YAML block between `---` and `...`, indented below its point, holds the
//! diagnostics and is never read as points. Subtests are indented: the points of the least
//! indented level are counted (the stream's own plan), and a failing point's failing
//! subtests name it. `Bail out!` ends the run early: an error. A `# comment` before points
//! (tape's test names) qualifies their descriptions, since tape names every assertion after
//! its operator (`should be deeply equivalent`). The footer's counts (`# pass  151`, with
//! tape's two spaces) are not needed: the points are counted. node-tap's classic reporter
//! prints one `ok file ..... 8/11` line a file with the failing file's TAP indented below,
//! then `total ..... 160/163`: that total counts.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{num, push_unique, re};
use super::summary::{TestFramework, TestSummary};

static POINT: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(not )?ok\b(?:\s+(\d+))?(?:\s*-)?\s*(.*?)\s*$"));
static DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\s#\s*(skip|todo)\S*\s*(.*)$"));
static PLAN: LazyLock<Regex> = LazyLock::new(|| re(r"^1\.\.(\d+)(?:\s*#.*)?$"));
static VERSION: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^\s*TAP version 1[34]\s*$"));
static CLASSIC_TOTAL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^total \.+ (\d+)/(\d+)\s*$"));
static CLASSIC_FILE: LazyLock<Regex> = LazyLock::new(|| re(r"^(.*?) \.{2,} \d+/\d+$"));
/// A comment that is a footer count or a runner's remark, not a test's name.
static FOOTER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?i)(tests|pass|fail|skip|skipped|todo|ok|not ok|suites|cancelled|duration_ms|time=)\b")
});

static PROVE_RESULT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^Files=(\d+), Tests=(\d+),\s+(\d+) wallclock secs"));
static PROVE_FILE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^(\S.*?) \(Wstat: .*Tests: \d+ Failed: (\d+)\)\s*$"));
static PROVE_SKIPPED: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^\s*\(less (\d+) skipped subtests?"));
static PROVE_FAILED_TEST: LazyLock<Regex> =
    LazyLock::new(|| re(r"^#\s+Failed (?:\(TODO\) )?test '(.*)'\s*$"));
static PROVE_AT: LazyLock<Regex> = LazyLock::new(|| re(r"^#\s+at (\S+) line \d+\.?\s*$"));

/// One test point.
struct Point {
    indent: usize,
    ok: bool,
    number: Option<u64>,
    description: String,
    skip: bool,
    todo: bool,
    /// The last `# comment` seen at this level before the point (tape's test name).
    group: Option<String>,
}

impl Point {
    fn failed(&self) -> bool {
        !self.ok && !self.todo
    }

    /// The point's name without its number: its description, under its group.
    fn label(&self) -> String {
        let description = CLASSIC_FILE
            .captures(&self.description)
            .and_then(|c| c.get(1))
            .map_or(self.description.as_str(), |m| m.as_str());
        match &self.group {
            Some(group) if !description.is_empty() => format!("{group} › {description}"),
            Some(group) => group.clone(),
            None => description.to_owned(),
        }
    }

    /// The point's name with its number, which tells apart assertions of one description.
    fn name(&self) -> String {
        let mut name = self.label();
        if let Some(n) = self.number {
            name = if name.is_empty() {
                format!("#{n}")
            } else {
                format!("{name} (#{n})")
            };
        }
        name
    }
}

/// What one TAP output holds: its points and whether it bailed out.
struct Stream {
    points: Vec<Point>,
    bail_out: Option<String>,
    plans: usize,
}

fn read(text: &str) -> Stream {
    let mut stream = Stream {
        points: Vec::new(),
        bail_out: None,
        plans: 0,
    };
    // (indent of its point, while inside a YAML block)
    let mut yaml: Option<usize> = None;
    let mut last_indent = 0;
    let mut groups: Vec<(usize, String)> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if let Some(block) = yaml {
            if body == "..." && indent > block {
                yaml = None;
            }
            continue;
        }
        if body == "---" && indent > last_indent && !stream.points.is_empty() {
            yaml = Some(last_indent);
            continue;
        }
        if let Some(reason) = body.strip_prefix("Bail out!") {
            stream
                .bail_out
                .get_or_insert_with(|| reason.trim().to_owned());
            continue;
        }
        if PLAN.is_match(body) {
            stream.plans += 1;
            continue;
        }
        if let Some(comment) = body.strip_prefix('#') {
            let comment = comment.trim();
            let subtest = comment.strip_prefix("Subtest:").map(str::trim);
            if let Some(name) = subtest.or(Some(comment))
                && !name.is_empty()
                && !FOOTER.is_match(name)
            {
                groups.retain(|(i, _)| *i < indent);
                groups.push((indent, name.to_owned()));
            }
            continue;
        }
        let Some(caps) = POINT.captures(body) else {
            continue;
        };
        let mut description = caps.get(3).map_or("", |m| m.as_str()).to_owned();
        let (mut skip, mut todo) = (false, false);
        if let Some(directive) = DIRECTIVE.captures(&format!(" {description}")) {
            let kind = directive.get(1).map_or("", |m| m.as_str());
            skip = kind.eq_ignore_ascii_case("skip");
            todo = !skip;
            let cut = description.len() + 1 - directive.get(0).map_or(0, |m| m.as_str().len());
            description.truncate(cut);
            let kept = description.trim_end().len();
            description.truncate(kept);
        }
        last_indent = indent;
        groups.retain(|(i, _)| *i <= indent);
        let group = groups
            .iter()
            .rev()
            .find(|(i, _)| *i == indent)
            .map(|(_, g)| g.clone());
        // A subtest's own point closes its `# Subtest:` group.
        let group = if group.as_deref() == Some(description.as_str()) {
            groups.retain(|(i, _)| *i != indent);
            None
        } else {
            group
        };
        stream.points.push(Point {
            indent,
            ok: caps.get(1).is_none(),
            number: num(caps.get(2)),
            description,
            skip,
            todo,
            group,
        });
    }
    stream
}

/// A TAP stream's counts and failing names; `None` when the output holds none.
pub(super) fn parse(text: &str) -> Option<TestSummary> {
    let stream = read(text);
    let classic = CLASSIC_TOTAL.captures_iter(text).last();
    let is_tap = VERSION.is_match(text) || stream.plans > 0 || classic.is_some();
    let top = stream.points.iter().map(|p| p.indent).min()?;
    if !is_tap {
        return None;
    }
    let mut summary = TestSummary::new(TestFramework::Tap);
    let (mut passed, mut failed, mut skipped, mut todo) = (0u64, 0u64, 0u64, 0u64);
    for point in stream.points.iter().filter(|p| p.indent == top) {
        match (point.skip, point.todo, point.failed()) {
            (true, _, _) => skipped += 1,
            (_, true, false) if !point.ok => todo += 1,
            (_, _, true) => failed += 1,
            _ => passed += 1,
        }
    }
    if let Some(total) = classic {
        let ok: u64 = num(total.get(1)).unwrap_or(0);
        let all: u64 = num(total.get(2)).unwrap_or(0);
        (passed, failed) = (ok, all.saturating_sub(ok));
    }
    summary.passed = Some(passed);
    summary.failed = Some(failed);
    summary.skipped = (skipped > 0).then_some(skipped);
    summary.xfailed = (todo > 0).then_some(todo);
    failing_names(&stream.points, top, &mut summary.failing);
    if let Some(reason) = stream.bail_out {
        summary.errors = Some(1);
        summary.other_failures.push(if reason.is_empty() {
            "Bail out!".to_owned()
        } else {
            format!("Bail out! {reason}")
        });
    }
    Some(summary)
}

/// The failing points' names: for a failing top-level point with failing subtests next to
/// it (before it in TAP 14, after it in node-tap's classic output), those subtests, under
/// its name; else the point itself.
fn failing_names(points: &[Point], top: usize, names: &mut Vec<String>) {
    for (i, point) in points.iter().enumerate() {
        if point.indent != top || !point.failed() {
            continue;
        }
        let before = points[..i]
            .iter()
            .rev()
            .take_while(|p| p.indent > top)
            .filter(|p| p.failed());
        let after = points[i + 1..]
            .iter()
            .take_while(|p| p.indent > top)
            .filter(|p| p.failed());
        let mut inner: Vec<&Point> = before.collect();
        inner.reverse();
        if inner.is_empty() {
            inner = after.collect();
        }
        if inner.is_empty() {
            let name = point.name();
            if !name.is_empty() {
                push_unique(names, &name);
            }
        }
        let parent = point.label();
        for sub in inner {
            push_unique(names, &format!("{parent} › {}", sub.name()));
        }
    }
}

/// `prove`'s `Files=2, Tests=6, …` and its Test Summary Report, summed.
pub(super) fn parse_prove(text: &str) -> Option<TestSummary> {
    let mut summary = TestSummary::new(TestFramework::Prove);
    let mut tests = None::<u64>;
    for caps in PROVE_RESULT.captures_iter(text) {
        tests = Some(tests.unwrap_or(0) + num::<u64>(caps.get(2)).unwrap_or(0));
    }
    let tests = tests?;
    let failed: u64 = PROVE_FILE
        .captures_iter(text)
        .filter_map(|c| num::<u64>(c.get(2)))
        .sum();
    let skipped: u64 = PROVE_SKIPPED
        .captures_iter(text)
        .filter_map(|c| num::<u64>(c.get(1)))
        .sum();
    summary.passed = Some(tests.saturating_sub(failed + skipped));
    summary.failed = Some(failed);
    summary.skipped = (skipped > 0).then_some(skipped);
    // Test::More says which test failed and where, on stderr: `#   Failed test 'sums'`
    // then `#   at t/calc.t line 3.`
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(caps) = PROVE_FAILED_TEST.captures(line.trim_end()) else {
            continue;
        };
        if line.contains("(TODO)") {
            continue;
        }
        let title = caps.get(1).map_or("", |m| m.as_str());
        let file = lines
            .get(i + 1)
            .and_then(|l| PROVE_AT.captures(l.trim_end()))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str());
        match file {
            Some(file) => push_unique(&mut summary.failing, &format!("{file}: {title}")),
            None => push_unique(&mut summary.failing, title),
        }
    }
    if summary.failing.is_empty() {
        for caps in PROVE_FILE.captures_iter(text) {
            push_unique(&mut summary.failing, caps.get(1).map_or("", |m| m.as_str()));
        }
    }
    Some(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> TestSummary {
        parse(text).unwrap_or_else(|| panic!("not recognized: {text}"))
    }

    #[test]
    fn real_tape_pass_counts_every_assertion() {
        let s = summary(include_str!("samples/tape_pass.txt"));
        assert_eq!((s.passed, s.failed, s.errors), (Some(148), Some(0), None));
        assert_eq!(s.describe(), "148 passed (TAP)");
    }

    #[test]
    fn real_tape_failure_names_each_assertion_under_its_test() {
        let s = summary(include_str!("samples/tape_fail.txt"));
        assert_eq!((s.passed, s.failed), (Some(146), Some(2)));
        assert_eq!(
            s.failing,
            [
                "nums › should be deeply equivalent (#53)",
                "nums › should be deeply equivalent (#58)"
            ]
        );
        assert!(!s.is_error());
    }

    #[test]
    fn real_node_tap_classic_counts_the_total_and_names_the_failing_file_s_points() {
        let s = summary(include_str!("samples/node_tap_classic_fail.txt"));
        assert_eq!((s.passed, s.failed), (Some(160), Some(3)));
        assert_eq!(
            s.failing,
            [
                "test/num.js › should be equivalent (#1)",
                "test/num.js › should be equivalent (#6)",
                "test/num.js › test/num.js (#11)",
            ]
        );
    }

    #[test]
    fn the_specification_s_forms() {
        // TAP 14: no ` - `, directives in any case, subtests before their parent point,
        // YAML diagnostics that look like points, and a bail out.
        let text = "TAP version 14\n1..6\nok 1 - adds\nok 2 subtracts # SKIP no network\nnot ok 3 divides # todo later\nok 4 multiplies # TODO done early\n# Subtest: nested\n    1..2\n    ok 1 - inner a\n    not ok 2 - inner b\n      ---\n      message: |\n        not ok 9 this is YAML\n      ...\nnot ok 5 - nested\nnot ok 6\n";
        let s = summary(text);
        assert_eq!(
            (s.passed, s.failed, s.skipped, s.xfailed),
            (Some(2), Some(2), Some(1), Some(1))
        );
        assert_eq!(s.failing, ["nested › inner b (#2)", "#6"]);
        assert_eq!(
            s.describe(),
            "2 failed, 2 passed, 1 skipped, 1 todo (TAP); failing: nested › inner b (#2), #6"
        );
        let bail = summary("TAP version 13\n1..3\nok 1 a\nBail out! database gone\n");
        assert_eq!((bail.passed, bail.errors), (Some(1), Some(1)));
        assert_eq!(bail.other_failures, ["Bail out! database gone"]);
    }

    #[test]
    fn ok_lines_without_a_plan_or_version_are_not_tap() {
        assert!(parse("ok 1 something\nall good\n").is_none());
        assert!(parse("TAP version 13\n").is_none());
    }

    #[test]
    fn real_prove_counts_and_names_the_failing_test() {
        let s = parse_prove(include_str!("samples/prove_fail.txt")).unwrap();
        assert_eq!((s.passed, s.failed, s.skipped), (Some(4), Some(1), Some(1)));
        assert_eq!(s.failing, ["t/calc.t: sums"]);
        let pass = parse_prove(include_str!("samples/prove_pass.txt")).unwrap();
        assert_eq!((pass.passed, pass.failed), (Some(2), Some(0)));
        assert!(parse_prove("ok 1\n").is_none());
    }
}
