//! The benchmark suite: `cargo bench -p context-pilot --bench suite`.
//!
//! Measures, each as the median of several runs with min and max, and with its baseline
//! measured in the same run:
//! - the overhead of a blocking no-op callback (cp-mod-callback + console server) against a
//!   bare `bash -c true`;
//! - glob matching (`cp_mod_callback::Matcher`) over 1k, 10k and 100k paths × 10 and 100
//!   callbacks;
//! - the stop gate on a git repository with 10,000 changed files, tests off;
//! - PTY throughput through the console server against a minimal direct PTY reader;
//! - TUI render time per frame at 200×60 with 20 panels;
//! - the Conversation panel's frame time with 100, 1,000 and 10,000 entries (view at the
//!   end, in the middle, while the last entry streams) and its memory per entry;
//! - long output: a 1 MB tool result, a 5,000-line code block and a console of 10,000 wide
//!   coloured lines (first frame, then at the end and in the middle);
//! - a day's session in the real binary, restored from 100, 1,000 and 10,000 entries: start to
//!   first frame, and the host's time per model request;
//! - the long-session check in the real binary: its resident memory per conversation turn
//!   over 2,000 restored turns, against the same session restored with none;
//! - idle CPU of the real TUI binary in a PTY;
//! - live reload time (SIGUSR2 → first frame), 20 reloads;
//! - the console server's RSS with 50 sessions, against the idle server;
//! - the prompt cache share of a 20-request agent session (a model of Anthropic's cache);
//! - `File_grep` against `rg` on a 100k-file tree;
//! - the Changes panel with a 5,000-line diff: reading it, then a frame at the top and in the
//!   middle;
//! - finding edits made through a shell (a work-tree snapshot per hook call) on a 10,000-file
//!   repository, against `git status`;
//! - the hook per edit for the binary installed with npm (`init claude`'s hook command) against
//!   the same binary run directly;
//! - a workflow of 4 independent phases with `--max-parallel 4` against one phase alone (1 s
//!   of scripted model time per request), and the overhead per extra phase;
//! - sending a repository of 10 MB and 100 MB to an ssh host (a network namespace of this
//!   machine), then one small commit on top.
//!
//! Then it writes the figures, the command, the date and the machine into the "Suite"
//! section of BENCHMARKS.md, between `<!-- suite:begin -->` and `<!-- suite:end -->`, and
//! leaves every other section as it is.
//!
//! Environment: `CP_BENCH_QUICK=1` runs small inputs and few runs (a smoke run; the test
//! `crates/context-pilot/tests/bench_suite.rs` does this). `CP_BENCH_OUT=FILE` writes the section
//! into FILE instead; a quick run writes nowhere unless `CP_BENCH_OUT` is set, so smoke
//! figures never replace real ones. `CP_BENCH_EXE=PATH` runs another `context-pilot` binary
//! (an earlier build, to compare before and after with the same bench).
//! `CP_BENCH_ONLY=name,…` runs some groups only
//! (`callback`, `matching`, `checkpoint`, `pty`, `render`, `conversation`, `day`, `long-day`, `long-output`, `idle`, `reload`,
//! `rss`, `cache`, `search`, `usage-hook`, `shell-edits`, `changes`, `parallel`, `warm`, `hook-http`,
//! `npm-hook`, `host-transfer`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a benchmark fails loudly; its figures are approximate by nature"
)]

#[path = "suite/cache_share.rs"]
mod cache_share;
#[path = "suite/changes.rs"]
mod changes;
#[path = "suite/checkpoint.rs"]
mod checkpoint;
#[path = "suite/common.rs"]
mod common;
#[path = "suite/conversation.rs"]
mod conversation;
#[path = "suite/day.rs"]
mod day;
#[path = "suite/host_transfer.rs"]
mod host_transfer;
#[path = "suite/long_day.rs"]
mod long_day;
#[path = "suite/long_output.rs"]
mod long_output;
#[path = "../tests/util/long_session.rs"]
mod long_session;
#[path = "suite/matching.rs"]
mod matching;
#[path = "suite/npm_hook.rs"]
mod npm_hook;
#[path = "suite/parallel.rs"]
mod parallel;
#[path = "suite/processes.rs"]
mod processes;
#[path = "suite/report.rs"]
mod report;
#[path = "suite/search.rs"]
mod search;
#[path = "suite/shell_edits.rs"]
mod shell_edits;
#[path = "suite/stats.rs"]
mod stats;
#[path = "suite/tui.rs"]
mod tui;
#[path = "suite/usage_hook.rs"]
mod usage_hook;
#[path = "suite/warm.rs"]
mod warm;

use std::path::PathBuf;
use std::time::Instant;

pub use report::{BEGIN, END};
pub use stats::Row;

/// How the suite runs.
pub struct Options {
    /// Small inputs and few runs.
    pub quick: bool,
    /// The `context-pilot` binary (also the console server).
    pub exe: PathBuf,
    /// Groups to run; empty means all.
    pub only: Vec<String>,
}

impl Options {
    pub fn from_env() -> Self {
        Self {
            quick: std::env::var_os("CP_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0"),
            exe: std::env::var_os("CP_BENCH_EXE")
                .filter(|v| !v.is_empty())
                .map_or_else(
                    || PathBuf::from(env!("CARGO_BIN_EXE_context-pilot")),
                    PathBuf::from,
                ),
            only: std::env::var("CP_BENCH_ONLY")
                .unwrap_or_default()
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().to_owned())
                .collect(),
        }
    }

    fn runs(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|g| g == group)
    }
}

/// Runs the suite and returns the markdown section (with the markers).
pub fn run(opts: &Options) -> String {
    let machine = report::Machine::now();
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut group = |name: &str, f: &dyn Fn() -> Vec<Row>| {
        if opts.runs(name) {
            eprintln!("suite: {name} …");
            let t = Instant::now();
            let out = f();
            for row in &out {
                eprintln!("  {}", row.markdown());
            }
            eprintln!("  ({:.1} s)", t.elapsed().as_secs_f64());
            rows.extend(out);
        }
    };
    {
        let console = processes::ConsoleProject::new(opts);
        group("callback", &|| processes::callback_overhead(opts, &console));
        group("matching", &|| matching::matching(opts));
        group("checkpoint", &|| checkpoint::stop_gate(opts));
        group("pty", &|| processes::pty_throughput(opts, &console));
        group("render", &|| tui::render_time(opts));
        group("conversation", &|| conversation::conversation_growth(opts));
        group("day", &|| day::day_session(opts));
        group("long-day", &|| long_day::long_day(opts));
        group("long-output", &|| long_output::long_output(opts));
        group("idle", &|| tui::idle_cpu(opts));
        group("reload", &|| tui::reload(opts));
        // A fresh server, so its idle baseline is not inflated by the runs above.
        group("rss", &|| {
            processes::server_rss(opts, &processes::ConsoleProject::new(opts))
        });
        group("cache", &|| cache_share::cache_share(opts));
        group("search", &|| search::grep_vs_rg(opts));
        group("usage-hook", &|| usage_hook::usage_hook(opts));
        group("shell-edits", &|| shell_edits::shell_edits(opts));
        group("changes", &|| changes::changes_panel(opts));
        group("parallel", &|| parallel::parallel_phases(opts));
        group("warm", &|| warm::warm_runs(opts));
        group("hook-http", &|| warm::hook_per_edit(opts));
        group("npm-hook", &|| npm_hook::npm_hook(opts));
        group("host-transfer", &|| host_transfer::host_transfer(opts));
    }
    report::section(opts, &machine, &rows, started.elapsed().as_secs_f64())
}

/// Where the section goes: `CP_BENCH_OUT`, else BENCHMARKS.md for a full run, else nowhere.
fn output(opts: &Options) -> Option<PathBuf> {
    match std::env::var_os("CP_BENCH_OUT").filter(|v| !v.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if opts.quick => None,
        None => Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../BENCHMARKS.md")),
    }
}

/// Writes `section` into the file at `path`, replacing only the Suite section.
///
/// # Panics
/// When the file cannot be written.
pub fn report_into(path: &std::path::Path, section: &str) {
    report::write_into(path, section).unwrap();
    eprintln!("suite: wrote the Suite section into {}", path.display());
}

/// Runs the suite and writes the section where [`output`] says.
pub fn run_and_write(opts: &Options) -> String {
    let section = run(opts);
    println!("{section}");
    if let Some(path) = output(opts) {
        report_into(&path, &section);
    }
    section
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments (a filter) are ignored.
    run_and_write(&Options::from_env());
}
