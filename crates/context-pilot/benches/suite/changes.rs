//! The Changes panel with a 5,000-line diff selected (issue 27): reading and highlighting it
//! (the background job's work, once per reading), then frames at 160×50 with the cursor at
//! the top and in the middle. A frame lays nothing out: it draws the visible rows only.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cp_base::ratatui::buffer::Buffer;
use cp_base::ratatui::layout::Rect;
use cp_tui::{Changes, ChangesSnapshot};

use super::Options;
use super::stats::{Row, ms};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 50;

/// A diff of one Rust file with `lines` lines in hunks of 20 (3 context lines, 7 removed,
/// 7 added, 3 context lines).
fn diff_text(lines: usize) -> String {
    let mut out = String::from(
        "diff --git a/src/table.rs b/src/table.rs\n--- a/src/table.rs\n+++ b/src/table.rs\n",
    );
    let hunks = lines / 20;
    for h in 0..hunks {
        let start = h * 30 + 1;
        let _ = writeln!(out, "@@ -{start},13 +{start},13 @@ fn table_{h}() {{");
        for i in 0..3 {
            let _ = writeln!(out, "     let keep_{h}_{i} = {i};");
        }
        for i in 0..7 {
            let _ = writeln!(out, "-    let old_{h}_{i} = compute(\"row\", {i}) + 1;");
        }
        for i in 0..7 {
            let _ = writeln!(
                out,
                "+    let new_{h}_{i} = compute(\"row\", {i}) + 2; // changed"
            );
        }
        for i in 0..3 {
            let _ = writeln!(out, "     let tail_{h}_{i} = {i};");
        }
    }
    out
}

fn frame(changes: &Changes) -> f64 {
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let mut buf = Buffer::empty(area);
    let t = Instant::now();
    changes.render(area, &mut buf, true, &mut cp_tui::HitMap::default());
    ms(t.elapsed())
}

pub fn changes_panel(opts: &Options) -> Vec<Row> {
    let lines = if opts.quick { 500 } else { 5_000 };
    let frames = if opts.quick { 5 } else { 50 };
    let text = diff_text(lines);
    // Load the grammars and the theme first (the TUI does it at start, in the background).
    drop(ChangesSnapshot::new(
        PathBuf::from("/bench"),
        cp_git::parse_diff(diff_text(20)),
    ));
    let t = Instant::now();
    let files = cp_git::parse_diff(&text);
    let snapshot = Arc::new(ChangesSnapshot::new(PathBuf::from("/bench"), files));
    let read = ms(t.elapsed());
    let t = Instant::now();
    let again = ChangesSnapshot::reusing(
        PathBuf::from("/bench"),
        cp_git::parse_diff(&text),
        &snapshot,
    );
    let reread = ms(t.elapsed());
    drop(again);
    let shown = snapshot.files[0].line_count();
    let mut changes = Changes::default();
    let t = Instant::now();
    changes.set_snapshot(snapshot);
    changes.select_file(0);
    let laid_out = ms(t.elapsed());
    let top: Vec<f64> = (0..frames).map(|_| frame(&changes)).collect();
    changes.pane = cp_tui::ChangesPane::Diff;
    changes.move_by(isize::try_from(changes.rows.len() / 2).unwrap_or(0));
    let middle: Vec<f64> = (0..frames).map(|_| frame(&changes)).collect();
    let label = format!("a {shown}-line diff");
    let mut rows = vec![
        Row::new(format!("{label}: parse and highlight"), "ms", vec![read])
            .note("off the UI thread, when the diff changed"),
        Row::new(
            format!("{label}: parse again, unchanged"),
            "ms",
            vec![reread],
        )
        .note("off the UI thread: the highlighting is reused"),
        Row::new(
            format!("{label}: take the reading, lay out rows"),
            "ms",
            vec![laid_out],
        )
        .note("on the UI thread, once per reading"),
        Row::new(format!("{label}: frame at the top"), "ms", top),
        Row::new(format!("{label}: frame in the middle"), "ms", middle),
    ];
    rows.extend(untracked_tree(opts));
    rows
}

/// A repository with a `node_modules/` of many small untracked files (not ignored): the
/// first reading of the panel, then a reading of the unchanged tree (what each 2 s
/// refresh costs while the panel is shown).
fn untracked_tree(opts: &Options) -> Vec<Row> {
    let count = if opts.quick { 2_000 } else { 60_000 };
    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "user.name=b", "-c", "user.email=b@b.invalid"])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(root.join("README.md"), "bench\n").expect("write");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "first"]);
    for i in 0..count {
        let dir = root.join(format!("node_modules/pkg{}/lib", i % 600));
        if i < 600 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        let body =
            format!("'use strict';\nmodule.exports = function f{i}(a) {{ return a + {i}; }};\n");
        std::fs::write(dir.join(format!("f{i}.js")), body).expect("write");
    }
    let git = cp_git::Git { path_env: None };
    let read = |previous: &ChangesSnapshot| {
        let options = cp_git::ReadOptions {
            previous: &previous.files,
            ..cp_git::ReadOptions::default()
        };
        let t = Instant::now();
        let review = git.review(root, &options).expect("a reading");
        let snapshot = ChangesSnapshot::of_review(root.to_path_buf(), review, previous, None);
        (ms(t.elapsed()), snapshot)
    };
    let (first, snapshot) = read(&ChangesSnapshot::default());
    let again: Vec<f64> = (0..5).map(|_| read(&snapshot).0).collect();
    let label = format!("{} untracked files", cp_git::thousands(count));
    vec![
        Row::new(format!("{label}: first reading"), "ms", vec![first])
            .note("off the UI thread: git, a stat each, a bounded read and highlight"),
        Row::new(format!("{label}: reading again, unchanged"), "ms", again)
            .note("each timed refresh: nothing read or highlighted again"),
    ]
}
