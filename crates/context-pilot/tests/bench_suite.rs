//! A quick smoke run of the benchmark suite (`benches/suite.rs`), so the suite cannot rot
//! between real runs: every group runs on small inputs, and the section it writes replaces
//! only the Suite section of a BENCHMARKS.md-like file. No figure is asserted: timings
//! belong in the benchmark, not in tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed setup step should fail the test loudly"
)]

#[path = "../benches/suite.rs"]
#[allow(
    dead_code,
    reason = "the bench's `main` and its output choice are not used by the test"
)]
mod suite;

#[test]
fn quick_suite_runs_every_group_and_rewrites_only_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("BENCHMARKS.md");
    let before = format!(
        "# Benchmarks\n\n{}\nstale figures\n{}\n\n## Consoles\n\nkept as is\n",
        suite::BEGIN,
        suite::END
    );
    std::fs::write(&out, &before).unwrap();
    let opts = suite::Options {
        quick: true,
        ..suite::Options::from_env()
    };
    let section = suite::run(&opts);
    suite::report_into(&out, &section);
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(!after.contains("stale figures"), "{after}");
    assert!(
        after.contains(&format!("{}\n\n## Consoles\n\nkept as is", suite::END)),
        "{after}"
    );
    assert_eq!(after.matches(suite::BEGIN).count(), 1, "{after}");
    for figure in [
        "callback overhead",
        "baseline: bare `bash -c true`",
        "glob matching: 1000 paths × 100 callbacks",
        "baseline: bare `GlobSet::matches`",
        "stop gate",
        "PTY throughput through the console server",
        "baseline: minimal direct PTY reader",
        "TUI render per frame: 200×60, 20 panels",
        "conversation frame, view in the middle: 1000 entries",
        "conversation frame while the last entry streams",
        "TUI RSS per turn",
        "TUI idle CPU",
        "live reload",
        "console server RSS with 50 sessions",
        "-line diff: frame at the top",
        "workflow: 4 independent phases, --max-parallel 4",
        "overhead per extra phase",
        "binary installed with npm",
        "Machine: ",
        "load average",
    ] {
        assert!(section.contains(figure), "{figure} missing:\n{section}");
    }
    // Every figure has samples: no row shows "–" for its median.
    for line in section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| figure"))
    {
        assert!(!line.contains("| – |"), "a figure has no samples: {line}");
    }
}
