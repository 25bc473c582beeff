//! Finding edits made through a shell: what a hook adds to every call of a session, on a
//! repository of 10,000 tracked files with a few modified, against `git status` on the
//! same tree.
//!
//! Per call the hook takes a [`WorkTreeSnapshot`] (one `git status`, one `stat` per listed
//! path), reads the session's previous one from its JSON file, compares the two, and saves the
//! new one (temp file, fsync, rename). All of that is timed.

use std::time::Instant;

use cp_git::{Git, WorkTreeSnapshot};

use super::Options;
use super::common::{many_files_project, time_git_status};
use super::stats::{Row, ms};

pub fn shell_edits(opts: &Options) -> Vec<Row> {
    let (files, rounds) = if opts.quick { (300, 3) } else { (10_000, 9) };
    let (_repo, root) = many_files_project(files);
    // The agent's work so far: a few files modified.
    for i in 0..10 {
        let path = root.join(format!("src/d0/f{i}.rs"));
        std::fs::write(path, format!("// file {i}, changed\n")).unwrap();
    }
    let git = Git { path_env: None };
    let state = tempfile::tempdir().unwrap();
    let saved = state.path().join("snapshot.json");
    cp_base::write_atomic(
        &saved,
        serde_json::to_string(&WorkTreeSnapshot::take(&git, &root).unwrap())
            .unwrap()
            .as_bytes(),
    )
    .unwrap();

    let (mut detect, mut status, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // A shell command edited one more file since the last call.
        let edited = root.join(format!("src/d1/f{}.rs", 100 + round));
        std::fs::write(&edited, format!("// sed -i, round {round}\n")).unwrap();

        let started = Instant::now();
        let previous: WorkTreeSnapshot =
            serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
        let now = WorkTreeSnapshot::take(&git, &root).unwrap();
        let changed = now.changed_since(&previous, &root);
        cp_base::write_atomic(&saved, serde_json::to_string(&now).unwrap().as_bytes()).unwrap();
        let took = ms(started.elapsed());
        assert_eq!(changed, [format!("src/d1/f{}.rs", 100 + round)]);

        let git_status = time_git_status(&root);
        detect.push(took);
        status.push(git_status);
        ratios.push(took / git_status);
    }
    vec![
        Row::new(
            format!("shell-edit detection per hook call: {files} files, 10 modified"),
            "ms",
            detect,
        )
        .note("snapshot (git status + stat of listed paths), read the last one, compare, save atomically"),
        Row::new(
            "reference: `git status --porcelain -uall` on that repo",
            "ms",
            status,
        )
        .note("timed right after the detection in each round"),
        Row::new("shell-edit detection ÷ `git status` (same round)", "×", ratios)
            .note("what a shell call adds beyond the git status it needs"),
    ]
}
