//! Glob matching scaling: `cp_mod_callback::Matcher::match_all` over 1k, 10k and 100k
//! changed paths against 10 and 100 callbacks, each beside bare `globset::GlobSet::matches`
//! over the same paths and rules, timed in the same round.

use cp_mod_callback::{CallbackId, Matcher};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::Options;
use super::stats::{Row, fmt, ms};

const EXTS: [&str; 10] = [
    "rs", "ts", "py", "md", "go", "c", "h", "toml", "yaml", "json",
];

/// Gitignore-style pattern lists of the shapes people write: by extension with an
/// exclusion, anchored trees, directories with an excluded part, globs with exclusions.
fn callbacks(n: u64) -> Vec<(CallbackId, Vec<String>)> {
    (0..n)
        .map(|i| {
            let ext = EXTS[(i % 10) as usize];
            let pattern = match i % 4 {
                0 => vec![format!("*.{ext}"), "!target/".to_owned()],
                1 => vec![format!("src/mod{i}/**/*.{ext}")],
                2 => vec![format!("docs{i}/"), format!("!docs{i}/private/**")],
                _ => vec![
                    format!("pkg{}/*.{ext}", i % 7),
                    format!("!pkg{}/gen_*", i % 7),
                ],
            };
            (CallbackId(i + 1), pattern)
        })
        .collect()
}

fn paths(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let ext = EXTS[i % 10];
            match i % 5 {
                0 => format!("src/mod{}/sub/file{i}.{ext}", i % 100),
                1 => format!("docs{}/page{i}.md", i % 100),
                2 => format!("pkg{}/file{i}.{ext}", i % 7),
                3 => format!("target/debug/build/f{i}.rs"),
                _ => format!("deep/a/b/c/d/file{i}.{ext}"),
            }
        })
        .collect()
}

/// The baseline: every rule of every callback as a plain glob in one bare `GlobSet` (the
/// `!` dropped, a slashless rule under `**/`, a directory rule as `dir/**`), asked once per
/// path. It is what matching costs with no rule semantics at all: no exclusions, no
/// "last rule wins", no ancestor directories.
fn bare_set(defs: &[(CallbackId, Vec<String>)]) -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    for rule in defs.iter().flat_map(|(_, rules)| rules) {
        let body = rule.trim_start_matches('!');
        let glob = match body.strip_suffix('/') {
            Some(dir) => format!("{dir}/**"),
            None if body.contains('/') => body.to_owned(),
            None => format!("**/{body}"),
        };
        builder.add(
            GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .unwrap(),
        );
    }
    builder.build().unwrap()
}

pub fn matching(opts: &Options) -> Vec<Row> {
    let sizes: &[usize] = if opts.quick {
        &[1_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    let mut rows = Vec::new();
    for &n_callbacks in &[10u64, 100] {
        let defs = callbacks(n_callbacks);
        let matcher = Matcher::new(defs.iter().map(|(id, p)| (*id, p.as_slice())));
        let bare_globs = bare_set(&defs);
        for &n_paths in sizes {
            let rounds = match (opts.quick, n_paths) {
                (true, _) => 3,
                (false, 100_000) => 7,
                (false, _) => 21,
            };
            let paths = paths(n_paths);
            let (mut ours, mut baseline, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            let mut hits = 0;
            // Interleaved, so load on the machine hits both alike; the ratio is per round.
            for _ in 0..rounds {
                let t = std::time::Instant::now();
                let per_path = matcher.match_all(paths.iter().map(String::as_str));
                let ours_ms = ms(t.elapsed());
                assert_eq!(per_path.len(), paths.len());
                hits = per_path.iter().map(<[CallbackId]>::len).sum::<usize>();
                let t = std::time::Instant::now();
                let bare_hits: usize = paths.iter().map(|p| bare_globs.matches(p).len()).sum();
                let plain = ms(t.elapsed());
                assert!(bare_hits > 0);
                ours.push(ours_ms);
                baseline.push(plain);
                ratios.push(ours_ms / plain);
            }
            let row = Row::new(
                format!("glob matching: {n_paths} paths × {n_callbacks} callbacks"),
                "ms",
                ours,
            );
            let baseline_row = Row::new(
                format!("baseline: bare `GlobSet::matches`, {n_paths} paths, same rules"),
                "ms",
                baseline,
            );
            let ratio = Row::new("", "×", ratios).median();
            let per_path_us = row.median() * 1000.0 / n_paths as f64;
            rows.push(row.note(format!(
                "{per_path_us:.2} µs per path; {hits} hits; {}× the baseline (median of per-round ratios)",
                fmt(ratio)
            )));
            rows.push(baseline_row);
        }
    }
    rows
}
