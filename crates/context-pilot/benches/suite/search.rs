//! `File_grep` against ripgrep (`rg`) on the same generated tree, in the same run: 100k files
//! in 1,000 directories, with a `.gitignore` hiding a tenth of them; a pattern found in one
//! file in a thousand, so both tools walk and read everything. `File_grep` runs in process,
//! as the agent calls it; `rg --count` runs as a process, as a person types it.
//!
//! The `rg` is the one `scripts/install-bench-tools.sh` puts under `target/bench-tools/` (a
//! pinned ripgrep, built by `cargo install`); the group runs that script when it is missing,
//! so the baseline exists on a fresh machine without touching the system. Only when the
//! install fails (no network) is the comparison skipped, with a loud note saying why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use cp_base::{Module as _, Notifier, Project, ToolEnv, WorkerId};
use serde_json::json;

use super::Options;
use super::stats::{Row, time_ms};

pub fn grep_vs_rg(opts: &Options) -> Vec<Row> {
    let (files, rounds) = if opts.quick { (2_000, 3) } else { (100_000, 7) };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    generate(&root, files);
    let env = ToolEnv::new(Project::at(&root), WorkerId::default(), Notifier::new());
    let mut module = cp_mod_files::FilesModule;
    let args = json!({"pattern": "needle_[0-9]+", "output": "paths"});
    let mut grep_out = String::new();
    let grep = time_ms(rounds, || {
        let outcome = module.call_tool("File_grep", &args, &env);
        grep_out = format!("{outcome:?}");
    });
    let found = files / 1000;
    assert!(
        grep_out.contains(&format!("({found} matches)")) || grep_out.contains("matches)"),
        "File_grep found nothing: {grep_out}"
    );
    let grep_row = Row::new(
        format!("File_grep: {files} files, 1 in 1000 matching (paths output)"),
        "ms",
        grep,
    );
    let rg = match ripgrep(opts.quick) {
        Ok(rg) => rg,
        Err(why) => {
            eprintln!(
                "\n!!! search: no `rg` (ripgrep) baseline: {why}. The File_grep / rg ratio is NOT \
                 measured. Run `sh scripts/install-bench-tools.sh` and run again. !!!\n"
            );
            return vec![grep_row.note(format!("no rg baseline ({why}): ratio not measured"))];
        }
    };
    let version = Command::new(&rg)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.lines().next().map(str::to_owned))
        .unwrap_or_default();
    let rg = time_ms(rounds, || {
        let out = Command::new(&rg)
            .args(["--count", "needle_[0-9]+"])
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "rg failed");
    });
    let rg_row = Row::new(
        "baseline: `rg --count 'needle_[0-9]+'` on that tree",
        "ms",
        rg,
    )
    .note(format!(
        "{version}, from `scripts/install-bench-tools.sh` (target/bench-tools)"
    ));
    let ratio = grep_row.median() / rg_row.median();
    vec![
        grep_row.note(format!("ratio to rg (medians): {ratio:.2}; goal ≤ 1.0")),
        rg_row,
    ]
}

/// The pinned `rg` under `target/bench-tools/bin`, installed by the bench set-up
/// (`scripts/install-bench-tools.sh`) first if it is not there yet. A quick run (the smoke run
/// `cargo test` makes) never installs: building ripgrep takes minutes.
fn ripgrep(quick: bool) -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rg = root.join("target/bench-tools/bin/rg");
    let script = root.join("scripts/install-bench-tools.sh");
    if quick {
        return if rg.is_file() {
            Ok(rg)
        } else {
            Err(format!(
                "a quick run does not install it; {} is missing",
                rg.display()
            ))
        };
    }
    // The script returns at once when the pinned version is there, and installs it otherwise.
    eprintln!("search: the rg baseline: sh {}", script.display());
    let status = Command::new("sh")
        .arg(&script)
        .status()
        .map_err(|e| format!("`sh {}` could not start: {e}", script.display()))?;
    if !status.success() {
        return Err(format!("`sh {}` failed ({status})", script.display()));
    }
    if rg.is_file() {
        Ok(rg)
    } else {
        Err(format!("{} is missing after the install", rg.display()))
    }
}

/// `files` small source files in directories of 100, one in a thousand holding the needle,
/// a tenth of them gitignored, and one binary file per directory.
fn generate(root: &std::path::Path, files: usize) {
    std::fs::write(root.join(".gitignore"), "*.gen.rs\n").unwrap();
    let mut text = String::new();
    for i in 0..files {
        let dir = root.join(format!("src/d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("blob.bin"), b"needle_1\0\x01\x02binary").unwrap();
        }
        text.clear();
        for line in 0..12 {
            let _ = writeln!(
                text,
                "fn item_{i}_{line}(value: u64) -> u64 {{ value + {line} }}"
            );
        }
        if i % 1000 == 7 {
            let _ = writeln!(text, "// needle_{i}");
        }
        let name = if i % 10 == 3 {
            format!("f{i}.gen.rs")
        } else {
            format!("f{i}.rs")
        };
        std::fs::write(dir.join(name), &text).unwrap();
    }
}
